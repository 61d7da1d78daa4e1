"""What every part of the Numba CPU code generator shares: `Unlowerable` (the error raised
for a construct with no Numba lowering; jit then runs the NumPy code) and how dtypes,
constants and shapes are written in the lowered source (`np.float32(1.5)`, `(3,)`).

lowering/cpu/module.py (statements, expressions, module), lowering/cpu/kernels.py (fused loops),
lowering/cpu/control.py and lowering/cpu/segments.py all print through these.
"""
import numpy as np

from transpile.core import ir
from transpile.core.ir import construct_of


class Unlowerable(Exception):
    """A construct the Numba backend has no lowering for (jit falls back to NumPy).

    `where` is the user's file:line (from the equation or `loc`), `construct` what the user
    wrote (an assignment, a subscript write, np.cumsum(...)), `why` the reason."""

    def __init__(self, eqn, why="", loc=None, construct=None):
        self.eqn = eqn
        loc = loc if loc is not None else (eqn.loc if eqn is not None else None)
        self.where = f"{loc[0]}:{loc[1]}" if loc else "generated code"
        if construct is None:
            construct = construct_of(eqn)
        self.construct = construct
        self.why = why
        super().__init__(f"{construct} at {self.where}{': ' + why if why else ''}")


def dtype_ctor(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "np.bool_"
    return f"np.{dtype.name}"


def const_text(value, dtype=None):
    """A constant in the lowered source, typed as `dtype` when it is a number."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, float, np.generic)) and dtype is not None \
            and np.issubdtype(np.dtype(dtype), np.number):
        v = np.dtype(dtype).type(value).item()
        text = ir.format_const(v)
        return f"{dtype_ctor(dtype)}({text})"
    if isinstance(value, np.generic):
        return f"{dtype_ctor(value.dtype)}({ir.format_const(value.item())})"
    if isinstance(value, type) and issubclass(value, np.generic):
        return dtype_ctor(value)
    if isinstance(value, np.dtype):
        return dtype_ctor(value)
    return ir.format_const(value)


def shape_text(shape):
    shape = tuple(int(n) for n in shape)
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"
