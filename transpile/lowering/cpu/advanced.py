"""Numba lowering of NumPy's advanced indexing where Numba has none: integer arrays that
broadcast together, beside integers and slices.

Numba indexes with one 1-d integer array among basic indices, and puts its axis where NumPy
does only when the integers stand beside it. NumPy's rule in general (`x[i, j]`,
`logits[np.arange(n), labels]`, `A[r[:, None], c[None, :]]`, `A[idx, 1:3]`, `ytr[idx]` with
a 2-d idx, `x[1, :, idx]`): the index arrays (and the integers beside them) broadcast to one
shape B; the result has B's axes where the first of them stands when they stand side by side,
first otherwise, and the axes of the slices in order. So the lowering is a loop nest over B
whose body is a basic subscript of x (each array read at the loop position, an axis of
length 1 read at 0, the slices as written):

    out = np.empty((n,), np.float64)
    for out_b0 in range(n):
        out[out_b0] = logits[idx[out_b0], labels[out_b0]]

Writes (`M[r, c] = v`) run the same loops in NumPy's order (C order of B, so a repeated index
keeps the last value written), the value read at the loop position where it has that axis;
`M[r, c] += v` is a read, an add and such a write, as in NumPy (a repeated index is added to
once). The cotangent of a read adds at each position (np.add.at); `rt.written_part` (the part
of a write's cotangent that reaches the value) walks the loops backwards and keeps the last
write of each element. Integer indices in the subscript are Numba's own: a negative one
counts from the end, one past the end raises IndexError (bounds are checked).

A boolean array, np.newaxis or a slice with bounds known only at run time in such an index is
refused (`Unlowerable`: that statement runs in NumPy).
"""
import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.lowering.cpu.text import Unlowerable, dtype_ctor, shape_text, size_text, where_text
from transpile.optimize.fusion import FusedGroup
from transpile.optimize.specialize_windows import MARK
from transpile.primitives.internal.control import assign
from transpile.primitives.numpy.arrays import linspace
from transpile.primitives.numpy.nondiff import (arange, empty, empty_like, eye, full, full_like,
                                                identity_matrix, ones, ones_like, zeros,
                                                zeros_like)
from transpile.primitives.numpy.structure import astype, copy, getitem

# rows whose result NumPy lays out in C order whatever their arguments
_CREATED = (arange, empty, eye, full, identity_matrix, linspace, ones, zeros)
# rows whose result NumPy lays out as their array operands (elementwise rows too)
_LIKE_OPERANDS = (assign, astype, copy, zeros_like, ones_like, empty_like, full_like)


def _int_array_const(c):
    """The integer array a constant index item stands for (x[[0, 2], [1, 1]]), or None."""
    v = c.value
    if not isinstance(v, (tuple, list, np.ndarray)):
        return None
    try:
        arr = np.asarray(v)
    except (TypeError, ValueError):
        return None
    if arr.ndim == 0 or arr.dtype.kind not in "iu" or arr.size == 0:
        return None
    return arr


