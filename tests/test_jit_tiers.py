"""Tiered execution (api/jit.py): the first calls of a signature run the generated NumPy code
while Numba compiles in a background thread; later calls run the compiled code. And the
dispatch fast path (flat arrays and scalars), which must never serve stale code.

The rest of the suite runs with TRANSPILE_TIERS=0 (conftest.py); here tiers are turned on per
function with jit(f, wait=False)."""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from transpile import jit
from transpile.errors import TranspileWarning
from transpile.compile.specialization import Compiled


def writes_and_prints(x, n):
    print("step", n)
    x[0] = x[0] + 1.0
    y = np.tanh(x) * 2.0 + n
    return np.sum(y * y)


def test_tiers_default_is_off_in_the_test_suite():
    assert os.environ.get("TRANSPILE_TIERS") == "0"
    from transpile.api.jit import tiers_enabled
    assert not tiers_enabled()


def test_first_call_runs_numpy_then_compiled_with_the_same_numbers_writes_and_prints(capfd):
    tiered = jit(writes_and_prints, wait=False)
    waited = jit(writes_and_prints, wait=True)
    xa = np.linspace(-1.0, 1.0, 7)
    xb = xa.copy()
    out_a = tiered(xa, 3)
    assert tiered.last_tier == "numpy"
    printed_numpy = capfd.readouterr().out
    out_b = waited(xb, 3)
    assert waited.last_tier == "compiled"
    printed_compiled = capfd.readouterr().out
    assert printed_numpy == printed_compiled == "step 3\n"
    np.testing.assert_allclose(out_a, out_b, rtol=1e-12)
    np.testing.assert_array_equal(xa, xb)       # the argument write happened once in both
    tiered.wait()
    out_a = tiered(xa, 3)
    assert tiered.last_tier == "compiled"
    assert capfd.readouterr().out == "step 3\n"
    out_b = waited(xb, 3)
    capfd.readouterr()
    np.testing.assert_allclose(out_a, out_b, rtol=1e-12)
    np.testing.assert_array_equal(xa, xb)
    (c,) = tiered._specs.values()
    assert isinstance(c, Compiled) and not c.eager and c.checked   # really compiled


def bump(x):
    x[...] = x + 1.0
    return x.sum()


def test_each_call_runs_the_function_exactly_once_across_tiers():
    j = jit(bump, wait=False)
    x = np.zeros(5)
    tiers = []
    for i in range(1, 40):
        j(x)
        tiers.append(j.last_tier)
        np.testing.assert_array_equal(x, np.full(5, float(i)))
        if i == 3:
            j.wait()
    assert tiers[0] == "numpy" and tiers[-1] == "compiled"
    assert j.compile_count == 1


def test_new_batch_size_runs_the_compiled_code_at_once():
    def f(x):
        return np.tanh(x) * 2.0
    j = jit(f, wait=False)
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(j(x), np.tanh(x) * 2.0, rtol=1e-12)
    assert j.last_tier == "numpy"
    j.wait()
    np.testing.assert_allclose(j(x), np.tanh(x) * 2.0, rtol=1e-12)
    assert j.last_tier == "compiled"
    # the code reads its sizes at run time: another length runs it at once, nothing compiles
    x = np.linspace(0.0, 1.0, 9)
    np.testing.assert_allclose(j(x), np.tanh(x) * 2.0, rtol=1e-12)
    assert j.last_tier == "compiled" and j.compile_count == 1
    # another dtype compiles behind the NumPy tier
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(j(x32), np.tanh(x32) * 2.0, rtol=1e-6)
    assert j.last_tier == "numpy"
    j.wait()
    assert j.compile_count == 2


