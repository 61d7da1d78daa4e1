"""What every batching rule is made of: the `Rule` type, the `NoRule` fallback signal, and the
small argument helpers the rules share (constant arguments, which arguments may be batched,
shifting a per-example axis past the batch axis).

A rule is a `Rule`, a `str` subclass whose text is the primitive's batching *kind*
("elementwise", "reduction", ...), so code that only asks `prim.batch == "elementwise"` keeps
working. A rule has two parts:

  rank(s, eqn)   the per-example rank (ndim) of the result, or None when unknown
  batch(s, eqn)  emit the batched computation through `s` (a transforms.batching.BatchSweep)

Conventions (see batching/vectorize.py for the design): the batch axis is axis 0 of every
batched value; `s.r(atom)` is the per-example rank of an atom (None if unknown), `s.b(atom)` says
whether it is batched; a rule ends with `s.final(prim, args)`, which binds the equation's own
output name. A rule that cannot handle a case raises `NoRule`; the transform then writes an
explicit loop over the batch for that statement.
"""
from transpile.core.ir import Const, IndexArg, SliceArg, TupleArg


class NoRule(Exception):
    """This case has no batching rule: fall back to a loop over the batch."""


class Rule(str):
    def __new__(cls, kind, batch, rank):
        obj = super().__new__(cls, kind)
        obj.batch, obj.rank = batch, rank
        return obj

    def __call__(self, s, eqn):
        return self.batch(s, eqn)


NON_ARRAY = ("dtype", "fname", "ord")


def _const(args, name, default=None):
    v = args.get(name, Const(default))
    if not isinstance(v, Const):
        raise NoRule(f"{name} is not a constant")
    return v.value


def _only_batched(s, eqn, allowed):
    """Raise NoRule if an argument outside `allowed` is batched."""
    for k, v in eqn.args.items():
        if k in allowed:
            continue
        if any(s.b(a) for a in _atoms(v)):
            raise NoRule(f"argument {k} is batched")


def _atoms(v):
    """The atoms of an argument, inside slices and lists in an index too (`x[[p, 0]]`)."""
    if isinstance(v, (TupleArg, IndexArg)):
        for it in v.items:
            yield from _atoms(it)
    elif isinstance(v, SliceArg):
        yield from (v.lower, v.upper, v.step)
    else:
        yield v


def _shift(axis):
    """A per-example axis -> the batched value's axis (negative axes count from the right and
    stay as they are)."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_shift(a) for a in axis)
    return axis + 1 if axis >= 0 else axis


def _max_rank(ranks):
    if any(r is None for r in ranks):
        return None
    return max(ranks, default=0)


def args_with(eqn, **changes):
    args = dict(eqn.args)
    args.update(changes)
    return args