class AdvancedIndex:
    """x[index] with integer arrays among the items: the loops over their broadcast shape
    and the subscripts of x, of the result, and of a value written, inside them."""

    def __init__(self, lw, x_shape, items, st, name):
        self.lw, self.st, self.name = lw, st, name
        self.x_shape = tuple(int(n) for n in x_shape)
        self.setup = []             # lines before the loops (constant index arrays)
        kinds = []                  # per item: ("slice", text) / ("int", text) / ("arr", av)
        arrays = []
        for p, it in enumerate(items):
            if isinstance(it, SliceArg):
                for b in (it.lower, it.upper, it.step):
                    if b is not None and not (isinstance(b, Const) and
                                              isinstance(b.value, (int, np.integer, type(None)))):
                        raise Unlowerable(st, "an index array beside a slice with bounds known "
                                              "only at run time")
                kinds.append(("slice", self._slice_text(it)))
            elif isinstance(it, Const) and isinstance(it.value, (int, np.integer)) and \
                    not isinstance(it.value, (bool, np.bool_)):
                kinds.append(("int", str(int(it.value))))
            elif isinstance(it, Const):
                arr = _int_array_const(it)
                if arr is None:
                    raise Unlowerable(st, "an index of this kind beside an index array")
                text = f"{name}_ix{p}"
                self.setup.append(f"{text} = np.array({arr.ravel().tolist()}, np.int64)"
                                  + (f".reshape({tuple(arr.shape)})" if arr.ndim > 1 else ""))
                kinds.append(("arr", (text, tuple(arr.shape))))
                arrays.append(tuple(arr.shape))
            elif isinstance(it, Var):
                av = lw.av(it)
                if av is None or av.dtype.kind not in "iu":
                    raise Unlowerable(st, "a boolean or non-integer array beside other indices"
                                      if av is not None else "an index of unknown shape")
                if av.shape:
                    kinds.append(("arr", (it.name, tuple(int(n) for n in av.shape))))
                    arrays.append(tuple(int(n) for n in av.shape))
                else:
                    kinds.append(("int", it.name))
            else:
                raise Unlowerable(st, "np.newaxis or ... beside an index array")
        if len(kinds) > len(self.x_shape):
            raise Unlowerable(st, "too many indices for the array")
        for k in range(len(kinds), len(self.x_shape)):
            kinds.append(("slice", ":"))
        try:
            self.b_shape = tuple(int(n) for n in np.broadcast_shapes(*arrays))
        except ValueError:
            raise Unlowerable(st, "index arrays that do not broadcast together") from None
        self.kinds = kinds
        adv = [p for p, (kind, _) in enumerate(kinds) if kind != "slice"]
        self.side_by_side = adv[-1] - adv[0] == len(adv) - 1
        # the result's axes: ("b", k) for an axis of B, ("s", p) for the slice at item p
        slices = [p for p, (kind, _) in enumerate(kinds) if kind == "slice"]
        if self.side_by_side:
            self.axes = [("s", p) for p in slices if p < adv[0]] + \
                [("b", k) for k in range(len(self.b_shape))] + \
                [("s", p) for p in slices if p > adv[0]]
        else:
            self.axes = [("b", k) for k in range(len(self.b_shape))] + \
                [("s", p) for p in slices]
        lengths = {p: len(range(self.x_shape[p])[self._slice_of(items[p])])
                   for p in slices if p < len(items)}
        lengths.update({p: self.x_shape[p] for p in slices if p >= len(items)})
        self.shape = tuple(self.b_shape[k] if kind == "b" else lengths[k]
                           for kind, k in self.axes)
        self.loop_vars = [f"{name}_b{k}" for k in range(len(self.b_shape))]

    @staticmethod
    def _slice_of(it):
        return slice(*[None if b is None else int(b.value) for b in (it.lower, it.upper, it.step)])

    def _slice_text(self, it):
        lo = "" if it.lower is None else self.lw.fmt(it.lower)
        hi = "" if it.upper is None else self.lw.fmt(it.upper)
        return f"{lo}:{hi}" + (f":{self.lw.fmt(it.step)}" if it.step is not None else "")

    # -- the loops ---------------------------------------------------------------------------

    def loops(self, body, backwards=False):
        """The loop nest over B around `body` (lines at the innermost level)."""
        lines = []
        for k, v in enumerate(self.loop_vars):
            n = size_text(self.b_shape[k])
            rng = f"range({n} - 1, -1, -1)" if backwards else f"range({n})"
            lines.append("    " * k + f"for {v} in {rng}:")
        pad = "    " * len(self.loop_vars)
        return lines + [pad + line for line in body]

    def element(self, text, shape):
        """The element of an index array at the loop position (axes of length 1 at 0)."""
        off = len(self.b_shape) - len(shape)
        at = [self.loop_vars[off + d] if n != 1 or self.b_shape[off + d] == 1 else "0"
              for d, n in enumerate(shape)]
        return f"{text}[{', '.join(at)}]"

    def x_at(self):
        """The subscript of x at the loop position."""
        parts = []
        for kind, what in self.kinds:
            parts.append(self.element(*what) if kind == "arr" else what)
        return ", ".join(parts)

    def no_slices(self):
        return all(kind == "b" for kind, _ in self.axes)

    def r_at(self):
        """The subscript of the result (an array of self.shape) at the loop position."""
        return ", ".join(self.loop_vars[k] if kind == "b" else ":" for kind, k in self.axes)

    def v_at(self, text, shape):
        """The subscript of a value broadcast to self.shape (right-aligned, an axis of length 1
        read at 0), at the loop position; None when it does not broadcast as NumPy's write
        does (leading axes of length 1 are dropped)."""
        shape = tuple(int(n) for n in shape)
        while len(shape) > len(self.shape) and shape[0] == 1:
            shape, text = shape[1:], f"{text}[0]"
        if len(shape) > len(self.shape):
            return None
        off = len(self.shape) - len(shape)
        parts = []
        for d, n in enumerate(shape):
            kind, k = self.axes[off + d]
            full = self.shape[off + d]
            if n != full and n != 1:
                return None
            if kind == "b":
                parts.append(self.loop_vars[k] if n == full else "0")
            else:
                parts.append(":" if n == full else "0:1")
        if not parts:
            return text
        return f"{text}[{', '.join(parts)}]"

    def normalized(self):
        """Lines binding each index array's element at the loop position, counted from the
        start (a negative index from the end, as NumPy does), and the tuple of those names
        (the position of the element written, for `seen` below)."""
        lines, names = [], []
        for p, (kind, what) in enumerate(self.kinds):
            if kind != "arr":
                continue
            v, n = f"{self.name}_at{p}", size_text(self.x_shape[p])
            e = self.element(*what)
            lines += [f"{v} = {e}", f"if {v} < 0:", f"    {v} += {n}"]
            names.append(v)
        return lines, names

    def array_axes(self):
        return [self.x_shape[p] for p, (kind, _) in enumerate(self.kinds) if kind == "arr"]


