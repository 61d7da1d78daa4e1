"""Argument shapes known while a function is normalized.

jit knows the shapes and dtypes of its arguments before it generates code; so does an eager
transform (grad, jvp, ...) when the code it generates needs them (a list comprehension over an
array, `sorted(x)`: their length must be known). Then `shape_folder(avals)` is installed as
the normalizer's SPECIALIZE hook: every emitted statement is specialized as it is written, so
`x.shape[0]` becomes a constant, and a vmap called inside can pick its batching rules by the
ranks it sees (transpile/frontend/normalize/calls.py)."""
from transpile.core.ir import Const
from transpile.optimize.specialize import Specializer


def shape_folder(in_avals):
    """The SPECIALIZE hook for a function whose parameters have these abstract values."""

    def hook(in_trees, params, builder):
        if len(params) != len(in_avals):
            return

        class _Core:
            pass
        core = _Core()
        core.params, core.statics, core.body = list(params), {}, []
        sp = Specializer(core, in_avals)
        sp.rewrite = False

        def on_emit(eqn):
            out = []
            sp.eqn(eqn, out)
            if eqn.out in sp.subst and isinstance(sp.subst[eqn.out], Const):
                return sp.subst[eqn.out]
            if eqn.out not in sp.avals:
                sp.infer(eqn)
            return None
        builder.on_emit = on_emit
        builder.avals = sp.avals        # (a vmap called inside picks rules by these ranks)
        builder.unsized = sp.unsized    # (rank and dtype of values of run-time length)
        builder.shape_folder = shape_folder     # (and folds its function's shapes if needed)
        # parameters that are numbers whatever their dtype (one example's scalar under vmap,
        # never a 0-d array): `n //= 2` in a loop rebinds them
        builder.numbers = {params[i] for i in getattr(in_avals, "numbers", ())}
    return hook
