"""pmap on 4 virtual CPU devices, its collectives, its errors, and the mpirun path."""
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from transpile_runtime import devices as rd
from transpile.api.pmap import (all_gather, axis_index, axis_size, device_count, devices,
                            local_device_count, pmap, pmax, pmean, pmin, psum,
                            set_shard_compiler)
from transpile_runtime.collectives import CollectiveError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True, scope="module")
def four_cpu_devices():
    rd.reset_cpu_devices(4)
    yield
    rd.reset_cpu_devices(None)


def call_with_timeout(fn, seconds=20):
    """Run fn() on a helper thread; fail the test (instead of hanging) if it does not end."""
    box = {}

    def body():
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"pmap did not finish within {seconds}s (deadlock?)"
    if "error" in box:
        raise box["error"]
    return box["value"]


# ---------------------------------------------------------------- devices

def test_device_counts():
    assert device_count() == 4
    assert local_device_count() == 4
    assert [d.id for d in devices()] == [0, 1, 2, 3]
    assert repr(devices()[2]) == "cpu:2"


def test_env_var_sets_cpu_device_count(monkeypatch):
    monkeypatch.setenv("TRANSPILE_CPU_DEVICES", "3")
    rd.reset_cpu_devices()
    try:
        assert device_count() == 3
    finally:
        rd.reset_cpu_devices(4)


def test_no_gpu_without_cupy_or_device():
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert rd.gpu_devices() == []
        with pytest.raises(RuntimeError, match="no GPU"):
            devices("gpu")


def test_each_shard_runs_on_its_own_worker_thread():
    seen = {}

    def f(x):
        seen[int(axis_index("i"))] = threading.current_thread().name
        return x

    pmap(f, axis_name="i")(np.arange(4.0))
    assert len(set(seen.values())) == 4
    assert all(seen[k].startswith(f"transpile-cpu:{k}") for k in range(4))


# ---------------------------------------------------------------- seed examples

def test_normalize_by_psum():
    out = pmap(lambda x: x / psum(x, "i"), axis_name="i")(np.arange(4.0))
    np.testing.assert_allclose(out, [0, 1 / 6, 2 / 6, 3 / 6])


def test_pmap_np_add_two_arrays():
    a = np.arange(12.0).reshape(4, 3)
    b = np.ones((4, 3))
    np.testing.assert_array_equal(pmap(np.add)(a, b), a + b)


def test_pmap_np_mean():
    x = np.random.default_rng(0).normal(size=(3, 5))
    np.testing.assert_allclose(pmap(np.mean)(x), x.mean(axis=1))


def test_matmul_per_device():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 8, 6))
    b = rng.normal(size=(4, 6, 5))
    np.testing.assert_allclose(pmap(np.matmul)(a, b), a @ b)


def test_bare_decorator_and_float32_kept():
    @pmap
    def double(x):
        return 2 * x

    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = double(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, 2 * x)
    assert double.__name__ == "double"


def test_decorator_with_arguments():
    @pmap(axis_name="d")
    def center(x):
        return x - pmean(x, "d")

    np.testing.assert_allclose(center(np.arange(4.0)), np.arange(4.0) - 1.5)


# ---------------------------------------------------------------- collectives

