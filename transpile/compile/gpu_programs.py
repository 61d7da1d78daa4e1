"""Entry points for the GPU backends that need no device: kernel source text for `show`, and
program objects the jit dispatch builds per specialization.

    kernel_source(core, example_args, "cupy")   # CUDA C of every fused region + the plan
    kernel_source(core, example_args, "cuda")   # numba.cuda Python source
    gpu_program(core, example_args, "cupy")     # runnable: prog(*flat_args) -> flat outputs

`example_args` are the core function's flat parameters: the user's array leaves, then the
values of its free variables (`api/autodiff.py`'s `flat_example_args(transform, *args)` builds them).
"""
from transpile.lowering.gpu import cuda_c, numba_cuda
from transpile.lowering.gpu.cuda_backend import NumbaCudaProgram
from transpile.lowering.gpu.cupy_backend import CupyProgram
GPU_BACKENDS = ("cupy", "cuda")


def _check(backend):
    if backend not in GPU_BACKENDS:
        raise ValueError(f"unknown GPU backend {backend!r}; expected one of {GPU_BACKENDS}")


def kernel_source(core, example_args, backend="cupy"):
    _check(backend)
    kernel_text = cuda_c.kernel_text if backend == "cupy" else numba_cuda.kernel_text
    try:
        return kernel_text(core, list(example_args))
    except NotImplementedError as e:    # the program runs as array-library ops instead
        return (f"// {core.name}: no GPU kernel plan ({e}); it runs as "
                f"{'CuPy' if backend == 'cupy' else 'array-library'} array ops\n")


def gpu_program(core, example_args, backend="cupy"):
    _check(backend)
    if backend == "cupy":
        return CupyProgram(core, list(example_args))
    return NumbaCudaProgram(core, list(example_args))
