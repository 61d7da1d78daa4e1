"""A worker process that compiles one lowered jit module into Numba's disk cache.

jit's tiers (transpile/api/jit.py) run the generated NumPy code while the compiled code is
built. Numba's compiler holds the GIL most of the time, so compiling in a thread of the
calling process slows that process's NumPy calls; compiling here, in another process, does
not. The calling process then loads what this process compiled from the disk cache (a Numba
cache hit) and switches to it.

What the worker compiles is self-contained on disk: the lowered module's text (written by
transpile under the cache folder, content-hashed name) imports everything it uses, and the
worker executes that same file under the same module name (`module_name`) the calling
process uses, so Numba's cache index (keyed by the file, the function and the argument
types) is the one the calling process reads. The argument types are Numba types, pickled by
the caller: exactly those the caller will call with.

Protocol (see `spawn` and `main`): the parent starts `python -c BOOT <sys.path as JSON>`; the
worker imports NumPy and Numba (while the parent is still generating the module), then reads
one pickled request from stdin (one pickle, not to EOF): {"path", "name", "sigs": pickle of a list of type tuples}.
EOF instead of a request: nothing to do. It compiles under the entry's lock
(diskcache.entry_lock: two processes compiling the same module take turns, and the second
gets a cache hit), records the signed manifest (diskcache.record), and writes one JSON line
to stdout: {"ok": true, "compiled": n, "loaded": n} or {"ok": false, "numba": bool,
"error": message}. Nothing from transpile/ is imported here.
"""
import contextlib
import json
import os
import pickle
import subprocess
import sys
import types

import numpy as np

BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
        "from transpile_runtime.compile_worker import main; main()")


# Numba's SSA reconstruction recurses once per basic block on some paths: a long generated
# function (the exchange network of sorted(..., key=...) on 30 items) passes Python's default
# limit of 1000 frames while Numba compiles it
DEEP_RECURSION = 20000


@contextlib.contextmanager
def deep_recursion():
    """Raise Python's recursion limit to DEEP_RECURSION while Numba compiles (restored after)."""
    limit = sys.getrecursionlimit()
    if limit < DEEP_RECURSION:
        sys.setrecursionlimit(DEEP_RECURSION)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def module_name(path):
    """The module name a lowered module at `path` is executed under (in the calling process
    and in the worker: Numba rebuilds a cached function's environment by this name)."""
    return "transpile_jit_" + os.path.splitext(os.path.basename(path))[0]


def execute_module(text, path):
    """Execute the lowered module's text as the module of file `path`; returns its namespace."""
    code = compile(text, path, "exec")
    mod = types.ModuleType(module_name(path))
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    exec(code, mod.__dict__)
    return mod.__dict__


