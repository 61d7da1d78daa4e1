"""Execution backends for generated code: name -> compile function (Numba CPU here; CuPy
RawKernels and numba.cuda kernels in lowering/gpu/cupy_backend.py / lowering/gpu/cuda_backend.py).

A backend's compile function is called as `compile(plan) -> callable or None`, where `plan`
is a transpile.api.jit.Plan (the specialized, fused core and everything needed to print and load
it). It returns a callable taking the flat arguments and returning the flat outputs, or raises
`BackendUnavailable` / `transpile.lowering.cpu.module.Unlowerable` (jit then falls back to NumPy).
Other backends (CuPy, Numba CUDA) register themselves here with `register(name, fn)`.
"""
import importlib

BACKENDS = {}


class BackendUnavailable(Exception):
    """The backend cannot be used here (library missing, no device)."""


def register(name, compile_fn):
    BACKENDS[name] = compile_fn


def get(name):
    if name not in BACKENDS:
        _load_builtin(name)
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"jit: unknown backend {name!r}; known backends: "
                         f"{', '.join(sorted(set(BACKENDS) | set(_BUILTIN)))}") from None


_BUILTIN = {"cpu": "transpile.lowering.cpu.module",
            "numba": "transpile.lowering.cpu.module",
            "numpy": "transpile.lowering.numpy_eager",
            "cupy": "transpile.lowering.gpu.cupy_backend", "cuda": "transpile.lowering.gpu.cuda_backend"}


def _load_builtin(name):
    mod = _BUILTIN.get(name)
    if mod is None:
        return
    try:
        m = importlib.import_module(mod)
    except ImportError as e:
        raise BackendUnavailable(f"jit backend {name!r} is not available: {e}") from None
    fn = getattr(m, "compile_plan", None)
    if fn is not None:
        BACKENDS.setdefault(name, fn)
