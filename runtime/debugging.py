"""print() inside transformed code: an effect that runs with the values of each call (like
jax.debug.print). Generated code calls `rt.debug_print(sep, end, *values)`."""
import sys

import numpy as np


def debug_print(sep, end, *values):
    print(*values, sep=sep, end=end, file=sys.stdout)
    return None


def debug_printf(template, end, *values):
    """print(f"...") in transformed code: the f-string's template filled with this call's
    values (str.format: the same conversions and format specs)."""
    print(template.format(*values), end=end, file=sys.stdout)
    return None


def debug_breakpoint(names, *values):
    """breakpoint() in transformed code: stops here (pdb, or PYTHONBREAKPOINT's hook) with the
    user's variables at that line in `env` (env['x'] is the value of x)."""
    env = dict(zip(names, values))  # noqa: F841  (inspect it in the debugger: p env)
    breakpoint()
    return None


def _exception(exc, template, values):
    import builtins
    cls = getattr(builtins, exc)
    if template is None:
        return cls()
    return cls(template.format(*values))


def raise_error(exc, template, *values):
    """`raise ValueError(f"...")` in transformed code: the built-in exception class `exc` (by
    name) with the message template filled with this call's values (str.format)."""
    raise _exception(exc, template, values)


def check_assert(cond, template, *values):
    """`assert cond, msg` in transformed code: AssertionError with the message when cond is
    false (as Python, an array of several elements is ambiguous)."""
    if not cond:
        raise _exception("AssertionError", template, values)
    return None


def batch_check_assert(cond, template, *values):
    """check_assert under vmap: cond holds one truth value per example; any false one raises."""
    if not np.all(cond):
        raise _exception("AssertionError", template, values)
    return None