def _items(index):
    if not isinstance(index, IndexArg):
        return None
    items = index.items
    if len(items) == 1 and isinstance(items[0], TupleArg) and items[0].kind == "tuple":
        items = items[0].items          # x[idx], idx = (r, c)
    return items


def needs_loops(lw, index):
    """Does this index have integer arrays Numba's own subscript cannot take: more than one,
    one of 2 or more axes, one apart from the integers, or a constant one?"""
    items = _items(index)
    if items is None or any(it is None or it is Ellipsis for it in items):
        return False
    arrays = []
    for p, it in enumerate(items):
        if isinstance(it, Var):
            av = lw.av(it)
            if av is not None and av.shape and av.dtype.kind in "iu":
                arrays.append((p, av.ndim))
        elif isinstance(it, Const) and _int_array_const(it) is not None:
            return True
    if not arrays:
        return False
    if len(arrays) > 1 or arrays[0][1] > 1:
        return True
    at = [p for p, it in enumerate(items) if not isinstance(it, SliceArg)]
    return at[-1] - at[0] != len(at) - 1      # x[1, :, idx]: the array's axis goes first


def _without_ellipsis(lw, x, index):
    """The index with `...` written as the full slices it stands for (x[..., r, c]), where
    x's rank is known and the index has no np.newaxis."""
    items = _items(index)
    xav = lw.av(x) if isinstance(x, Var) else None
    if items is None or Ellipsis not in items or xav is None or any(it is None for it in items):
        return index
    k = items.index(Ellipsis)
    rest = [it for it in items if it is not Ellipsis]
    fill = len(xav.shape) - len(rest)
    if fill < 0 or items.count(Ellipsis) > 1:
        return index
    return IndexArg(tuple(rest[:k]) + (SliceArg(),) * fill + tuple(rest[k:]))


