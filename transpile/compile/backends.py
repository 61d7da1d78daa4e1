"""jit's backend compile functions and the guards around Numba's disk cache.

    cpu / numba   lower the Plan to a Numba module (lowering/cpu/module.py), write it under the
                  cache folder (content-hashed name, checked by runtime/diskcache.py), load it
    numpy         the generated NumPy code, not compiled
    cupy / cuda   kernel source now (`show` works without a device), the program on first call

They are registered in transpile.lowering.backends when this module is imported (api/jit.py
imports it). Also here: recognizing Numba's errors and the line of lowered source it refused
(for the fallback warning), retrying when the cache folder vanished under Numba, and
`initialize_runtime` (Numba's one-time setup, up front).
"""
import functools
import hashlib
import re
import numpy
import os

import numpy as np

from transpile.core import codegen
from transpile.version import __version__
import transpile_runtime
from transpile_runtime import compile_worker, diskcache
from transpile.lowering.cpu import module as numba_cpu
from transpile.lowering import backends
from transpile.compile.gpu_programs import gpu_program, kernel_source


def _versions():
    try:
        import numba   # (lazy: import transpile does not load Numba)
        nb = numba.__version__
    except ImportError:
        nb = "none"
    return f"transpile {__version__}, numba {nb}, numpy {numpy.__version__}, " \
        f"runtime {_runtime_fingerprint()}"


@functools.lru_cache(maxsize=None)
def _runtime_fingerprint():
    """A hash of transpile_runtime's sources. Numba's disk cache checks a cached function
    against its own file only, not against the helpers it calls: a generated module whose text
    is unchanged would load machine code built with an older helper (blas_dot, sort_lines)
    after the runtime changed without a new version number (a checkout, an editable install).
    The hash is in each module's header, so such a change gives new file names."""
    root = os.path.dirname(os.path.abspath(transpile_runtime.__file__))
    h = hashlib.sha1()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:12]


def _numba_compile(plan):
    try:
        import numba   # (lazy: import transpile does not load Numba)
        threads = numba.config.NUMBA_NUM_THREADS
        # TRANSPILE_NUM_THREADS=1: serial loops only (a busy machine), n: parallel loops
        # where the work pays for n threads (Numba's NUMBA_NUM_THREADS sets its pool)
        threads = int(os.environ.get("TRANSPILE_NUM_THREADS") or threads)
    except ImportError as e:
        raise numba_cpu.Unlowerable(None, f"numba is not installed ({e})")
    name, text, breaks = numba_cpu.lower(plan.core, plan.body, plan.outs, plan.avals,
                                         plan.params, plan.origin, plan.signature, _versions(),
                                         threads=threads, in_place=plan.in_place,
                                         allow_breaks=plan.allow_breaks, owned=plan.owned)
    plan.text = text
    plan.entry = name
    if breaks:      # statements run in NumPy between compiled parts
        e = breaks[0]
        n = f"{len(breaks)} statements run" if len(breaks) > 1 else "that statement runs"
        plan.jit._warn(f"jit({plan.jit.__name__}): {e.where}: Numba cannot compile "
                       f"{e.construct}{' (' + e.why + ')' if e.why else ''}; {n} in NumPy "
                       "between compiled parts of the function (show(jit(f), *args) marks "
                       "them)")
    for attempt in range(10):
        path = diskcache.source_path(codegen.cache_dir(), plan.core.name, text)
        plan.path = path
        # the same text as a specialization loaded before (another batch size): its dispatcher
        plan.reused = numba_cpu.loaded(path, name) is not None
        diskcache.verify(path)
        if plan.defer_load and not plan.reused and "\nPARTS = " not in text:
            return DeferredModule(text, path, name)
        try:
            return numba_cpu.compile_module(text, path, name)
        except Exception as e:
            if _compile_failed(e):      # a part (split at collectives or graph breaks) failed
                raise numba_cpu.Unlowerable(None, _refused_construct(e, text),
                                            construct="a function compiled in parts") from e
            if not isinstance(e, (OSError, RuntimeError)):
                raise
            if attempt == 9 or not _cache_vanished(e, path):
                raise                 # the cache was deleted under Numba: write it again


