"""`transpile show` colours its output on a terminal (pygments is an install dependency) and
prints plain text when piped or when NO_COLOR is set."""
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX-only")

MODEL = textwrap.dedent("""
    import numpy as np

    def sum_logistic(x):
        return np.sum(1.0 / (1.0 + np.exp(-x)))
""")


def _run_on_pty(args, env):
    """Run the CLI with stdout and stderr on a pseudo-terminal; returns (status, output)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "transpile", *args], stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:            # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return p.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def test_show_colours_on_a_terminal(model):
    rc, out = _run_on_pty(["show", str(model), "-f", "sum_logistic", "-t", "grad"], _env())
    assert rc == 0, out
    assert "\x1b[" in out                                   # ANSI colour codes
    plain = __import__("re").sub(r"\x1b\[[0-9;]*m", "", out)
    assert "def sum_logistic__grad(x):" in plain


def test_show_is_plain_when_piped_or_no_color(model):
    args = [sys.executable, "-m", "transpile", "show", str(model), "-f", "sum_logistic", "-t",
            "grad"]
    p = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert "def sum_logistic__grad(x):" in p.stdout and "\x1b[" not in p.stdout
    rc, out = _run_on_pty(args[3:], _env(NO_COLOR="1"))
    assert rc == 0 and "def sum_logistic__grad(x):" in out and "\x1b[" not in out


def test_pygments_is_an_install_dependency():
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(REPO, "setup.cfg"))
    requires = cfg["options"]["install_requires"].split()
    assert any(r.startswith("pygments") for r in requires)
