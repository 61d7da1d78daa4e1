"""tests/worker_recycling.py: xdist workers past the memory limit are replaced between tests,
and every test still runs exactly once."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

GROWING_TESTS = textwrap.dedent("""
    import os
    import pytest

    KEPT = []      # memory a worker never gives back, like Numba's compiled code

    def _alive(pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                return "zombie" not in f.read()
        except OSError:
            return False

    @pytest.mark.parametrize("i", range(90))
    def test_grows(i):
        KEPT.append(bytearray(os.urandom(1)) * (30 * 2 ** 20))
        seen = {int(n.split(".")[1]) for n in os.listdir(os.environ["RUN_LOG"])} | {os.getpid()}
        alive = sum(_alive(p) for p in seen)
        with open(os.path.join(os.environ["RUN_LOG"], f"{i}.{os.getpid()}.{alive}"), "w") as f:
            f.write(os.environ.get("PYTEST_XDIST_WORKER", "none"))
""")


def _run(tmp_path, limit_mb):
    (tmp_path / "test_growing.py").write_text(GROWING_TESTS)
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {HERE!r})\n"
        "from worker_recycling import (pytest_configure, pytest_runtest_logreport,\n"
        "                              pytest_runtest_makereport, pytest_terminal_summary,\n"
        "                              pytest_testnodedown)\n")
    log = tmp_path / "log"
    log.mkdir()
    env = dict(os.environ, RUN_LOG=str(log), TRANSPILE_TEST_WORKER_MB=str(limit_mb),
               TRANSPILE_TEST_MIN_QUEUED="20")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                        "-o", "addopts=", str(tmp_path)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    runs = sorted(os.listdir(log))
    return p, runs


def test_workers_past_the_limit_are_replaced_and_every_test_runs_once(tmp_path):
    p, runs = _run(tmp_path, limit_mb=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "90 passed" in p.stdout
    tests = sorted(int(r.split(".")[0]) for r in runs)
    assert tests == list(range(90))                 # each test once, none lost
    pids = {r.split(".")[1] for r in runs}
    assert len(pids) > 2                            # workers were replaced
    # a replaced worker's process ends: the two workers and at most two leaving (xdist alone
    # kept every finished worker's process, and its memory, to the end of the run)
    assert max(int(r.split(".")[2]) for r in runs) <= 4
    assert "xdist workers replaced past 300 MB of memory" in p.stdout


def test_no_replacement_under_the_limit(tmp_path):
    p, runs = _run(tmp_path, limit_mb=10 ** 6)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert sorted(int(r.split(".")[0]) for r in runs) == list(range(90))
    assert len({r.split(".")[1] for r in runs}) == 2