class DeferredModule:
    """A lowered module written to its file but not loaded yet (a background compile in a
    worker process, api/jit.py: the calling process imports Numba and loads the module only
    once the worker has compiled it, so its NumPy calls meanwhile do not wait for that).
    `load()` gives the entry dispatcher, as `_numba_compile` would have."""

    def __init__(self, text, path, name):
        self.text = text
        self.path = path
        self.name = name

    def load(self):
        for attempt in range(10):
            try:
                return numba_cpu.compile_module(self.text, self.path, self.name)
            except (OSError, RuntimeError) as e:
                if attempt == 9 or not _cache_vanished(e, self.path):
                    raise
                diskcache.ensure_file(self.path, self.text)   # the cache was deleted


def _cache_vanished(e, path):
    """Numba failed because the cache folder (or the module file in it) disappeared."""
    if isinstance(e, RuntimeError):
        return "no locator available" in str(e)
    where = str(getattr(e, "filename", "") or "")
    if where:
        return where.startswith(os.path.dirname(path))
    return isinstance(e, FileNotFoundError) and not os.path.exists(path)


def _gpu_compile(backend):
    """jit(f, backend="cupy"|"cuda"): kernel source is generated here without a device (so
    `show` works anywhere); the program is built on first call, which is where a missing CuPy
    or GPU is reported."""
    def compile_fn(plan):
        # weak avals are Python scalars (NumPy 2 promotion: float32 * 1.67 stays float32)
        example = [a.dtype.type(0).item() if a.weak else np.zeros(a.shape, a.dtype)
                   for a in plan.in_avals]
        plan.text = kernel_source(plan.core, example, backend)
        state = {}

        def run(*args):
            prog = state.get("prog")
            if prog is None:
                prog = state["prog"] = gpu_program(plan.core, example, backend)
            return prog(*args)
        return run
    return compile_fn


def _register_builtin():
    backends.register("cpu", _numba_compile)
    backends.register("numba", _numba_compile)
    backends.register("numpy", lambda plan: plan.eager_callable())
    backends.register("cupy", _gpu_compile("cupy"))
    backends.register("cuda", _gpu_compile("cuda"))


_register_builtin()


def _is_numba_error(e):
    try:
        from numba.core import errors   # (lazy: import transpile does not load Numba)
    except ImportError:
        return False
    # (a RecursionError while compiling, past compile_worker.DEEP_RECURSION frames: Numba
    # cannot compile the code, as for its own errors)
    return isinstance(e, (errors.NumbaError, errors.LoweringError, RecursionError)) or \
        type(e).__module__.startswith("numba")


def _compile_failed(e):
    """An exception from compiling: Numba's own errors, and any other exception raised inside
    Numba's code (a bug of its typing, `'Optional' object has no attribute 'dtype'`): Numba
    cannot compile the code, which then runs as NumPy, with the warning."""
    if _is_numba_error(e):
        return True
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    path = tb.tb_frame.f_code.co_filename.replace("\\", "/") if tb is not None else ""
    return "/numba/" in path


def _refused_construct(e, text):
    """The line of lowered source Numba refused (from its error message), for the warning."""
    msg = str(e)
    m = re.findall(r'File "[^"]*", line (\d+):', msg)
    lines = text.splitlines() if text else []
    for ln in reversed(m):
        k = int(ln) - 1
        if 0 <= k < len(lines):
            return lines[k].strip()
    first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    return first


def _call_guarding_cache(fn, args, path):
    """The first call of a Numba dispatcher compiles and saves to the disk cache: if the cache
    was deleted meanwhile, saving fails although the code compiled. Recreate the folders and
    call again (the compiled code is already in the dispatcher)."""
    for attempt in range(3):
        try:
            with compile_worker.deep_recursion():
                return fn(*args)
        except OSError as e:
            if attempt == 2 or not path or not _cache_vanished(e, path):
                raise
            codegen.cache_dir()
            diskcache.makedirs_private(os.path.dirname(path))


def initialize_runtime():
    """Do Numba's one-time per-process setup now (its NumPy lowering registries, SciPy's BLAS:
    about 0.3 s) instead of in the first jitted call, e.g. at program start or in a thread."""
    from numba.core.registry import cpu_target   # (lazy: import transpile does not load Numba)
    cpu_target.target_context.refresh()
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (Numba's np.dot needs it)
    except ImportError:
        pass
