"""Row for print() in transformed code: an effect (pure=False, never evaluated while code is
generated, never dropped as unused), no derivative; under vmap it prints the batched values."""
from transpile_runtime import debugging as D
from transpile.primitives.registry import defprim

debug_print = defprim("debug_print", D.debug_print, "rt.debug_print", "sep, end, *values",
                      batch="helper", nondiff=True, pure=False)
# print(f"x0={x[0]:.3f}"): a format template and its values
debug_printf = defprim("debug_printf", D.debug_printf, "rt.debug_printf", "template, end, *values",
                       batch="helper", nondiff=True, pure=False)
# breakpoint(): the user's variables at that line, by name, in the debugger's `env`
debug_breakpoint = defprim("debug_breakpoint", D.debug_breakpoint, "rt.debug_breakpoint",
                           "names, *values", batch="helper", nondiff=True, pure=False)