def plan(lw, x, index, st, name=None, force=False):
    """The AdvancedIndex of x[index] (x a Var of known shape), or None when Numba's own
    subscript takes the index (`force`: whenever the index has an integer array)."""
    index = _without_ellipsis(lw, x, index)
    if not needs_loops(lw, index) and not (force and index_arrays(index) and any(
            lw.av(it) is not None and lw.av(it).shape for it in index_arrays(index))):
        return None
    xav = lw.av(x) if isinstance(x, Var) else None
    if xav is None or not xav.shape:
        raise Unlowerable(st, "advanced indexing of a value of unknown shape")
    return AdvancedIndex(lw, xav.shape, _items(index), st, name or st.out)


def gather(lw, st, x, p, dtype):
    """Lines binding st.out to x[index] (a fresh array of dtype)."""
    return p.setup + [f"{st.out} = np.empty({shape_text(p.shape)}, {dtype_ctor(dtype)})"] + \
        p.loops([f"{st.out}[{p.r_at()}] = {x.name}[{p.x_at()}]"])


def scatter(lw, st, dest, p, value, value_av, op="="):
    """Lines writing value (text: a scalar, or an array of value_av's shape) into
    dest[index] at every loop position (op "=": NumPy's write, the last one kept; "+=":
    np.add.at)."""
    if value_av is None or not value_av.shape:
        at = value          # a scalar (callers refuse values of run-time length)
    else:
        at = p.v_at(value, value_av.shape)
        if at is None:
            raise Unlowerable(st, f"a value of shape {tuple(value_av.shape)} written at an "
                                  f"index of shape {p.shape}")
    target = f"{dest}[{p.x_at()}]"
    if op == "=":
        return p.setup + p.loops([f"{target} = {at}"])
    return p.setup + p.loops([f"{target} = {target} + {at}"])


def last_writes(lw, st, g, p, dtype):
    """rt.written_part(g, index): g[index], with 0 where a later loop position writes the
    same element (NumPy keeps the last value written there)."""
    lines = gather(lw, st, g, p, dtype)
    seen = f"{st.out}_seen"
    norm, names = p.normalized()
    lines.append(f"{seen} = np.zeros({shape_text(tuple(p.array_axes()))}, np.bool_)")
    at = ", ".join(names)
    body = norm + [f"if {seen}[{at}]:",
                   f"    {st.out}[{p.r_at()}] = 0",
                   "else:",
                   f"    {seen}[{at}] = True"]
    return lines + p.loops(body, backwards=True)


# -- NumPy's order of a write with repeated indices ------------------------------------------

def _definitions(lw):
    defs = getattr(lw, "_adv_defs", None)
    if defs is not None and getattr(lw, "_adv_body", None) is lw.core_body:
        return defs
    defs = {}

    def walk(stmts):
        for st in stmts:
            if isinstance(st, FusedGroup):
                for o in list(st.outputs) + [e.out for e in st.eqns] + \
                        [r.out for r in st.reductions]:
                    defs.setdefault(getattr(o, "name", o), []).append(st)
            elif isinstance(st, ir.Eqn):
                defs.setdefault(st.out, []).append(st)
            for f in ("body", "orelse", "cond_body"):
                walk(getattr(st, f, None) or [])
    walk(lw.core_body)
    lw._adv_defs, lw._adv_body = defs, lw.core_body
    return defs


