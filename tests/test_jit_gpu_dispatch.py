"""jit(f, backend="cupy"|"cuda") dispatches to the GPU lowerings: kernel source is available
without a device (show), compiles to PTX, keeps float32, and a missing GPU is a clear error."""
import re

import numpy as np
import pytest

from transpile import grad, jit, show
from transpile.lowering.gpu.cupy_backend import device_available


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def test_show_cupy_prints_float32_cuda_c_that_compiles_to_ptx():
    from transpile.lowering.gpu.cuda_c import compile_to_ptx
    src = show(jit(selu, backend="cupy"), np.arange(5.0, dtype=np.float32))
    assert "__global__" in src and "expf(" in src
    body = [l for l in src.splitlines() if l.strip().startswith("const") and "=" in l]
    assert body and not any("double " in l and "out" in l for l in body), "float32 stays float32"
    ptx = compile_to_ptx(src)
    assert re.search(r"\.entry\s+\w+", ptx)


def test_show_cuda_prints_numba_cuda_kernel_for_a_gradient():
    src = show(jit(grad(sum_logistic), backend="cuda"), np.linspace(-1, 1, 8))
    assert "@cuda.jit" in src and "cuda.grid(1)" in src
    compile(src, "<kernel>", "exec")


@pytest.mark.skipif(device_available(), reason="checks the no-GPU error; a device is present")
@pytest.mark.parametrize("backend", ["cupy", "cuda"])
def test_no_device_is_a_clear_error(backend):
    with pytest.raises(Exception, match="no CUDA device is visible"):
        jit(selu, backend=backend)(np.ones(3, np.float32))


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        jit(selu, backend="tpu")
