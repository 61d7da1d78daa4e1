"""Stepping through generated code with pdb.

    from transpile import grad, debug_call, generated_path
    generated_path(grad(loss), w, x)      # the file that runs for these arguments
    debug_call(grad(loss), w, x)          # pdb stops at the first line of that file

`pdb.runcall(grad(loss), w, x)` would stop in transpile's own dispatch code (argument checks,
the specialization cache) first; `debug_call` instead sets a breakpoint on the generated file
and runs until it is reached, so the first prompt is in the code transpile generated.
"""
import sys
import types

from transpile.api.autodiff import Plain, generated_path

__all__ = ["debug_call", "first_line"]


def first_line(path):
    """The line of the first statement of the generated function in the file at `path`."""
    with open(path, encoding="utf-8") as f:
        module = compile(f.read(), path, "exec")
    fn = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    return min(ln for _, _, ln in fn.co_lines() if ln is not None and ln > fn.co_firstlineno)


def debug_call(fun, *args, **kwargs):
    """Call `fun(*args, **kwargs)` under pdb, stopping at the first line of its generated code.

    `fun` is a transformed function (grad(f), vmap(f), jvp/vjp transforms, jit(f,
    backend="numpy")) or a plain function (its core-Python form). At the prompt, pdb's usual
    commands work on the generated file: `n`, `s`, `p dx`, `b LINE`, `c`, `q`. Returns what
    the call returns (None if you quit with `q`)."""
    import bdb   # (lazy: only when debugging)
    import pdb   # (lazy: only when debugging)
    backend = getattr(fun, "backend", None)
    if backend not in (None, "numpy"):
        raise TypeError(
            f"debug_call: jit(..., backend={backend!r}) runs machine code that pdb cannot step "
            "through; debug the function without jit (debug_call(grad(f), ...)) or with "
            "jit(f, backend=\"numpy\"), which runs the same generated NumPy code")
    if not hasattr(fun, "source_path"):
        fun = Plain(fun)                # run the generated core-Python form, not the original
    path = generated_path(fun, *args, **kwargs)
    dbg = pdb.Pdb()
    dbg.reset()
    dbg.botframe = sys._getframe()      # run freely from here until the breakpoint
    err = dbg.set_break(path, first_line(path))
    if err:
        raise RuntimeError(f"debug_call: cannot set a breakpoint in {path}: {err}")
    dbg.set_continue()
    sys.settrace(dbg.trace_dispatch)
    try:
        return fun(*args, **kwargs)
    except bdb.BdbQuit:
        return None
    finally:
        dbg.quitting = True
        sys.settrace(None)
        dbg.clear_all_breaks()