def _forward_view(lw, index):
    """Is x[index] a view taking x's elements in x's order: integers, np.newaxis, ... and
    slices with no step or a positive constant one (x[:, None], r[1:], r[i])?"""
    if not isinstance(index, IndexArg):
        return False
    for it in index.items:
        if it is None or it is Ellipsis:
            continue
        if isinstance(it, SliceArg):
            if it.step is not None and not (isinstance(it.step, Const) and
                                            isinstance(it.step.value, (int, np.integer)) and
                                            it.step.value > 0):
                return False
        elif isinstance(it, Var):
            av = lw.av(it)
            if av is None or av.shape or av.dtype.kind not in "iu":
                return False
        elif not (isinstance(it, Const) and isinstance(it.value, (int, np.integer))):
            return False
    return True


def _fresh(lw, st):
    """Is the value st binds a new array in NumPy (a ufunc's, a creation's, a gather's)?"""
    if isinstance(st, FusedGroup):
        return True
    if not isinstance(st, Eqn) or st.prim.view is not None and st.prim is not getitem:
        return False
    if st.prim is getitem:
        return any(isinstance(it, Var) and lw.av(it) is not None and lw.av(it).shape or
                   isinstance(it, Const) and np.ndim(it.value)
                   for it in (_items(st.args["index"]) or ()))
    return bool(st.prim.fresh or st.prim.elementwise)


def layout_checks(lw, names):
    """The arrays whose C order, checked when the code runs, means NumPy takes the elements
    of `names` (index arrays, a written value) in C order: an argument is checked itself; a
    value the function computes elementwise (a fused loop, a cast, a copy) is C-ordered in
    NumPy when its operands are, and one NumPy makes (np.arange, np.zeros) always is. None
    when that is not known (a value of another kind in the chain)."""
    defs = _definitions(lw)
    params = set(lw.params)
    checks, seen = [], set()
    todo = [n for n in names]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        av = lw.avals.get(n)
        if av is None:
            return None
        if not av.shape:
            continue
        if n in params:
            checks.append(n)
            continue
        line = sum(1 for k in av.shape if k > 1) <= 1
        for st in defs.get(n, [None]):
            if line and _fresh(lw, st):
                pass            # a new array along one axis: its elements in C order
            elif isinstance(st, FusedGroup):
                todo += [getattr(i, "name", i) for i in st.inputs]
            elif isinstance(st, Eqn) and st.prim in _CREATED:
                pass
            elif isinstance(st, Eqn) and st.prim is getitem and isinstance(st.args["x"], Var) \
                    and _forward_view(lw, st.args["index"]):
                todo.append(st.args["x"].name)     # (a C-ordered array's view is C-ordered)
            elif isinstance(st, Eqn) and (st.prim.elementwise or st.prim in _LIKE_OPERANDS):
                todo += [a.name for a in st.args.values() if isinstance(a, Var)]
            else:
                return None
    return sorted(checks)


def checked_write(lw, st, dest, p, value, value_av, operands):
    """scatter(...) of an array value, then, unless NumPy's order is known to be C order
    (`layout_checks`), a check that no element was written twice with different values:
    where one was, the call runs NumPy (MARK: NumPy's order decides which value stays)."""
    lines = scatter(lw, st, dest, p, value, value_av)
    checks = layout_checks(lw, operands)
    ordered = f"{st.out}_ordered"
    if checks is None:
        lines.append(f"{ordered} = False")
    else:
        lines.append(f"{ordered} = " + (" and ".join(f"c_ordered({c})" for c in checks)
                                        or "True"))
    at = p.v_at(value, value_av.shape)
    target = f"{dest}[{p.x_at()}]"
    same = f"same_value({target}, {at})" if p.no_slices() else \
        f"same_values({target}, {at})"
    why = (f"{MARK} {where_text(st)} | an element written twice with different values "
           "through index arrays NumPy takes in an order of their memory layout")
    body = [f"if not {same}:", f"    raise IndexError({why!r})"]
    lines.append(f"if not {ordered}:")
    lines += ["    " + line for line in p.loops(body)]
    return lines


def index_arrays(index):
    """The Vars among the items of an index (arrays and integers)."""
    return [it for it in (_items(index) or ()) if isinstance(it, Var)]
