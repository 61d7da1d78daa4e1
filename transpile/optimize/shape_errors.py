"""Shape mismatches found while jit specializes: `(a + 1.0) @ b` with `b` of the wrong shape
fails on every call with these shapes, so jit says so before any code runs, at the user's
line and with both shapes, instead of compiling nothing and falling back to NumPy."""
import numpy as np

from transpile.errors import IndexOutOfBounds, ShapeMismatch
from transpile.core.ir import Const, IndexArg, Var, construct_of
from transpile.primitives.numpy.structure import getitem

_SHAPE_WORDS = ("broadcast", "mismatch", "not aligned", "core dimension")


def shape_mismatch(sp, eqn, error):
    """A ShapeMismatch for equation `eqn`, whose stand-in evaluation raised `error`, when it is
    a shape mismatch of operands whose shapes are all known; else None."""
    if isinstance(error, IndexError) and eqn.prim is getitem:
        return _out_of_bounds(sp, eqn, error)
    if not isinstance(error, ValueError) or not any(w in str(error) for w in _SHAPE_WORDS):
        return None
    prim = eqn.prim
    if not (prim.elementwise or prim.product):   # the operands' shapes alone decide the fit
        return None
    shapes = []
    for a in eqn.args.values():
        if isinstance(a, Var):
            av = sp.avals.get(a.name)
            if av is None:
                return None       # an operand of unknown shape: nothing certain
            shapes.append(tuple(av.shape))
        elif isinstance(a, Const) and isinstance(a.value, np.ndarray):
            shapes.append(a.value.shape)
    if len(shapes) < 2:
        return None
    construct = construct_of(eqn)
    loc = eqn.loc
    filename, lineno = (loc[0], loc[1]) if loc else (None, None)
    text = sp.core.source_lines.get((filename, lineno), "") if loc else ""
    listed = " and ".join(str(s) for s in shapes)
    what = f"cannot be broadcast together in {construct}" if prim.elementwise else \
        f"do not fit in {construct}: {error}"
    return ShapeMismatch(
        f"shapes {listed} {what}",
        filename=filename, lineno=lineno, construct=text or construct,
        hint="check the shapes of the arguments of this call (jit checks them before "
        "running any code)")


def _out_of_bounds(sp, eqn, error):
    """x[3] with x of 3 rows: an IndexOutOfBounds when the index is a constant (int
    positions only) and x's shape is known."""
    x, index = eqn.args.get("x"), eqn.args.get("index")
    if not isinstance(x, Var) or sp.avals.get(x.name) is None or "out of bounds" not in \
            str(error):
        return None
    items = index.items if isinstance(index, IndexArg) else (index,)
    if not all(isinstance(i, Const) and isinstance(i.value, (int, np.integer)) and
               not isinstance(i.value, bool) for i in items):
        return None
    loc = eqn.loc
    filename, lineno = (loc[0], loc[1]) if loc else (None, None)
    text = sp.core.source_lines.get((filename, lineno), "") if loc else ""
    return IndexOutOfBounds(f"{error} (an array of shape {tuple(sp.avals[x.name].shape)})",
                            filename=filename, lineno=lineno, construct=text or None,
                            hint="check the index against the array's shape (jit checks "
                            "constant indices before running any code)")
