"""backend='cupy': fused elementwise regions as generated CUDA C RawKernels, everything else as
CuPy array ops (cupy.matmul -> cuBLAS, cupy.sum, ...). Arrays stay on the GPU: NumPy inputs are
copied in once, outputs are CuPy arrays (pass to_numpy=True to get NumPy back).

    prog = CupyProgram(core, example_flat_args)   # lowering + plan (no device needed)
    outs = prog(*flat_args)                       # needs CuPy and a visible GPU

Kernels compile through cupy.RawKernel, which caches the compiled module by source hash.
"""

import os

import numpy as np

from transpile.lowering.gpu.plan import OpStep, is_collective
from transpile.lowering.gpu.executor import run_plan
from transpile.lowering.gpu.cuda_c import lower_to_cuda_c
from transpile.core import codegen
from transpile_runtime.diagnostics import warn
from transpile_runtime.gpu_graph import GraphedCall

INSTALL_HINT = 'pip install "transpile[cuda]"  (CuPy for CUDA 13: cupy-cuda13x)'


class GPUUnavailable(RuntimeError):
    """The GPU backend was requested but CuPy or a CUDA device is missing."""


def import_cupy():
    try:
        import cupy   # (lazy: the [cuda] extra, GPU backends only)
    except ImportError as e:
        raise GPUUnavailable(f"backend='cupy' needs CuPy, which is not installed ({e}). "
                             f"Install it with: {INSTALL_HINT}") from None
    return cupy


def require_device(cupy=None):
    """CuPy, checked to see at least one CUDA device; clear errors otherwise."""
    cupy = cupy or import_cupy()
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise GPUUnavailable(f"backend='cupy': no CUDA device is visible (CUDA says: "
                             f"{type(e).__name__}: {e}). Run on a machine with an NVIDIA GPU "
                             "and driver, check CUDA_VISIBLE_DEVICES, or use the CPU backends; "
                             "show(...) still prints the kernel source without a GPU.") from None
    if n < 1:
        raise GPUUnavailable("backend='cupy': no CUDA device is visible "
                             "(cudaGetDeviceCount() == 0); check CUDA_VISIBLE_DEVICES")
    return cupy


def device_available():
    try:
        require_device()
        return True
    except GPUUnavailable:
        return False


_KERNELS = {}


def raw_kernel(cupy, info):
    key = (info.name, info.source)
    k = _KERNELS.get(key)
    if k is None:
        k = cupy.RawKernel(info.source, info.name, options=("--std=c++14",))
        _KERNELS[key] = k
    return k


def max_blocks(cupy, reduction=False):
    """Grid cap for the generated grid-stride kernels, in blocks of 256 threads per
    multiprocessor: TRANSPILE_GPU_BLOCKS_PER_SM for elementwise kernels (default 64),
    TRANSPILE_GPU_REDUCE_BLOCKS_PER_SM for reductions (default 16: each block sums many
    elements before its one atomicAdd); 0 means no cap (one element per thread). Defaults from
    a sweep on an H100 (docs/gpu.md): one element per thread reached 2.0 TB/s on selu over
    5000x5000 float32, 64 blocks per SM 2.7 TB/s (the device-to-device copy: 2.75 TB/s)."""
    name, default = (("TRANSPILE_GPU_REDUCE_BLOCKS_PER_SM", "16") if reduction
                     else ("TRANSPILE_GPU_BLOCKS_PER_SM", "64"))
    per_sm = int(os.environ.get(name, default) or 0)
    if per_sm <= 0:
        return 1 << 30
    return cupy.cuda.Device().attributes["MultiProcessorCount"] * per_sm


class CupyProgram:
    """A core function lowered for the GPU: kernels + plan, runnable with CuPy."""

    def __init__(self, core, example_args):
        self.core = core
        self.fallback = None
        try:
            self.sources, self.plan = lower_to_cuda_c(core, example_args)
        except NotImplementedError as e:
            # control flow or a construct the planner does not model: the whole function runs
            # as CuPy array ops (NumPy calls dispatch to CuPy arrays)
            self.sources, self.plan = {}, None
            self.fallback = str(e)

    def __call__(self, *args, to_numpy=False):
        cupy = require_device()
        if self.plan is None:
            outs = self._run_fallback(cupy, args)
        else:
            if not hasattr(self.plan, "max_blocks"):
                self.plan.max_blocks = max_blocks(cupy)
                self.plan.max_blocks_reduce = max_blocks(cupy, reduction=True)
            graphed = getattr(self, "_graphed", None)
            if graphed is None:   # several launches: replay them as one CUDA graph
                run = lambda *a: run_cupy(self.core, self.plan, a, cupy)  # noqa: E731
                steps = [s for s in self.plan.steps if type(s).__name__ != "ConstStep"]
                collective = any(isinstance(s, OpStep) and is_collective(s.eqn.prim)
                                 for s in steps)
                graphed = self._graphed = GraphedCall(run, cupy) \
                    if len(steps) > 1 and not collective else run
            outs = graphed(*args)
        if to_numpy:
            outs = [cupy.asnumpy(o) if isinstance(o, cupy.ndarray) else o for o in outs]
        return outs

    def _run_fallback(self, cupy, args):
        if not getattr(self, "_warned", False):
            self._warned = True
            warn(f"transpile[cupy]: {self.core.name} has no GPU kernel lowering "
                 f"({self.fallback}); running it as CuPy array ops")
        fn, _, _ = codegen.load(self.core)
        dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        out = fn(*dev)
        return list(out) if len(self.core.outs) != 1 else [out]


def run_cupy(core, plan, args, cupy=None):
    """Execute a plan from `lower_to_cuda_c` on the GPU: RawKernels for fused regions, CuPy
    array ops for everything else. Returns the flat outputs (CuPy arrays)."""
    cupy = cupy or require_device()

    def launch(info, grid, kargs):
        raw_kernel(cupy, info)((grid,), (256,), tuple(kargs))
    return run_plan(plan, args, cupy, launch, "cupy")
