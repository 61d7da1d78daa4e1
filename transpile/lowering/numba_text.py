"""What every part of the Numba CPU code generator shares: `Unlowerable` (the error raised
for a construct with no Numba lowering; jit then runs the NumPy code) and how dtypes,
constants and shapes are written in the lowered source (`np.float32(1.5)`, `(3,)`).

numba_cpu.py (statements, expressions, module), numba_kernels.py (fused loops),
numba_control.py and numba_segments.py all print through these.
"""
import re

import numpy as np

from transpile import ir


class Unlowerable(Exception):
    """A construct the Numba backend has no lowering for (jit falls back to NumPy).

    `where` is the user's file:line (from the equation or `loc`), `construct` what the user
    wrote (an assignment, a subscript write, np.cumsum(...)), `why` the reason."""

    def __init__(self, eqn, why="", loc=None, construct=None):
        self.eqn = eqn
        loc = loc if loc is not None else (eqn.loc if eqn is not None else None)
        self.where = f"{loc[0]}:{loc[1]}" if loc else "generated code"
        if construct is None:
            from transpile.lowering.numba_control import construct_of
            construct = construct_of(eqn)
        self.construct = construct
        self.why = why
        super().__init__(f"{construct} at {self.where}{': ' + why if why else ''}")


def dtype_ctor(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "np.bool_"
    return f"np.{dtype.name}"


_CALL = re.compile(r"[\w.]\(")


def typed(expr, tmpl, dtype, operand_dtypes):
    """`expr` as a value of `dtype`: `np.float64(expr)` unless the template is operators
    only (no call) on operands that all have that floating dtype already, whose result has
    it too (`a * b` rather than `np.float64((a * b))`)."""
    dtype = np.dtype(dtype)
    ctor = dtype_ctor(dtype)
    if expr.startswith(ctor + "(") and _unwrap(expr[len(ctor):]) != expr[len(ctor):]:
        return expr                     # already `np.float64(...)` as a whole
    if np.issubdtype(dtype, np.inexact) and not _CALL.search(tmpl) and operand_dtypes and \
            all(d is not None and np.dtype(d) == dtype for d in operand_dtypes):
        return _unwrap(expr)
    return f"{ctor}({expr})"


def _unwrap(expr):
    """expr without one pair of parentheses around all of it."""
    if not (expr.startswith("(") and expr.endswith(")")):
        return expr
    depth = 0
    for k, ch in enumerate(expr):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and k < len(expr) - 1:
            return expr
    return expr[1:-1]


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
