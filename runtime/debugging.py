"""print() inside transformed code: an effect that runs with the values of each call (like
jax.debug.print). Generated code calls `rt.debug_print(sep, end, *values)`."""
import sys


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