def test_failing_background_compile_warns_once_and_numpy_keeps_running(monkeypatch):
    def broken(self, leaves, free=None):
        raise RuntimeError("simulated compiler crash")
    monkeypatch.setattr(Compiled, "precompile", broken)

    def f(x):
        return x * 3.0 + 1.0
    j = jit(f, wait=False)
    x = np.arange(4.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(10):
            np.testing.assert_array_equal(j(x), x * 3.0 + 1.0)
            assert j.last_tier == "numpy"
            if i == 2:
                j.wait()
    ours = [w for w in caught if issubclass(w.category, TranspileWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    assert "background" in str(ours[0].message) and "simulated compiler crash" in \
        str(ours[0].message)


def test_refused_construct_in_the_background_warns_once(monkeypatch):
    from transpile.lowering.cpu import module as numba_cpu

    def refuse(text, path, name):
        raise numba_cpu.Unlowerable(None, "a simulated construct")
    monkeypatch.setattr(numba_cpu, "compile_module", refuse)

    def f(x):
        return x + 1.0
    j = jit(f, wait=False)
    x = np.arange(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(6):
            np.testing.assert_array_equal(j(x), x + 1.0)
            if i == 1:
                j.wait()
    assert j.last_tier == "numpy"
    ours = [w for w in caught if issubclass(w.category, TranspileWarning)]
    assert len(ours) == 1 and "NumPy version" in str(ours[0].message)


def test_compile_ahead_of_time_then_first_call_is_compiled():
    def f(x, a):
        return x * a
    j = jit(f, wait=False).compile(np.ones(3), 2.0)
    assert j.compile_count == 1
    np.testing.assert_array_equal(j(np.ones(3), 2.0), np.full(3, 2.0))
    assert j.last_tier == "compiled"


# -- the dispatch fast path --------------------------------------------------------------------

SCALE = 2.0


def helper(x):
    return x + 1.0


def uses_globals(x):
    return helper(x) * SCALE


def test_fast_path_sees_rebound_globals(monkeypatch):
    j = jit(uses_globals, wait=True)
    x = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_array_equal(j(x), (x + 1.0) * 2.0)
    assert j._fast                                 # the fast path is in use
    monkeypatch.setitem(globals(), "SCALE", 5.0)
    np.testing.assert_array_equal(j(x), (x + 1.0) * 5.0)
    monkeypatch.setitem(globals(), "helper", lambda x: x - 1.0)
    np.testing.assert_array_equal(j(x), (x - 1.0) * 5.0)
    np.testing.assert_array_equal(j(x), (x - 1.0) * 5.0)


TABLE = np.arange(4.0)


def reads_table(x):
    return x * TABLE


def test_fast_path_sees_a_free_array_of_another_shape(monkeypatch):
    j = jit(reads_table, wait=True)
    np.testing.assert_array_equal(j(np.ones(4)), np.arange(4.0))
    np.testing.assert_array_equal(j(np.ones(4)), np.arange(4.0))
    monkeypatch.setitem(globals(), "TABLE", np.arange(2.0) + 1.0)
    np.testing.assert_array_equal(j(np.ones(2)), np.arange(2.0) + 1.0)
    monkeypatch.setitem(globals(), "TABLE", np.arange(4.0) * 2)    # same shape, new values
    np.testing.assert_array_equal(j(np.ones(4)), np.arange(4.0) * 2)


def test_fast_path_keeps_dtypes_and_keys_on_them():
    def f(x, a):
        return np.sum(x) * a
    j = jit(f, wait=True)
    for _ in range(3):
        r32 = j(np.ones(3, np.float32), np.float32(2.0))
        assert type(r32) is np.float32 and r32 == 6.0
        r64 = j(np.ones(3), 2.0)
        assert type(r64) is np.float64 and r64 == 6.0
        r_int = j(np.ones(3), 2)           # a Python int: a dynamic value, its own signature
        assert r_int == 6.0
        assert j(np.ones(3), 3) == 9.0     # no recompile per int value
    assert j.compile_count == 3


def test_fast_path_static_argument_values_key_the_cache():
    def f(x, mode):
        return x * 2.0 if mode == "double" else x
    j = jit(f, static_argnames="mode", wait=True)
    x = np.ones(2)
    for _ in range(3):
        np.testing.assert_array_equal(j(x, "double"), 2 * x)
        np.testing.assert_array_equal(j(x, "same"), x)
    assert len(j._fast) == 2 and j.compile_count == 2


def test_fast_path_bool_and_int_are_not_confused():
    def f(x, flag):
        return x + flag
    j = jit(f, wait=True)
    x = np.zeros(2)
    for _ in range(3):
        np.testing.assert_array_equal(j(x, True), x + 1)
        np.testing.assert_array_equal(j(x, 1), x + 1)
        np.testing.assert_array_equal(j(x, 2), x + 2)
        np.testing.assert_array_equal(j(x, False), x)


# -- two processes -----------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    from transpile import jit

    def kernel(x, a):
        y = np.tanh(x) * a
        x[0] = x[0] + 1.0
        return np.sum(y * y) + x[0]

    wait = sys.argv[1] == "wait"
    j = jit(kernel, wait=wait)
    start = float(sys.argv[2])
    while time.time() < start:          # both processes start compiling together
        time.sleep(0.001)
    x = np.linspace(-1.0, 1.0, 50)
    outs = []
    for i in range(int(sys.argv[3])):
        outs.append(float(j(x, 0.5)))
    j.wait()
    outs.append(float(j(x, 0.5)))
    (c,) = j._specs.values()
    print(json.dumps({"outs": outs, "x0": float(x[0]), "eager": c.eager,
                      "tier": j.last_tier, "path": c.plan.path}))
""")


def _expected(n):
    x = np.linspace(-1.0, 1.0, 50)
    outs = []
    for _ in range(n):
        y = np.tanh(x) * 0.5
        x[0] = x[0] + 1.0
        outs.append(float(np.sum(y * y) + x[0]))
    return outs, float(x[0])


@pytest.mark.parametrize("mode", ["wait", "tiered"])
def test_two_processes_compiling_the_same_function_at_once(tmp_path, mode):
    import time
    script = tmp_path / "two.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    start = time.time() + 4.0
    calls = 5
    procs = [subprocess.Popen([sys.executable, str(script), mode, repr(start), str(calls)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    want, x0 = _expected(calls + 1)
    for r in results:
        np.testing.assert_allclose(r["outs"], want, rtol=1e-12)   # each call ran once
        assert r["x0"] == x0
        assert not r["eager"] and r["tier"] == "compiled"
    # the entry both wrote is intact: a third process loads it (verified) and agrees
    from transpile_runtime import diskcache
    assert diskcache.verify(results[0]["path"])
    p = subprocess.run([sys.executable, str(script), "wait", "0", "1"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(r["outs"], _expected(2)[0], rtol=1e-12)
    assert not r["eager"]


def test_fast_path_pytrees_check_keys_shapes_and_structure():
    def f(p, x):
        return np.tanh(x * p["w"] + p["b"]) * p["s"]
    j = jit(f, wait=True)
    p = {"w": np.ones(3), "b": np.zeros(3), "s": 2.0}
    x = np.arange(3.0)
    for _ in range(3):
        np.testing.assert_allclose(j(p, x), np.tanh(x) * 2.0, rtol=1e-12)
    assert j._entry.compiled.tier == "compiled" and "type(a0) is dict" in j._entry.source
    q = {"w": np.ones(4), "b": np.zeros(4), "s": 3.0}           # another leaf shape
    np.testing.assert_allclose(j(q, np.arange(4.0)), np.tanh(np.arange(4.0)) * 3.0, rtol=1e-12)
    r = {"w": np.ones(3), "b": np.zeros(3), "t": 2.0}           # other keys: a clear error
    with pytest.raises(Exception):
        j(r, x)
    np.testing.assert_allclose(j(p, x), np.tanh(x) * 2.0, rtol=1e-12)
    p32 = {"w": np.ones(3, np.float32), "b": np.zeros(3, np.float32), "s": np.float32(2.0)}
    out = j(p32, x.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(j(p, x), np.tanh(x) * 2.0, rtol=1e-12)


def test_fast_path_tuple_outputs_and_value_and_grad():
    from transpile import value_and_grad

    def loss(p, x):
        return np.sum((x @ p["W"] + p["b"]) ** 2)
    j = jit(value_and_grad(loss), wait=True)
    p = {"W": np.ones((3, 2)), "b": np.zeros(2)}
    x = np.arange(6.0).reshape(2, 3)
    for _ in range(3):
        v, g = j(p, x)
        y = x @ p["W"] + p["b"]
        assert np.isclose(v, np.sum(y ** 2))
        np.testing.assert_allclose(g["W"], x.T @ (2 * y), rtol=1e-12)
        np.testing.assert_allclose(g["b"], (2 * y).sum(0), rtol=1e-12)
    assert j.last_tier == "compiled"


# -- parallel loops on a busy machine ----------------------------------------------------------

def test_adaptive_threads_keeps_the_faster_thread_count(monkeypatch):
    import time
    import numba
    from transpile.compile.specialization import AdaptiveThreads
    calls = []

    def fn(x):                        # slow with many threads, as on a busy machine
        calls.append(numba.get_num_threads())
        time.sleep(0.004 if numba.get_num_threads() > 1 else 0.0005)
        return x + 1
    monkeypatch.delenv("TRANSPILE_NUM_THREADS", raising=False)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", max(2, numba.config.NUMBA_NUM_THREADS))
    before = numba.get_num_threads()
    try:
        w = AdaptiveThreads(fn, 2)
        for i in range(10):
            assert w(i) == i + 1
        assert w.best == 1 and calls[-1] == 1 and set(calls[:4]) == {1, 2}
    finally:
        numba.set_num_threads(before)


def test_transpile_num_threads_one_makes_loops_serial(monkeypatch):
    monkeypatch.setenv("TRANSPILE_NUM_THREADS", "1")

    def f(x):
        return np.tanh(x) * 2.0 + 1.0
    x = np.linspace(-1, 1, 1 << 19)
    j = jit(f, wait=True)
    np.testing.assert_allclose(j(x), np.tanh(x) * 2.0 + 1.0, rtol=1e-12, atol=1e-14)
    assert "parallel=True" not in j.source_for(x)
    import numba
    if numba.config.NUMBA_NUM_THREADS > 1:
        monkeypatch.delenv("TRANSPILE_NUM_THREADS")
        assert "parallel=True" in jit(f, wait=True).source_for(x)


# -- compile less ------------------------------------------------------------------------------

def two_layers(x, W1, b1, W2, b2):
    h = np.tanh(x @ W1 + b1)
    return np.tanh(h @ W2 + b2)


def test_the_same_fused_loop_twice_is_one_kernel():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4))
    W1, W2 = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    b1, b2 = rng.standard_normal(4), rng.standard_normal(4)
    j = jit(two_layers, wait=True)
    np.testing.assert_allclose(j(x, W1, b1, W2, b2), two_layers(x, W1, b1, W2, b2),
                               rtol=1e-12, atol=1e-14)
    assert j.last_tier == "compiled"
    text = j.source_for(x, W1, b1, W2, b2)
    kernels = [l for l in text.splitlines() if l.startswith("def ") and "__fused" in l]
    assert len(kernels) == 1, kernels
    name = kernels[0][4:kernels[0].index("(")]
    assert text.count(f"    {name}(") == 2
    # a different loop (another scale) is not merged
    W3 = rng.standard_normal((4, 3))
    j2 = jit(lambda x, W1, b1, W3: np.tanh(np.tanh(x @ W1 + b1) @ W3 * 2.0), wait=True)
    text2 = j2.source_for(x, W1, b1, W3)
    assert sum(1 for l in text2.splitlines() if l.startswith("def ") and "__fused" in l) == 2
    np.testing.assert_allclose(j2(x, W1, b1, W3), np.tanh(np.tanh(x @ W1 + b1) @ W3 * 2.0),
                               rtol=1e-12, atol=1e-14)


FORK_SCRIPT = textwrap.dedent("""
    import os
    import numpy as np
    from transpile import jit

    def f(x):
        return np.tanh(x) * 2.0 + np.sum(x)

    j = jit(f, wait=False)
    x = np.ones(5)
    j(x)                                  # a background compile runs now
    pid = os.fork()
    if pid == 0:                          # the child compiles something else, then calls j
        g = jit(lambda y: y * 3.0, wait=True)
        ok = np.allclose(g(x), 3.0) and np.allclose(j(x), f(x))
        os._exit(0 if ok else 3)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
""")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_while_compiling_in_the_background_does_not_hang_the_child(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(FORK_SCRIPT)
    env = dict(os.environ, TRANSPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "0"


def test_fast_path_for_calls_that_leave_out_defaulted_arguments():
    # a call that leaves out trailing arguments with defaults took the full path (binding the
    # signature, flattening, building the key: ~50-100 us a call, 50x numba.njit on the
    # corpus' secant_root); the entry now holds the defaults
    def f(x, scale=2.0, k=3, mode="sum"):
        y = x * scale + k
        return np.sum(y) if mode == "sum" else np.max(y)
    j = jit(f, wait=True)
    x = np.arange(4.0)
    for _ in range(3):
        assert j(x) == f(x)
    assert j._entry.compiled.tier == "compiled" and "DEFAULT" in j._entry.source
    assert j(x, 1.0) == f(x, 1.0)                   # more arguments: their own entry
    assert j(x, 1.0, 5) == f(x, 1.0, 5)
    assert j(x, 1.0, 5, "max") == f(x, 1.0, 5, "max")
    assert j(x, mode="max") == f(x, mode="max")     # keywords: by position, defaults between
    assert j(x) == f(x)
    assert j(np.arange(5.0)) == f(np.arange(5.0))   # another shape through the defaults' entry
    assert j(x.astype(np.float32)) == f(x.astype(np.float32))


def test_keyword_calls_take_the_fast_path_by_position():
    # f(x, w, lr=0.5) took the full path on every call (binding the signature: tens of us);
    # keywords now map to positions, skipped parameters to their defaults
    def step(x, w, lr=0.1, decay=0.0):
        return x - lr * (w + decay * x)
    j = jit(step, wait=True)
    x, w = np.arange(4.0), np.full(4, 2.0)
    calls = [((x, w), {"lr": 0.5}), ((x,), {"w": w, "decay": 0.25}), ((), {"w": w, "x": x}),
             ((x, w), {"decay": 0.5})]
    full_path = j._call
    for args, kw in calls:
        j._call = full_path
        for _ in range(2):
            np.testing.assert_array_equal(j(*args, **kw), step(*args, **kw))
        assert j._entry.compiled.tier == "compiled"

        def refused(*a):
            raise AssertionError("took the full path")
        j._call = refused
        np.testing.assert_array_equal(j(*args, **kw), step(*args, **kw))
    j._call = full_path
    for args, kw, msg in [((x, w), {"x": x}, "multiple values"),
                          ((x, w), {"rate": 1.0}, "unexpected keyword"),
                          ((x,), {"lr": 1.0}, "missing a required argument")]:
        with pytest.raises(TypeError, match=msg):
            j(*args, **kw)