def spawn():
    """Start a worker (it imports Numba meanwhile and waits for `request`). Its own session:
    a Ctrl-C meant for the caller does not interrupt a compile that is filling the cache."""
    return subprocess.Popen([sys.executable, "-c", BOOT, json.dumps(sys.path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, close_fds=True)


def request(path, name, sigs):
    """The bytes to send a worker: compile `name` of the module at `path` for each signature
    in `sigs`: a tuple of Numba types, or a `describe`d list. Raises (pickle.PicklingError,
    TypeError, ...) when a type cannot be pickled: the caller compiles in its own process."""
    return pickle.dumps({"path": path, "name": name, "sigs": pickle.dumps(list(sigs))})


# -- argument types without importing Numba in the caller ----------------------------------------
#
# The caller describes each argument as numba.typeof would type it (the same rules: an
# ndarray's dtype, rank, layout 'C' if C-contiguous, else 'F' if Fortran-contiguous, else 'A',
# and readonly when not writeable; Python float/int/bool/complex; NumPy scalars by dtype;
# tuples item by item), so it need not import Numba before the compiled code is ready.
# Anything else raises TypeError: the caller then types it with Numba itself.

_SCALARS = {float: ("py", "float64"), bool: ("py", "boolean"), complex: ("py", "complex128")}


def describe(args):
    """A picklable description of the Numba types of `args` (TypeError if not describable)."""
    return ("described", [_describe(a) for a in args])


def _describe(v):
    t = type(v)
    if t is np.ndarray:
        f = v.flags
        layout = "C" if f.c_contiguous else "F" if f.f_contiguous else "A"
        if v.dtype.hasobject or v.dtype.fields is not None or v.dtype.kind not in "biufc":
            raise TypeError(f"no description for arrays of {v.dtype}")
        return ("array", v.dtype.str, v.ndim, layout, not f.writeable, bool(f.aligned))
    if t in _SCALARS:
        return _SCALARS[t]
    if t is int:
        if -(1 << 63) <= v < (1 << 63):
            return ("py", "int64")
        if 0 <= v < (1 << 64):
            return ("py", "uint64")
        raise TypeError("an int too large for Numba")
    if isinstance(v, np.generic) and t.__module__ == "numpy" and \
            np.dtype(t).kind in "biufc":
        return ("scalar", np.dtype(t).str)
    if t is tuple:
        return ("tuple", [_describe(x) for x in v])
    if v is None:
        return ("none",)
    raise TypeError(f"no description for {t.__name__}")


def numba_types(described):
    """The tuple of Numba types a `describe`d list stands for (in the worker)."""
    return tuple(_numba_type(d) for d in described)


def _numba_type(d):
    from numba.core import types
    from numba.np import numpy_support
    kind = d[0]
    if kind == "array":
        _, dtype, ndim, layout, readonly, aligned = d
        return types.Array(numpy_support.from_dtype(np.dtype(dtype)), ndim, layout,
                           readonly=readonly, aligned=aligned)
    if kind == "py":
        return getattr(types, d[1])
    if kind == "scalar":
        return numpy_support.from_dtype(np.dtype(d[1]))
    if kind == "tuple":
        return types.BaseTuple.from_types([_numba_type(x) for x in d[1]])
    if kind == "none":
        return types.none
    raise ValueError(f"unknown description {d!r}")


def _reply(obj):
    try:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):      # the caller has exited: the cache is filled anyway
        pass


def _is_numba_error(e):
    # (a RecursionError while compiling: Numba cannot compile the code, as for its own errors)
    return type(e).__module__.startswith("numba") or isinstance(e, RecursionError)


def compile_request(req):
    """Compile what `req` asks for (in this process); the reply's dict."""
    from . import diskcache
    path, name = req["path"], req["name"]
    with diskcache.entry_lock(path):
        diskcache.verify(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        ns = execute_module(text, path)
        fn = ns[name]
        sigs = pickle.loads(req["sigs"])
        for sig in sigs:
            if isinstance(sig, tuple) and sig and sig[0] == "described":
                sig = numba_types(sig[1])
            with deep_recursion():
                fn.compile(tuple(sig))
        diskcache.record(path)
    stats = fn.stats
    return {"ok": True, "compiled": sum(stats.cache_misses.values()),
            "loaded": sum(stats.cache_hits.values())}


def main():
    try:
        import numba  # noqa: F401  (imported while the caller generates the module)
        from numba.core.registry import cpu_target
        cpu_target.target_context.refresh()
    except Exception as e:      # noqa: BLE001 (reported to the caller)
        _reply({"ok": False, "numba": False, "boot": True, "error": f"{type(e).__name__}: {e}"})
        return
    try:
        # one pickle, read to its end (not to EOF: a process forked from the caller may hold
        # a copy of the pipe's other end)
        req = pickle.load(sys.stdin.buffer)
    except EOFError:
        return                   # the caller needed no compile after all
    try:
        reply = compile_request(req)
    except Exception as e:      # noqa: BLE001 (reported to the caller)
        reply = {"ok": False, "numba": _is_numba_error(e), "error": str(e) or type(e).__name__,
                 "type": type(e).__name__}
    _reply(reply)
