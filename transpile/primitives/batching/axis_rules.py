"""Batching rules for the rows of primitives/numpy/arrays.py and primitives/numpy/linalg.py.

  axis_rule(...)  the primitive acts along axis arguments of one array `x`: shift them past
                  the batch axis (axis=None, or a batched non-`x` argument: loop fallback)
  stacked         NumPy's linalg functions act on the trailing two axes of a stack of
                  matrices: a batched `x` passes through unchanged
  per_example     no rule: vmap writes an explicit loop over the batch (still correct)
  pointwise(p)    the row acts on each entry of argument p (np.interp, np.polyval in x): a
                  batched p passes through; any other batched argument: loop fallback
"""
from transpile.core.ir import Const
from transpile.primitives.batching.rules import NoRule, Rule, _const, _only_batched, _shift


def axis_rule(axis_params, rank=None, array_params=("x",), none_ok=False):
    def batch(s, eqn):
        _only_batched(s, eqn, list(array_params))
        args = dict(eqn.args)
        for p in axis_params:
            ax = _const(args, p, eqn.prim.param(p).default)
            if ax is None and not none_ok:
                raise NoRule(f"{p}=None")
            if isinstance(ax, (tuple, list)) and p == "axes" and len(ax) == 2 and \
                    all(isinstance(a, (tuple, list)) for a in ax):
                args[p] = Const(tuple(_shift(tuple(a)) for a in ax))
            else:
                args[p] = Const(_shift(ax))
        for a in array_params:
            if a in args and not s.b(args[a]):
                args[a] = s.broadcast(args[a])
        s.final(eqn.prim, args)

    def rank_of(s, eqn):
        return rank(s, eqn) if rank is not None else s.r(eqn.args["x"])
    return Rule("axis", batch, rank_of)


def _stacked_batch(s, eqn):
    _only_batched(s, eqn, ["x"])
    s.final(eqn.prim, dict(eqn.args))


def _same_rank(s, eqn):
    return s.r(eqn.args["x"])


stacked = Rule("linalg", _stacked_batch, _same_rank)


def _no_rule(s, eqn):
    raise NoRule(eqn.prim.name)


def _unknown_rank(s, eqn):
    return None


per_example = Rule("per_example", _no_rule, _unknown_rank)


def rank_minus(n):
    def rank(s, eqn):
        r = s.r(eqn.args["x"])
        return None if r is None else r - n
    return rank


def pointwise(param):
    def batch(s, eqn):
        _only_batched(s, eqn, [param])
        s.final(eqn.prim, dict(eqn.args))
    return Rule("pointwise", batch, lambda s, eqn: s.r(eqn.args[param]))
