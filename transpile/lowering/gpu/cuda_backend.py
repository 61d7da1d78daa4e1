"""backend='cuda': fused elementwise regions as generated numba.cuda kernels.

Array ops between kernels run with CuPy when it is installed and a GPU is visible (arrays stay
on the device; numba.cuda takes CuPy arrays through __cuda_array_interface__), else with NumPy
under the CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set before numba.cuda is first imported).
"""
import linecache
import os

import numpy as np

from transpile.lowering.gpu.executor import run_plan
from transpile.core import codegen
from transpile.lowering.gpu.numba_cuda import lower_to_numba_cuda
from transpile.lowering.gpu.cupy_backend import import_cupy

INSTALL_HINT = 'pip install "transpile[cuda]"  (numba-cuda, and cupy-cuda13x for array ops)'


class GPUUnavailable(RuntimeError):
    pass


def simulating():
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _numpy2_compat():
    """numba-cuda 0.30 registers an overload for np.row_stack while importing its kernel
    compiler; NumPy 2.4 removed that alias (it was np.vstack), so the first kernel compile
    fails with AttributeError. Restore the alias before numba.cuda compiles anything."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def import_numba_cuda():
    _numpy2_compat()
    try:
        from numba import cuda   # (lazy: import transpile does not load Numba)
    except ImportError as e:
        raise GPUUnavailable(f"backend='cuda' needs numba.cuda ({e}). Install it with: "
                             f"{INSTALL_HINT}") from None
    if not simulating():
        try:
            ok = cuda.is_available()
        except Exception:
            ok = False
        if not ok:
            raise GPUUnavailable("backend='cuda': no CUDA device is visible to numba.cuda. Run "
                                 "on a machine with an NVIDIA GPU and driver, or set "
                                 "NUMBA_ENABLE_CUDASIM=1 to use the (slow) CUDA simulator.")
    return cuda


def load_kernel(info):
    """Exec the kernel source from a real file (tracebacks and pdb land in it)."""
    path = codegen.write_source(info.source, info.name + "__cuda")
    code = compile(info.source, path, "exec")
    ns = {"__name__": f"transpile_generated.{info.name}", "__file__": path}
    exec(code, ns)
    linecache.cache[path] = (len(info.source), None, info.source.splitlines(True), path)
    return ns[info.name]


class NumbaCudaProgram:
    def __init__(self, core, example_args):
        self.core = core
        self.sources, self.plan = lower_to_numba_cuda(core, example_args)
        self._kernels = {}

    def __call__(self, *args, to_numpy=False):
        cuda = import_numba_cuda()
        xp = np
        if not simulating():
            xp = import_cupy()
        self.plan.max_blocks = 4 if simulating() else 4096

        def launch(info, grid, kargs):
            k = self._kernels.get(info.name)
            if k is None:
                k = self._kernels[info.name] = load_kernel(info)
            block = 32 if simulating() else 256
            grid = min(grid, 4) if simulating() else grid
            k[grid, block](*kargs)
        outs = run_plan(self.plan, args, xp, launch, "cuda")
        del cuda
        if to_numpy and xp is not np:
            outs = [xp.asnumpy(o) if isinstance(o, xp.ndarray) else o for o in outs]
        return outs
