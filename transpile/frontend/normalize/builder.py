"""Where the normalizer's equations go: `Namer` (collision-safe names derived from the user's)
and `Builder` (appends `out = prim(**args)` equations, folding constants and exact identities
such as x * 1, x + 0 and -(-x); jit and the alias model hook into every equation it emits)."""
import keyword
import contextvars
import operator

import gast

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives import by_name
from transpile.primitives.numpy.elementwise import (add, divide, multiply, negative, power,
                                                    subtract, where)

# jit (and a transform that needs its arguments' shapes) installs a hook here: the outermost
# function's parameters have known shapes (transpile/api/shape_folding.py)
SPECIALIZE = contextvars.ContextVar("transpile_specialize", default=None)


# ---------------------------------------------------------------------------------------------
# naming


class _Taken(set):
    """The names in use, with the lowest number each base may still have free (a loop read
    ahead over 100,000 rows named its items in quadratic time, trying item_2, item_3, ...)."""

    def __init__(self, names=()):
        super().__init__(names)
        self.low = {}

    def discard(self, name):
        super().discard(name)
        base, _, num = name.rpartition("_")
        if base and num.isdigit() and base in self.low:
            self.low[base] = min(self.low[base], int(num))

    def remove(self, name):
        super().remove(name)
        self.discard(name)


class Namer:
    """Collision-safe names derived from the user's."""

    def __init__(self, reserved=()):
        self.taken = _Taken(reserved)

    def reserve(self, names):
        self.taken |= set(names)

    def fresh(self, base):
        base = identifier(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        return self.numbered(base, start=2)

    def numbered(self, base, start=1):
        base = identifier(base)
        taken, low = self.taken, getattr(self.taken, "low", None)
        i = start
        if i < 2 and f"{base}_{i}" in taken:
            i = 2
        known = 2 if low is None else low.get(base, 2)   # base_2 .. base_{known-1}: taken
        if i >= 2 and i <= known:
            i = known
        while f"{base}_{i}" in taken:
            i += 1
        if low is not None and start <= known:
            low[base] = max(known, i + 1)
        name = f"{base}_{i}"
        taken.add(name)
        return name


def identifier(text):
    s = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(text))
    if not s or s[0].isdigit():
        s = "v" + s
    return s + "_" if keyword.iskeyword(s) else s


def names_in(node):
    out = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name):
            out.add(n.id)
    return out


# ---------------------------------------------------------------------------------------------
# the builder: emits equations with small algebraic simplifications


# row -> the operator that folds it on constants
_FOLD = {by_name(name): op for name, op in {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "power": operator.pow, "negative": operator.neg,
    "positive": operator.pos, "greater": operator.gt, "less": operator.lt,
    "greater_equal": operator.ge, "less_equal": operator.le, "equal": operator.eq,
    "not_equal": operator.ne, "floor_divide": operator.floordiv, "mod": operator.mod,
    "logical_not": operator.not_}.items()}


def _is_num(a, v):
    return isinstance(a, Const) and type(a.value) in (int, float) and a.value == v


class Builder:
    on_emit = None   # optional hook: Eqn -> replacement atom or None (set by jit)
    on_note = None   # optional hook: Eqn -> None, told of every equation (the alias model)
    fresh_results = False   # user code: an operation never returns its argument's buffer
    avals = None     # name -> AVal where shapes are known while normalizing (api/shape_folding.py)
    unsized = None   # name -> AVal (rank and dtype; lengths known only at run time), likewise

    def __init__(self, namer):
        self.namer = namer
        self.body = []
        self.loc = None

    def emit(self, prim, args, base="t", out=None):
        """Append `out = prim(**args)` (simplified where exact) and return the result atom."""
        args = {k: v for k, v in args.items()}
        simple = self._simplify(prim, args)
        if simple is not None:
            return simple
        name = out or self.namer.numbered(base)
        self.body.append(Eqn(name, prim, args, self.loc))
        if self.on_note is not None:
            self.on_note(self.body[-1])
        if self.on_emit is not None:        # jit: shape queries on known shapes fold
            folded = self.on_emit(self.body[-1])
            if folded is not None:
                self.body.pop()
                return folded
        return Var(name)

    def _simplify(self, prim, args):
        simple = self._simplify_any(prim, args)
        if self.fresh_results and isinstance(simple, Var) and any(
                isinstance(a, Var) and a.name == simple.name for a in args.values()):
            return None     # user code: `y = x * 1.0` is a new array, not another name for x
        return simple

    def _simplify_any(self, prim, args):
        vals = list(args.values())
        fold = _FOLD.get(prim)
        if fold is not None and vals and all(isinstance(a, Const) and _foldable(a.value)
                                             for a in vals):
            try:
                result = fold(*[a.value for a in vals])
            except Exception:
                return None
            if ir.is_literal(result):
                return Const(result)
        x, y = args.get("x"), args.get("y")
        if prim is multiply:
            if _is_num(y, 1) and isinstance(x, Var):
                return x
            if _is_num(x, 1) and isinstance(y, Var):
                return y
            if _is_num(y, -1) and isinstance(x, Var):
                return self.emit(negative, {"x": x}, base=x.name)
            if _is_num(x, -1) and isinstance(y, Var):
                return self.emit(negative, {"x": y}, base=y.name)
        if prim is add:
            if _is_num(y, 0) and isinstance(x, Var):
                return x
            if _is_num(x, 0) and isinstance(y, Var):
                return y
        if prim is subtract and _is_num(y, 0) and isinstance(x, Var):
            return x
        if prim is divide and _is_num(y, 1) and isinstance(x, Var):
            return x
        if prim is power and _is_num(y, 1) and isinstance(x, Var):
            return x
        if prim is where and isinstance(args.get("condition"), Const) and \
                type(args["condition"].value) is bool:
            # np.where(False, 0, d) of a rule at a constant (x ** 2: the k == 0 case of the
            # power rule): d itself, when the other side is an int that cannot widen it
            chosen, other = (x, y) if args["condition"].value else (y, x)
            if isinstance(chosen, Var) and isinstance(other, Const) and \
                    type(other.value) in (int, bool):
                return chosen
        if prim is negative and isinstance(x, Var) and self.body:
            last = self.body[-1]
            if not isinstance(last, Eqn):
                return None
            if last.out == x.name and last.prim is negative and isinstance(last.args["x"], Var):
                return last.args["x"]
        return None


def _foldable(v):
    return isinstance(v, (bool, int, float, str)) or v is None
