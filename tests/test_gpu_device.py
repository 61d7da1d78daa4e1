"""Real-GPU tests (marked `gpu`): generated RawKernels and numba.cuda kernels on a device match
NumPy, arrays stay on the device, float32 stays float32. Skipped cleanly without a device."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from gpu_cases import cases, mlp_args, mlp_grad  # noqa: E402

from transpile.api.autodiff import Plain, Transform  # noqa: E402
from transpile.api.autodiff import flat_example_args  # noqa: E402
from transpile.compile.gpu_programs import gpu_program  # noqa: E402


def _device():
    try:
        from transpile.lowering.gpu.cupy_backend import device_available
        return device_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not _device(), reason="no CUDA device visible (or CuPy missing)")]

ALL = [(dt, label, fn, args) for dt in (np.float32, np.float64)
       for (label, fn, args) in cases(dt, n=100_003)]
IDS = [f"{label}-{np.dtype(dt).name}" for dt, label, _, _ in ALL]


def reference(fn, args):
    t = fn if isinstance(fn, Transform) else Plain(fn)
    ref = t(*args)
    return list(ref) if isinstance(ref, tuple) else [ref]


def check(out, ref, dt):
    import cupy
    tol = 2e-5 if dt == np.float32 else 1e-11
    for o, r in zip(out, ref):
        assert isinstance(o, cupy.ndarray)
        assert o.dtype == np.asarray(r).dtype
        o = cupy.asnumpy(o).astype(np.float64)
        r = np.asarray(r, np.float64)
        assert np.max(np.abs(o - r)) <= tol * max(1.0, float(np.max(np.abs(r))))


@pytest.mark.parametrize("dt,label,fn,args", ALL, ids=IDS)
def test_cupy_backend_matches_numpy(dt, label, fn, args):
    core, flat = flat_example_args(fn, *args)
    check(gpu_program(core, flat, "cupy")(*flat), reference(fn, args), dt)


@pytest.mark.parametrize("dt,label,fn,args", ALL, ids=IDS)
def test_numba_cuda_backend_matches_numpy(dt, label, fn, args):
    core, flat = flat_example_args(fn, *args)
    check(gpu_program(core, flat, "cuda")(*flat), reference(fn, args), dt)


def test_cupy_inputs_stay_on_device():
    import cupy
    args = mlp_args(np.float32, batch=64)
    core, flat = flat_example_args(mlp_grad, *args)
    prog = gpu_program(core, flat, "cupy")
    dev = [cupy.asarray(a) for a in flat]
    out = prog(*dev)
    check(out, reference(mlp_grad, args), np.float32)


def test_cuda_graph_replay_matches_fresh_inputs_and_keeps_old_results():
    """From the third call on, the program replays a CUDA graph: every call's result must be
    that of its own inputs, and results handed out earlier must not be overwritten."""
    import cupy
    core, flat = flat_example_args(mlp_grad, *mlp_args(np.float32, batch=32))
    prog = gpu_program(core, flat, "cupy")
    kept = []
    for seed in range(5):
        args = mlp_args(np.float32, batch=32, seed=seed)
        out = prog(*[cupy.asarray(a) for a in args])
        kept.append((args, out))
    graphed = prog._graphed
    assert any(g is not False for g in graphed._graphs.values()), graphed.failure
    for args, out in kept:
        check(out, reference(mlp_grad, args), np.float32)


def test_cuda_graphs_off_gives_the_same_numbers(monkeypatch):
    import cupy
    monkeypatch.setenv("TRANSPILE_CUDA_GRAPHS", "0")
    args = mlp_args(np.float64, batch=16, seed=7)
    core, flat = flat_example_args(mlp_grad, *args)
    prog = gpu_program(core, flat, "cupy")
    for _ in range(3):
        out = prog(*[cupy.asarray(a) for a in args])
    assert not prog._graphed._graphs
    check(out, reference(mlp_grad, args), np.float64)


def test_jit_cupy_backend_takes_and_returns_device_arrays():
    import cupy
    from transpile import jit
    from gpu_cases import selu
    x = np.random.default_rng(5).standard_normal(4097).astype(np.float32)
    f = jit(selu, backend="cupy")
    out = f(cupy.asarray(x))
    assert isinstance(out, cupy.ndarray) and out.dtype == np.float32
    check([out], reference(selu, [x]), np.float32)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_capture_gemm_matches_cupy_for_every_layout(dt):
    """The cuBLAS-by-ctypes matmul used while capturing a graph: C- and F-contiguous operands
    (transposed views), compared with CuPy's own matmul."""
    import cupy
    from transpile_runtime.gpu_graph import _CaptureGemm
    rng = np.random.default_rng(11)
    stream = cupy.cuda.Stream(non_blocking=True)
    workspace = cupy.empty(1 << 20, cupy.uint8)
    gemm = _CaptureGemm(cupy, stream, workspace)
    try:
        a = cupy.asarray(rng.standard_normal((37, 23)).astype(dt))
        b = cupy.asarray(rng.standard_normal((23, 19)).astype(dt))
        cases = [(a, b), (a.T.copy().T, b), (a, b.T.copy().T), (a.T.copy().T, b.T.copy().T),
                 (a[:, :23], b[:, 3:10])]
        for x, y in cases:
            with stream:
                got = gemm.matmul(x, y)
            stream.synchronize()
            ref = cupy.asnumpy(x).astype(np.float64) @ cupy.asnumpy(y).astype(np.float64)
            assert got.dtype == dt and got.shape == ref.shape
            tol = 1e-4 if dt == np.float32 else 1e-12
            assert np.max(np.abs(cupy.asnumpy(got) - ref)) < tol
    finally:
        gemm.close()


def test_jit_cupy_scalar_result_stays_on_the_device():
    import cupy
    from transpile import grad, jit
    from gpu_cases import sum_logistic
    x = np.random.default_rng(6).standard_normal(5000).astype(np.float32)
    out = jit(sum_logistic, backend="cupy")(cupy.asarray(x))
    assert isinstance(out, cupy.ndarray) and out.shape == () and out.dtype == np.float32
    ref = np.sum(1.0 / (1.0 + np.exp(-x.astype(np.float64))))
    assert abs(float(out) - ref) < 1e-4 * abs(ref)
    g = jit(grad(sum_logistic), backend="cupy")(cupy.asarray(x))
    s = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(cupy.asnumpy(g), s * (1 - s), rtol=1e-5, atol=1e-7)
