"""Python ints passed to jit as dynamic scalars (like JAX's weakly typed int arguments).

`jit(f)(i, x)` for a new `i` reuses the compiled code when `i` only enters arithmetic: the
generated core is checked, and every value derived from the int must reach only elementwise
primitives, the array inputs of other primitives (a sum, a matmul, the array being indexed),
`if`/`while` conditions, tapes or the outputs, or index an array (`x[k]`, not a slice bound).
Where its value must be known when
code is generated (a range bound, an index, a shape, an axis, a list length...), the function
is specialized on the int's value instead (the compile cache keys on it), as before.
"""
from transpile.core.ir import (Const, Eqn, ForRange, If, Push, TupleArg, IndexArg, Var, While, iter_atoms)
from transpile.primitives.internal.control import trip_count

LIMIT = 2 ** 62        # larger ints stay static: they may not fit the compiled int64


class StaticIntsNeeded(Exception):
    """The function needs its int arguments' values when code is generated."""


def is_dynamic_int(v):
    return type(v) is int and -LIMIT < v < LIMIT


def int_params(core, in_avals):
    """Names of the core's parameters that carry a dynamic Python int."""
    return {p for p, a in zip(core.params, in_avals)
            if getattr(a, "weak", False) and a.dtype.kind in "iu"}


def _value_only(prim, param):
    """Does the primitive read this argument only as data (its value never shapes the result)?"""
    if prim is trip_count or prim.shows_values:   # a loop's trip count: a run-time int like
        return True                                # its bounds; printed or raised values
    batch = prim.batch
    if batch == "elementwise" or getattr(batch, "name", None) == "elementwise":
        return True
    if prim.sized_by is not None and param not in prim.sized_by:
        return True             # the row says which of its ints may shape its result
    return param in prim.diff or param in prim.shape_args or param in _DATA_PARAMS


# Parameter names that always hold array data in the primitive table (the operand, the
# cotangent, a value read for its shape); structural ones are shape, axis, index, n, ...
_DATA_PARAMS = frozenset({"x", "y", "ct", "g", "out", "ans", "like"})


def ints_stay_dynamic(core, names):
    """True when the values derived from `names` only feed arithmetic, conditions and outputs."""
    tainted = set(names)
    if not tainted:
        return True
    while True:                                    # to a fixed point: loops carry values back
        before = len(tainted)
        if not _scan(core.body, tainted):
            return False
        if len(tainted) == before:
            return True


def _direct(arg, tainted):
    return isinstance(arg, Var) and arg.name in tainted


def _nested(arg, tainted):
    return isinstance(arg, (TupleArg, IndexArg)) and any(
        isinstance(a, Var) and a.name in tainted for a in iter_atoms([arg]))


def _scalar_index(arg, tainted):
    """x[k] with k an int (an item of the index, not a slice bound): the result's shape does
    not depend on k's value (the compiled code checks its bounds)."""
    return isinstance(arg, IndexArg) and all(
        not (isinstance(a, Var) and a.name in tainted) or any(a is it for it in arg.items)
        for a in _atoms(arg))


def _atoms(arg):
    return list(iter_atoms([arg]))


def _scan(body, tainted):
    for st in body:
        if isinstance(st, Eqn):
            if any(_nested(a, tainted) and not (k == "index" and _scalar_index(a, tainted))
                   and not (k == "values" and st.prim.shows_values)
                   for k, a in st.args.items()):
                return False
            hit = [k for k, a in st.args.items() if _direct(a, tainted)]
            if hit:
                if not all(_value_only(st.prim, k) for k in hit):
                    return False
                tainted.add(st.out)
        elif isinstance(st, If):
            if not (_scan(st.body, tainted) and _scan(st.orelse, tainted)):
                return False
        elif isinstance(st, ForRange):
            # a run-time trip count is fine (Numba's range, tapes sized by it); the index is
            # derived from the int, so what it reaches is checked like the int
            if any(_direct(a, tainted) for a in (st.start, st.stop, st.step)):
                tainted.add(st.var)
            if not _scan(st.body, tainted):
                return False
        elif isinstance(st, While):
            if not (_scan(st.cond_body, tainted) and _scan(st.body, tainted)):
                return False
        elif isinstance(st, Push) or isinstance(st, Const):
            pass
    return True
