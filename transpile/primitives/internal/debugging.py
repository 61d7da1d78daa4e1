"""Row for print() in transformed code: an effect (pure=False, never evaluated while code is
generated, never dropped as unused), no derivative; under vmap it prints the batched values."""
from transpile_runtime import debugging as D
from transpile.primitives.batching.base import Rule, _only_batched
from transpile.primitives.batching.adjoint_helper_rules import batch_helper
from transpile.primitives.registry import defprim

debug_print = defprim("debug_print", D.debug_print, "rt.debug_print", "sep, end, *values",
                      batch="helper", nondiff=True, pure=False,
                      keep=True, shows_values=True, unsafe_in_select=True)
# print(f"x0={x[0]:.3f}"): a format template and its values
debug_printf = defprim("debug_printf", D.debug_printf, "rt.debug_printf", "template, end, *values",
                       batch="helper", nondiff=True, pure=False, keep=True, shows_values=True)
# breakpoint(): the user's variables at that line, by name, in the debugger's `env`
debug_breakpoint = defprim("debug_breakpoint", D.debug_breakpoint, "rt.debug_breakpoint",
                           "names, *values", batch="helper", nondiff=True, pure=False,
                           keep=True, unsafe_in_select=True)


# ---- assert and raise in transformed code (transpile/frontend/normalize/checks.py) ------------------
# raise ValueError(f"..."): the built-in exception class by name, a str.format template (None:
# no message) and its values; effects, never evaluated while generating, never dropped
def _raise_batch(s, eqn):
    # unbatched values: every example raises the same error; batched ones: per example
    _only_batched(s, eqn, ["exc", "template"])
    return s.final(eqn.prim, dict(eqn.args), batched=False, rank=None)


def _assert_batch(s, eqn):
    # a batched condition: one truth value per example, any false one raises (as a loop would)
    return s.final("batch_check_assert", dict(eqn.args), batched=False, rank=None)


raise_error = defprim("raise_error", D.raise_error, "rt.raise_error", "exc, template, *values",
                      batch=Rule("helper", _raise_batch, lambda s, e: None), nondiff=True,
                      pure=False, check=True, shows_values=True, unsafe_in_select=True)
check_assert = defprim("check_assert", D.check_assert, "rt.check_assert",
                       "cond, template, *values",
                       batch=Rule("helper", _assert_batch, lambda s, e: None), nondiff=True,
                       pure=False, check=True, shows_values=True)
batch_check_assert = defprim("batch_check_assert", D.batch_check_assert, "rt.batch_check_assert",
                             "cond, template, *values", batch=batch_helper, nondiff=True,
                             pure=False, check=True, shows_values=True)