def test_all_gather_and_axis_index():
    def f(x):
        return all_gather(x, "i"), axis_index("i"), axis_size("i")

    gathered, index, size = pmap(f, axis_name="i")(np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(gathered, np.broadcast_to(np.arange(6.0).reshape(3, 2), (3, 3, 2)))
    np.testing.assert_array_equal(index, [0, 1, 2])
    np.testing.assert_array_equal(size, [3, 3, 3])


def test_all_gather_tiled():
    out = pmap(lambda x: all_gather(x, "i", tiled=True), axis_name="i")(np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(out, np.tile(np.arange(8.0), (4, 1)))


def test_pmax_pmin_pmean():
    x = np.array([3.0, -1.0, 7.0, 2.0])
    f = pmap(lambda v: (pmax(v, "i"), pmin(v, "i"), pmean(v, "i")), axis_name="i")
    hi, lo, mean = f(x)
    np.testing.assert_array_equal(hi, [7.0] * 4)
    np.testing.assert_array_equal(lo, [-1.0] * 4)
    np.testing.assert_allclose(mean, [2.75] * 4)


def test_psum_over_pytree():
    tree = {"w": np.arange(8.0).reshape(4, 2), "b": (np.arange(4.0), np.ones((4, 3), np.float32))}
    out = pmap(lambda t: psum(t, "i"), axis_name="i")(tree)
    np.testing.assert_array_equal(out["w"], np.tile([12.0, 16.0], (4, 1)))
    np.testing.assert_array_equal(out["b"][0], [6.0] * 4)
    assert out["b"][1].dtype == np.float32
    np.testing.assert_array_equal(out["b"][1], np.full((4, 3), 4.0))


def test_results_identical_on_all_shards_and_deterministic():
    x = np.random.default_rng(2).normal(size=(4, 1000)) * 10.0 ** np.arange(4)[:, None]
    f = pmap(lambda v: psum(v, "i"), axis_name="i")
    first = f(x)
    expected = ((x[0] + x[1]) + x[2]) + x[3]  # shard order, whatever the arrival order
    for _ in range(5):
        again = f(x)
        np.testing.assert_array_equal(again, first)
    for k in range(4):
        np.testing.assert_array_equal(first[k], expected)


def test_arrival_order_does_not_change_result():
    x = np.random.default_rng(3).normal(size=(4, 100))

    def f(v):
        time.sleep(0.01 * (3 - int(axis_index("i"))))  # last shard arrives first
        return psum(v, "i")

    out = pmap(f, axis_name="i")(x)
    np.testing.assert_array_equal(out[0], ((x[0] + x[1]) + x[2]) + x[3])


def test_many_collectives_in_a_row():
    def f(x):
        for _ in range(50):
            x = x - pmean(x, "i") + psum(np.ones_like(x), "i") / 4
        return x

    x = np.arange(4.0)
    np.testing.assert_allclose(pmap(f, axis_name="i")(x), x - 1.5 + 1.0, atol=1e-12)


def test_nested_pmap_axis_names():
    x = np.arange(4.0).reshape(2, 2)  # [[0, 1], [2, 3]]

    def inner(v):
        return psum(v, "i"), psum(v, "j"), psum(v, ("i", "j")), axis_index(("i", "j"))

    f = pmap(pmap(inner, axis_name="j"), axis_name="i")
    over_i, over_j, over_both, index = f(x)
    np.testing.assert_array_equal(over_i, [[2, 4], [2, 4]])
    np.testing.assert_array_equal(over_j, [[1, 1], [5, 5]])
    np.testing.assert_array_equal(over_both, np.full((2, 2), 6.0))
    np.testing.assert_array_equal(index, [[0, 1], [2, 3]])


def test_nested_all_gather_over_outer_axis():
    x = np.arange(4.0).reshape(2, 2)
    f = pmap(pmap(lambda v: all_gather(v, "i"), axis_name="j"), axis_name="i")
    out = f(x)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(out[i, j], x[:, j])


# ---------------------------------------------------------------- axes, pytrees, static args

def test_in_axes_none_broadcasts_and_out_axes():
    x = np.arange(12.0).reshape(3, 4)  # map over axis 1
    w = np.array([1.0, 10.0, 100.0])
    out = pmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(x, w)
    np.testing.assert_array_equal(out, x * w[:, None])


def test_pytree_in_axes_prefix_and_pytree_output():
    params = {"w": np.ones(3), "scale": 2.0}
    xs = np.arange(12.0).reshape(4, 3)

    def f(p, x):
        y = p["scale"] * (x @ p["w"])
        return {"y": y, "pair": (x, y)}

    out = pmap(f, in_axes=({"w": None, "scale": None}, 0))(params, xs)
    np.testing.assert_array_equal(out["y"], 2 * xs.sum(axis=1))
    np.testing.assert_array_equal(out["pair"][0], xs)


def test_out_axes_none_returns_the_replicated_value():
    out = pmap(lambda x: psum(x, "i"), axis_name="i", out_axes=None)(np.arange(4.0))
    assert float(out) == 6.0


def test_static_broadcasted_argnums():
    def f(x, power, how):
        return x ** power if how == "pow" else x

    g = pmap(f, static_broadcasted_argnums=(1, 2))
    np.testing.assert_array_equal(g(np.arange(4.0), 3, "pow"), np.arange(4.0) ** 3)


def test_keyword_arguments_are_mapped():
    out = pmap(lambda x, y: x - y)(np.arange(4.0), y=np.ones(4))
    np.testing.assert_array_equal(out, np.arange(4.0) - 1)


def test_shard_compiler_hook():
    calls = []

    def fake_jit(fun, static_argnums=(), backend=None):
        calls.append((fun.__name__, static_argnums, backend))

        def compiled(*args):
            return fun(*args) + 100
        return compiled

    def f(x, k):
        return x * k

    g = pmap(f, static_broadcasted_argnums=1, _compile=fake_jit)
    np.testing.assert_array_equal(g(np.arange(4.0), 2), 2 * np.arange(4.0) + 100)
    g(np.arange(4.0), 2)
    assert calls == [("f", (1,), None)]  # compiled once per pmapped function

    set_shard_compiler(fake_jit)
    try:
        np.testing.assert_array_equal(pmap(np.negative)(np.ones(2)), [99.0, 99.0])
    finally:
        set_shard_compiler(None)
    np.testing.assert_array_equal(pmap(np.negative)(np.ones(2)), [-1.0, -1.0])


def test_concurrent_pmap_calls_from_two_threads():
    f = pmap(lambda x: x / psum(x, "i"), axis_name="i")
    outs = [None, None]

    def run(k):
        for _ in range(20):
            outs[k] = f(np.arange(1.0, 5.0) * (k + 1))

    ts = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    call_with_timeout(lambda: [t.start() for t in ts] and [t.join() for t in ts])
    for k in range(2):
        np.testing.assert_allclose(outs[k], np.arange(1.0, 5.0) / 10)


# ---------------------------------------------------------------- errors

def test_too_many_shards():
    with pytest.raises(ValueError, match="size 5 but only 4 cpu devices"):
        pmap(np.sin)(np.zeros(5))


def test_nested_needs_enough_devices():
    with pytest.raises(ValueError, match="2 x 3 = 6 devices"):
        pmap(pmap(np.sin))(np.zeros((2, 3)))


def test_mismatched_mapped_sizes():
    with pytest.raises(ValueError, match="differ in size"):
        pmap(np.add)(np.zeros(3), np.zeros(4))


def test_nothing_mapped():
    with pytest.raises(ValueError, match="no input is mapped"):
        pmap(np.sin, in_axes=None)(np.zeros(3))


def test_unknown_axis_name():
    with pytest.raises(CollectiveError, match=r"unbound axis name 'j'.*'i'"):
        call_with_timeout(lambda: pmap(lambda x: psum(x, "j"), axis_name="i")(np.arange(4.0)))


def test_collective_outside_pmap():
    with pytest.raises(CollectiveError, match=r"psum: axis name 'i' is not bound.*outside pmap"):
        psum(np.ones(3), "i")
    with pytest.raises(CollectiveError, match="outside pmap"):
        axis_index("i")


def test_exception_in_one_shard_does_not_hang():
    def f(x):
        if int(axis_index("i")) == 2:
            raise ZeroDivisionError("boom in shard 2")
        return psum(x, "i")  # the others wait here; the failure must release them

    with pytest.raises(ZeroDivisionError, match="boom in shard 2") as info:
        call_with_timeout(lambda: pmap(f, axis_name="i")(np.arange(4.0)))
    assert "shard 2" in "".join(getattr(info.value, "__notes__", []))
    # the devices still work afterwards
    np.testing.assert_allclose(pmap(lambda x: psum(x, "i"), axis_name="i")(np.ones(4)), [4.0] * 4)


def test_exception_in_nested_shard_does_not_hang():
    def inner(x):
        if int(axis_index("j")) == 1 and int(axis_index("i")) == 0:
            raise KeyError("inner failure")
        return psum(psum(x, "j"), "i")

    f = pmap(pmap(inner, axis_name="j"), axis_name="i")
    with pytest.raises(KeyError, match="inner failure"):
        call_with_timeout(lambda: f(np.zeros((2, 2))))


def test_shard_skipping_a_collective_is_an_error_not_a_hang():
    def f(x):
        if int(axis_index("i")) == 0:
            return x
        return psum(x, "i")

    with pytest.raises(CollectiveError, match="disagree"):
        call_with_timeout(lambda: pmap(f, axis_name="i")(np.arange(4.0)))


def test_shards_calling_different_collectives():
    def f(x):
        return pmax(x, "i") if int(axis_index("i")) == 1 else psum(x, "i")

    with pytest.raises(CollectiveError, match="shard 0 called psum.*shard 1 called pmax"):
        call_with_timeout(lambda: pmap(f, axis_name="i")(np.arange(4.0)))


def test_shape_mismatch_at_collective():
    def f(x):
        return psum(np.ones(int(axis_index("i")) + 1), "i")

    with pytest.raises(CollectiveError, match="same shapes"):
        call_with_timeout(lambda: pmap(f, axis_name="i")(np.arange(4.0)))


def test_collective_of_run_time_length_compiles_without_waiting():
    # the compiler never runs psum to learn its shape (it would wait at the barrier for shards
    # that wait for the compile)
    def f(x):
        n = int(np.sum(x > -1.0))
        return psum(np.ones(n) * x[0], "i") + axis_index("i")

    out = call_with_timeout(lambda: pmap(f, axis_name="i")(np.arange(8.0).reshape(4, 2)))
    np.testing.assert_array_equal(out, [[12.0, 12.0], [13.0, 13.0], [14.0, 14.0], [15.0, 15.0]])


# ---------------------------------------------------------------- mpirun, 2 processes

MPI_SCRIPT = textwrap.dedent("""
    import numpy as np
    from transpile_runtime import mpi
    from transpile_runtime.devices import device_count, local_device_count
    from transpile.api.pmap import pmap, psum, pmean, pmax, all_gather, axis_index

    comm = mpi.initialize()
    rank = comm.Get_rank()
    assert local_device_count() == 2 and device_count() == 4, (local_device_count(), device_count())
    # the global batch is arange(4); this process holds its half
    x = np.arange(4.0)[2 * rank: 2 * rank + 2]
    f = pmap(lambda v: (v / psum(v, 'i'), pmean(v, 'i'), pmax(v, 'i'), all_gather(v, 'i'),
                        axis_index('i')), axis_name='i')
    normalized, mean, top, gathered, index = f(x)
    np.testing.assert_allclose(normalized, x / 6.0)
    np.testing.assert_allclose(mean, [1.5, 1.5])
    np.testing.assert_array_equal(top, [3.0, 3.0])
    np.testing.assert_array_equal(gathered, [np.arange(4.0)] * 2)
    np.testing.assert_array_equal(index, [2 * rank, 2 * rank + 1])
    tree = pmap(lambda t: psum(t, 'i'), axis_name='i')({'a': x, 'b': (x * 2,)})
    np.testing.assert_array_equal(tree['b'][0], [12.0, 12.0])
    print(f"rank {rank} ok", flush=True)
""")


def test_mpirun_two_processes(tmp_path):
    pytest.importorskip("mpi4py")
    launcher = shutil.which("mpirun") or shutil.which("mpiexec")
    if launcher is None:
        pytest.skip("mpirun not installed (pip install 'transpile[mpi]')")
    script = tmp_path / "mpi_pmap.py"
    script.write_text(MPI_SCRIPT)
    env = dict(os.environ, TRANSPILE_CPU_DEVICES="2",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run([launcher, "-n", "2", sys.executable, str(script)], env=env,
                              capture_output=True, text=True, timeout=120, cwd=REPO)
    except subprocess.TimeoutExpired:
        pytest.fail("mpirun -n 2 did not finish in 120 s")
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 and ("not found" in text or "No such file" in text) \
            and "rank" not in proc.stdout:
        pytest.skip(f"mpirun could not start processes here: {text[-300:]}")
    assert proc.returncode == 0, text
    assert "rank 0 ok" in proc.stdout and "rank 1 ok" in proc.stdout, text
