"""Real-GPU tests (marked `gpu`): generated RawKernels and numba.cuda kernels on a device match
NumPy, arrays stay on the device, float32 stays float32. Skipped cleanly without a device."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from gpu_cases import cases, mlp_args, mlp_grad  # noqa: E402

from transpile.api import Plain, Transform  # noqa: E402
from transpile.lowering.gpu import flat_example_args, gpu_program  # noqa: E402


def _device():
    try:
        from transpile.lowering.cupy_backend import device_available
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
