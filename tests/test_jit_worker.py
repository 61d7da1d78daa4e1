"""Tiers with the compile in a worker process (compile/worker.py, runtime/compile_worker.py):
the worker compiles the lowered module into Numba's disk cache, the calling process then loads
it (a cache hit, counted by Numba's dispatcher statistics, not timed). A worker that dies or
that Numba refuses leaves the NumPy tier running with one warning; one that cannot run at all
leaves the compile to the thread; TRANSPILE_COMPILE_WORKER=0 selects the thread.

Tiers are turned on per function (jit(f, wait=False)); the suite's default is TRANSPILE_TIERS=0."""
import json
import os
import time
import subprocess
import sys
import textwrap
import warnings

import numba
import numpy as np
import pytest

from transpile import jit
from transpile.compile import worker as compile_worker
from transpile.errors import TranspileWarning
from transpile_runtime import compile_worker as runtime_worker
from transpile_runtime import diskcache


@pytest.fixture(autouse=True)
def worker_on(monkeypatch):
    monkeypatch.setenv("TRANSPILE_COMPILE_WORKER", "1")
    monkeypatch.setitem(compile_worker._STATE, "broken", False)


def kernel(x, a):
    y = np.tanh(x) * a
    x[0] = x[0] + 1.0
    return np.sum(y * y) + x[0]


def _reference(x, a, n):
    x = x.copy()
    outs = []
    for _ in range(n):
        y = np.tanh(x) * a
        x[0] = x[0] + 1.0
        outs.append(np.sum(y * y) + x[0])
    return outs, x


def _only_spec(j):
    (c,) = j._specs.values()
    return c


def test_worker_compiles_then_the_caller_loads_it_from_the_cache_with_the_same_numbers():
    j = jit(kernel, wait=False)
    x = np.linspace(-1.0, 1.0, 9)
    want, x_want = _reference(x, 0.5, 4)
    outs = [j(x, 0.5)]
    assert j.last_tier == "numpy"
    j.wait()
    outs += [j(x, 0.5) for _ in range(3)]
    assert j.last_tier == "compiled"
    np.testing.assert_allclose(outs, want, rtol=1e-12)
    np.testing.assert_array_equal(x, x_want)       # each call wrote the argument once
    c = _only_spec(j)
    assert not c.eager and c.checked
    # the worker compiled the entry; this process loaded it from the disk cache
    assert c.worker == {"compiled": 1, "loaded": 0, "cache_hits": 1, "compiled_here": 0}
    assert j.compile_count == 1
    assert diskcache.verify(c.plan.path)


def layouts(xc, xf, xa, r, s, n, t):
    return np.sum(xc * s) + np.sum(xf) + np.sum(xa) + np.sum(r) * n + t


def test_argument_types_described_without_numba_give_a_cache_hit():
    """Layouts (C, Fortran, strided), a read-only array, float, int and float32 scalars: the
    types the worker compiles are the ones the caller's call has (else the caller would
    compile again: compiled_here)."""
    base = np.arange(12.0).reshape(3, 4)
    r = np.arange(3.0)
    r.flags.writeable = False
    args = (base, np.asfortranarray(base), base[:, ::2], r, 2.0, 3, np.float32(0.5))
    j = jit(layouts, wait=False)
    first = j(*args)
    j.wait()
    second = j(*args)
    assert j.last_tier == "compiled"
    want = layouts(*args)
    np.testing.assert_allclose([first, second], [want, want], rtol=1e-12)
    c = _only_spec(j)
    assert c.worker["compiled"] == 1 and c.worker["cache_hits"] == 1
    assert c.worker["compiled_here"] == 0


@pytest.mark.parametrize("value", [
    np.zeros((3, 4), "f4"), np.zeros((3, 4))[:, ::2], np.asfortranarray(np.zeros((3, 4))),
    np.zeros((1, 1)), np.zeros((0, 3)), np.zeros(5, "c8")[::2], np.zeros(4, "i2"),
    np.zeros(3, bool), 1.5, 3, -(1 << 63), (1 << 63) + 1, True, 1j, np.float32(2), np.int8(3),
    np.bool_(True), np.uint64(7), (1, 2.0), (np.zeros(2), 1.0), (), None])
def test_described_types_are_numba_typeof(value):
    d = runtime_worker.describe([value])
    assert runtime_worker.numba_types(d[1]) == (numba.typeof(value),)


def test_readonly_array_is_described_readonly():
    r = np.zeros(3)
    r.flags.writeable = False
    (t,) = runtime_worker.numba_types(runtime_worker.describe([r])[1])
    assert t == numba.typeof(r) and t.mutable is False


