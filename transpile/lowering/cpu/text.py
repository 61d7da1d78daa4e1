"""What every part of the Numba CPU code generator shares: `Unlowerable` (the error raised
for a construct with no Numba lowering; jit then runs the NumPy code) and how dtypes,
constants and shapes are written in the lowered source (`np.float32(1.5)`, `(3,)`).

Sizes are read at run time where the generator knows where they come from: while a function
is lowered, a `SizeNamer` names each size (2 or more) after the first argument dimension that
has it (`x__n0 = x.shape[0]`), so `shape_text((200, 64))` prints `(x__n0, w__n0)`. The text
is then the same for another batch size, and jit reuses the compiled code (compile/backends.py).
A size no argument has (a concatenation's, say) stays a constant; a size of 1 always does
(broadcasting depends on it). Either way the text is right for the shapes it was generated
for: jit compares texts, never assumes them equal.

lowering/cpu/module.py (statements, expressions, module), lowering/cpu/kernels.py (fused loops),
lowering/cpu/control.py and lowering/cpu/segments.py all print through these.
"""
import re

import numpy as np

from transpile.core import ir
from transpile.core.ir import construct_of

_NAMERS = []     # the SizeNamer of the function being lowered (innermost last)


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


# the reason a boolean mask's shape check gives (the call then runs NumPy, which raises)
MASK_SHAPE = " | a boolean mask of another shape than the array (NumPy raises)"


def where_text(st):
    """'file:line' of the user's statement `st` (for messages raised by compiled code)."""
    loc = st.loc
    return f"{loc[0]}:{loc[1]}" if loc and loc[0] else "?"


def dtype_ctor(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "np.bool_"
    return f"np.{dtype.name}"


def atom_const_text(c, dtype=None):
    """A Const atom: a count of elements (ir.SizeConst) as the product of the sizes it came
    from, read at run time where they are named; any other as `const_text`."""
    if isinstance(c, ir.SizeConst) and _NAMERS:
        expr = product_text(c.dims)
        if dtype is not None and np.issubdtype(np.dtype(dtype), np.number):
            return f"{dtype_ctor(dtype)}({expr})"
        return expr
    return const_text(c.value, dtype)


def unsigned_operand(a, av, out_dtype):
    """np.uint64 where a Python int operand (a constant >= 0, or a weak int value whose range
    the code checks) meets a uint64 result: NumPy 2 computes `u // 3` in uint64, where Numba
    would compute int64 with uint64 in float64 and lose the low bits; else None."""
    if np.dtype(out_dtype) != np.uint64:
        return None
    if isinstance(a, ir.Const):
        ok = type(a.value) is int and a.value >= 0
    else:
        ok = av is not None and av.weak and np.dtype(av.dtype).kind == "i"
    return np.uint64 if ok else None


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
    text = ir.format_const(value)
    if isinstance(value, (int, float)) and text.startswith("-"):
        # a negative literal is one operand: `(-1) ** k`, not `-1 ** k` (which is -(1 ** k))
        return f"({text})"
    return text


def shape_text(shape):
    namer = _NAMERS[-1] if _NAMERS else None
    items = [namer.size(n) if namer is not None else str(int(n)) for n in shape]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def size_text(n):
    """One size (an int) as the function being lowered reads it."""
    return _NAMERS[-1].size(n) if _NAMERS else str(int(n))


def product_text(dims):
    """The product of sizes, as a run-time expression where the sizes are named."""
    dims = [int(d) for d in dims if int(d) != 1]
    if not dims:
        return "1"
    return " * ".join(size_text(d) for d in dims)


class SizeNamer:
    """Names sizes after array dimensions that are in scope: `names` maps a size to the
    expression that reads it (the first array dimension with that size wins). `local` (a
    function's parameters) binds each used size to a local at the function's start, listed by
    `prologue`; otherwise the expression (`out.shape[0]`) is used as is."""

    def __init__(self, arrays, local=False):
        self.names = {}          # size -> (array, dimension)
        self.local = local
        self.used = {}           # local name -> (array, dimension), in order of first use
        for name, shape in arrays:
            for d, n in enumerate(shape):
                if int(n) >= 2 and int(n) not in self.names:
                    self.names[int(n)] = (name, d)

    def size(self, n):
        where = self.names.get(int(n))
        if where is None:
            return str(int(n))
        if not self.local:
            return f"{where[0]}.shape[{where[1]}]"
        name = f"{where[0]}__n{where[1]}"
        self.used[name] = where
        return name

    def prologue(self, indent):
        """The lines that read the sizes this function used from its arguments."""
        lines = [f"{indent}{name} = {arr}.shape[{d}]" for name, (arr, d) in self.used.items()]
        if lines:
            lines.insert(0, f"{indent}# sizes, read at run time (one compilation serves every "
                            "batch size)")
        return lines

    def __enter__(self):
        _NAMERS.append(self)
        return self

    def __exit__(self, *exc):
        _NAMERS.pop()
