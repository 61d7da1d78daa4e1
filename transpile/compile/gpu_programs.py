"""Entry points for the GPU backends that need no device: kernel source text for `show`, and
program objects the jit dispatch builds per specialization.

    kernel_source(core, example_args, "cupy")   # CUDA C of every fused region + the plan
    kernel_source(core, example_args, "cuda")   # numba.cuda Python source
    gpu_program(core, example_args, "cupy")     # runnable: prog(*flat_args) -> flat outputs

`example_args` are the core function's flat parameters: the user's array leaves, then the
values of its free variables (`flat_example_args(transform, *args)` builds them).
"""
GPU_BACKENDS = ("cupy", "cuda")


def _check(backend):
    if backend not in GPU_BACKENDS:
        raise ValueError(f"unknown GPU backend {backend!r}; expected one of {GPU_BACKENDS}")


def kernel_source(core, example_args, backend="cupy"):
    _check(backend)
    if backend == "cupy":
        from transpile.lowering.gpu.cuda_c import kernel_text
    else:
        from transpile.lowering.gpu.numba_cuda import kernel_text
    try:
        return kernel_text(core, list(example_args))
    except NotImplementedError as e:    # the program runs as array-library ops instead
        return (f"// {core.name}: no GPU kernel plan ({e}); it runs as "
                f"{'CuPy' if backend == 'cupy' else 'array-library'} array ops\n")


def gpu_program(core, example_args, backend="cupy"):
    _check(backend)
    if backend == "cupy":
        from transpile.lowering.gpu.cupy_backend import CupyProgram
        return CupyProgram(core, list(example_args))
    from transpile.lowering.gpu.cuda_backend import NumbaCudaProgram
    return NumbaCudaProgram(core, list(example_args))


def flat_example_args(transform, *args, **kwargs):
    """(core, flat args) of a Transform (grad(f), Plain(f), ...) for these example arguments."""
    from transpile.api.autodiff import Plain, Transform
    from transpile.frontend.parse import read_binding
    if not isinstance(transform, Transform):
        transform = Plain(transform)
    values = transform.bind(args, kwargs)
    leaves, trees = transform.flatten_args(values)
    core = transform.__transpile_core__(trees)
    free = [read_binding(where) for _, where, _ in core.free]
    return core, list(leaves) + free