def test_undescribable_types_refuse():
    for v in (np.random.default_rng(0), "text", [1.0], np.zeros(2, "datetime64[s]")):
        with pytest.raises(TypeError):
            runtime_worker.describe([v])


def _worker_boot(monkeypatch, code):
    monkeypatch.setattr(runtime_worker, "BOOT", code)


def test_a_killed_worker_leaves_numpy_running_with_one_warning(monkeypatch):
    _worker_boot(monkeypatch, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")

    def f(x):
        return np.exp(x) * 2.0 - 1.0
    j = jit(f, wait=False)
    x = np.linspace(0.0, 1.0, 6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(8):
            np.testing.assert_allclose(j(x), np.exp(x) * 2.0 - 1.0, rtol=1e-15)
            assert j.last_tier == "numpy"
            if i == 1:
                j.wait()
    ours = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    assert len(ours) == 1, ours
    assert "worker process" in ours[0] and "signal 9" in ours[0] and "NumPy" in ours[0]
    assert not j._specs          # nothing compiled in this process either


REFUSING_WORKER = textwrap.dedent("""
    import json, pickle, sys
    req = pickle.loads(sys.stdin.buffer.read())
    lines = open(req["path"]).read().splitlines()
    k = next(i for i, l in enumerate(lines) if l.strip().startswith("return")) + 1
    print(json.dumps({"ok": False, "numba": True, "type": "TypingError",
                      "error": "Failed in nopython mode pipeline (step: nopython frontend)\\n"
                               "simulated\\n\\nFile \\"" + req["path"] + "\\", line "
                               + str(k) + ":\\n"}))
""")


def test_numba_refusing_in_the_worker_names_the_construct_once(monkeypatch):
    _worker_boot(monkeypatch, REFUSING_WORKER)

    def f(x):
        return x * 4.0 + 1.0
    j = jit(f, wait=False)
    x = np.arange(5.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(6):
            np.testing.assert_array_equal(j(x), x * 4.0 + 1.0)
            if i == 1:
                j.wait()
    assert j.last_tier == "numpy"
    ours = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    assert len(ours) == 1, ours
    assert "Construct refused: return" in ours[0]
    c = _only_spec(j)
    assert c.eager and c.worker is None


def kernel_b(x, a):
    y = np.tanh(x) * a
    x[0] = x[0] + 1.0
    return np.sum(y * y) + x[0] + 0.0


def kernel_c(x, a):
    y = np.tanh(x) * a
    x[0] = x[0] + 1.0
    return np.sum(y * y) + x[0] - 0.0


def test_a_worker_that_cannot_run_leaves_the_compile_to_the_thread(monkeypatch):
    _worker_boot(monkeypatch, "raise SystemExit(1)")
    j = jit(kernel_b, wait=False)     # (a function of its own: nothing compiled for it yet)
    x = np.linspace(-1.0, 1.0, 9)
    want, _ = _reference(x, 0.5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        outs = [j(x, 0.5)]
        j.wait()
        outs += [j(x, 0.5), j(x, 0.5)]
    np.testing.assert_allclose(outs, want, rtol=1e-12)
    assert j.last_tier == "compiled"
    c = _only_spec(j)
    assert c.worker is None and not c.eager
    assert compile_worker._STATE["broken"]          # no other worker is tried


def test_worker_off_compiles_in_the_thread(monkeypatch):
    monkeypatch.setenv("TRANSPILE_COMPILE_WORKER", "0")
    spawned = []
    monkeypatch.setattr(runtime_worker, "spawn", lambda: spawned.append(1))
    j = jit(kernel_c, wait=False)
    x = np.linspace(-1.0, 1.0, 9)
    j(x, 0.5)
    j.wait()
    j(x, 0.5)
    c = _only_spec(j)
    assert j.last_tier == "compiled" and c.worker is None and not spawned
    assert sum(c.fn.stats.cache_misses.values()) == 1       # compiled here


TWO = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from transpile import jit

    def kernel(x, a):
        y = np.tanh(x) * a
        x[0] = x[0] + 1.0
        return np.sum(y * y) + x[0]

    j = jit(kernel, wait=False)
    start = float(sys.argv[1])
    while time.time() < start:          # both processes start their workers together
        time.sleep(0.001)
    x = np.linspace(-1.0, 1.0, 50)
    outs = [float(j(x, 0.5))]
    j.wait()
    outs.append(float(j(x, 0.5)))
    (c,) = j._specs.values()
    print(json.dumps({"outs": outs, "tier": j.last_tier, "worker": c.worker,
                      "path": c.plan.path}))
""")


def test_two_processes_with_workers_compile_once(tmp_path):
    import time
    script = tmp_path / "two.py"
    script.write_text(TWO)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"), TRANSPILE_TIERS="1",
               TRANSPILE_COMPILE_WORKER="1", PYTHONPATH=os.pathsep.join(sys.path))
    start = time.time() + 4.0
    procs = [subprocess.Popen([sys.executable, str(script), repr(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    x = np.linspace(-1.0, 1.0, 50)
    want, _ = _reference(x, 0.5, 2)
    for r in results:
        np.testing.assert_allclose(r["outs"], want, rtol=1e-12)
        assert r["tier"] == "compiled"
        assert r["worker"]["cache_hits"] == 1 and r["worker"]["compiled_here"] == 0
    assert results[0]["path"] == results[1]["path"]
    # the entry lock: one worker compiled, the other loaded what it compiled
    assert sorted(r["worker"]["compiled"] for r in results) == [0, 1]
    assert sorted(r["worker"]["loaded"] for r in results) == [0, 1]
    assert diskcache.verify(results[0]["path"])


EXITS = textwrap.dedent("""
    import json, sys
    import numpy as np
    from transpile import jit

    def f(x):
        return np.tanh(x) * 3.0 + np.sum(x * x)

    load = sys.argv[1] == "load"
    j = jit(f, wait=load)
    x = np.linspace(-1.0, 1.0, 20)
    out = j(x)
    res = {"tier": j.last_tier, "out": out.tolist()}
    if load:        # (the same file: the same lowered module, whose header names it)
        (c,) = j._specs.values()
        res.update(hits=sum(c.fn.stats.cache_hits.values()),
                   misses=sum(c.fn.stats.cache_misses.values()))
    print(json.dumps(res))
""")


def test_exit_leaves_the_worker_to_fill_the_cache(tmp_path):
    """A program that ends while its worker compiles exits (it does not wait for the worker);
    the worker finishes and records the entry, so the next process loads it."""
    import time
    cache = tmp_path / "cache"
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(cache), TRANSPILE_TIERS="1",
               TRANSPILE_COMPILE_WORKER="1", PYTHONPATH=os.pathsep.join(sys.path))
    (tmp_path / "exits.py").write_text(EXITS)
    p = subprocess.run([sys.executable, str(tmp_path / "exits.py"), "exit"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    x = np.linspace(-1.0, 1.0, 20)
    want = np.tanh(x) * 3.0 + np.sum(x * x)
    assert r["tier"] == "numpy"
    np.testing.assert_allclose(r["out"], want, rtol=1e-12)
    jit_dir = cache / "jit"
    deadline = time.time() + 300
    while time.time() < deadline and not list(jit_dir.glob("f__*.manifest")):
        time.sleep(0.2)
    assert list(jit_dir.glob("f__*.manifest")), "the worker did not finish the entry"
    time.sleep(0.5)                  # (the manifest is written last, under the entry lock)
    p = subprocess.run([sys.executable, str(tmp_path / "exits.py"), "load"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["hits"] == 1 and r["misses"] == 0
    np.testing.assert_allclose(r["out"], want, rtol=1e-12)


def kernel_d(x, a):
    return np.tanh(x) * a + 2.0


def test_numpy_blas_threads_are_restored_after_the_worker():
    """A worker takes a core: NumPy's BLAS runs one thread fewer while the first worker
    runs, and gets its threads back when the last one ends."""
    deadline = time.monotonic() + 120
    while compile_worker._CORES["workers"] and time.monotonic() < deadline:
        time.sleep(0.1)     # (a worker of an earlier test may still be compiling)
    assert compile_worker._CORES["workers"] == 0, "an earlier test's worker never finished"
    before = [lib.num_threads for lib in compile_worker._numpy_blas()]
    compile_worker._take_core()
    try:
        during = [lib.num_threads for lib in compile_worker._numpy_blas()]
    finally:
        compile_worker._give_back_core()
    assert during == [max(1, n - 1) for n in before]       # one core fewer while it compiles
    assert [lib.num_threads for lib in compile_worker._numpy_blas()] == before
    j = jit(kernel_d, wait=False)
    x = np.linspace(-1.0, 1.0, 9)
    j(x, 0.5)
    j.wait()
    np.testing.assert_allclose(j(x, 0.5), np.tanh(x) * 0.5 + 2.0, rtol=1e-15)
    assert j.last_tier == "compiled"
    assert [lib.num_threads for lib in compile_worker._numpy_blas()] == before


def kernel_e(x):
    return np.cos(x) * 2.0 - x


def kernel_f(x):
    return np.sin(x) * 3.0 + x


def test_several_signatures_compiling_at_once_all_arrive():
    """Workers at once are limited (one core stays for the caller); the others take turns."""
    je, jf = jit(kernel_e, wait=False), jit(kernel_f, wait=False)
    xs = [np.linspace(0.0, 1.0, n) for n in (5, 1)]       # (size 1: a signature of its own)
    for x in xs:
        je(x)
        jf(x)
    je.wait()
    jf.wait()
    for x in xs:
        np.testing.assert_allclose(je(x), np.cos(x) * 2.0 - x, rtol=1e-15)
        assert je.last_tier == "compiled"
        np.testing.assert_allclose(jf(x), np.sin(x) * 3.0 + x, rtol=1e-15)
        assert jf.last_tier == "compiled"
    workers = [c.worker for j in (je, jf) for c in j._specs.values()]
    assert all(w is not None and w["cache_hits"] == 1 and w["compiled_here"] == 0
               for w in workers), workers
    assert compile_worker._SLOTS._value == max(1, (os.cpu_count() or 2) - 1)   # all returned


def kernel_g(x, a):
    x[1] = a
    return np.exp(x) - a


def test_preparing_to_load_while_the_worker_compiles_still_gives_a_cache_hit(monkeypatch):
    monkeypatch.setattr(compile_worker, "PREPARE_AFTER", 0.0)    # prepare at once
    j = jit(kernel_g, wait=False)
    x = np.linspace(0.0, 1.0, 4)
    x2 = x.copy()
    outs = [j(x, 0.25)]
    j.wait()
    outs.append(j(x, 0.25))
    assert j.last_tier == "compiled"
    for _ in range(2):
        x2[1] = 0.25
        want = np.exp(x2) - 0.25
        np.testing.assert_allclose(outs.pop(0), want, rtol=1e-15)
    np.testing.assert_array_equal(x, x2)
    assert _only_spec(j).worker == {"compiled": 1, "loaded": 0, "cache_hits": 1,
                                    "compiled_here": 0}


# -- the spare worker started at jit(f) ---------------------------------------------------------

def spare_kernel_a(x, a):        # (each test compiles a function of its own: nothing cached)
    y = np.sin(x) * a
    x[0] = x[0] + 1.0
    return np.sum(y * y) + x[0]


def spare_kernel_b(x, a):
    y = np.cos(x) * a
    x[0] = x[0] + 1.0
    return np.sum(y * y) + x[0]


def _spare_reference(f, x, a, n):
    x = x.copy()
    outs = [f(x, a) for _ in range(n)]
    return outs, x


def test_the_worker_started_at_jit_serves_the_first_compile():
    compile_worker.drop_spare()
    used = compile_worker._SPARE["used"]
    j = jit(spare_kernel_a, wait=False)   # starts the spare: it imports Numba from now on
    spare = compile_worker._SPARE["proc"]
    assert spare is not None and spare.poll() is None
    x = np.linspace(-1.0, 1.0, 9)
    want, x_want = _spare_reference(spare_kernel_a, x, 0.5, 3)
    outs = [j(x, 0.5)]
    j.wait()
    outs += [j(x, 0.5) for _ in range(2)]
    assert j.last_tier == "compiled"
    np.testing.assert_allclose(outs, want, rtol=1e-12)
    np.testing.assert_array_equal(x, x_want)
    assert compile_worker._SPARE["used"] == used + 1 and compile_worker._SPARE["proc"] is None
    assert spare.returncode == 0                  # it compiled and ended
    c = _only_spec(j)
    assert c.worker == {"compiled": 1, "loaded": 0, "cache_hits": 1, "compiled_here": 0}


def test_a_spare_started_in_another_environment_is_not_used(monkeypatch):
    compile_worker.drop_spare()
    used = compile_worker._SPARE["used"]
    j = jit(spare_kernel_b, wait=False)
    spare = compile_worker._SPARE["proc"]
    assert spare is not None
    # the program changes what a worker would inherit before its first call
    monkeypatch.setenv("TRANSPILE_TEST_SPARE_MARK", "changed")
    x = np.linspace(-1.0, 1.0, 9)
    j(x, 0.5)
    j.wait()
    j(x, 0.5)
    assert j.last_tier == "compiled"
    assert compile_worker._SPARE["used"] == used      # a fresh worker compiled instead
    assert spare.poll() is not None                   # the stale spare was ended
    assert _only_spec(j).worker == {"compiled": 1, "loaded": 0, "cache_hits": 1,
                                    "compiled_here": 0}


def test_tiers_off_start_no_spare(monkeypatch):
    compile_worker.drop_spare()
    jit(kernel, wait=True)
    monkeypatch.setenv("TRANSPILE_TIERS", "0")
    jit(kernel)
    assert compile_worker._SPARE["proc"] is None
