"""Numba lowering of values whose length depends on the data.

`np.argwhere(m)`, `np.flatnonzero(m)`, `x[mask]` and `x[:i]` (a bound computed at run time)
have a rank and a dtype but no length known when the code is generated; specialization
(optimize/specialize.py) keeps them in `avals.unsized` with a stand-in's shape, which is never
written here: the lowered code asks Numba for the value and reads its length at run time
(`len(x)`, `x.shape[0]`). What reads such a value is lowered here too:

* `np.argwhere(m)`, `np.flatnonzero(m)`, `np.unique(x)`: Numba's own;
* `x[mask]`: Numba's boolean selection (a mask of x's shape; of more than one axis, the
  raveled mask selects from the raveled array, NumPy's order), after a check of the shapes;
* `x[...]` with slices of run-time bounds or an index array of run-time length, and
  `v[0]`, `idx[:, 0]` of such values: the index as written;
* `len(x)`, `x.size`, `np.cumsum(x)` (of every element, or along the one axis of a vector);
* products, flips, transposes, elementwise rows that broadcast, reductions along an axis,
  joins and the derivative helpers of these: lowering/cpu/unsized_shapes.py (the lengths
  read and checked when the code runs; operands that do not fit raise NumPy's error type).

Fusion never takes these values (they have no AVal), so no loop is ever sized by a stand-in.
Anything else reading them is `Unlowerable` (that statement runs in NumPy).
"""
import numpy as np

from transpile.core import ir
from transpile.core.avals import AVal
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.lowering.cpu.text import (MASK_SHAPE, Unlowerable, dtype_ctor, shape_text,
                                         size_text, where_text)
from transpile.optimize.specialize_windows import MARK
from transpile.lowering.cpu.unsized_shapes import (elementwise, lower_array_op, newaxis_getitem,
                                                   newaxis_getitem_vjp)
from transpile.primitives.internal import control as C
from transpile.primitives.internal.adjoint_helpers import (dot_vjp_left, dot_vjp_right,
                                                          getitem_vjp, reduced_count,
                                                          sum_grad, unbroadcast)
from transpile.primitives.numpy.elementwise import multiply
from transpile.primitives.numpy.arrays import linspace
from transpile.primitives.numpy.nondiff import (arange, argwhere, attr_shape, attr_size, bincount,
                                                empty, empty_like, flatnonzero, full, len_,
                                                ones, ones_like, shape, size, unique, zeros,
                                                zeros_like)
from transpile.primitives.numpy.reductions import cumsum, mean, sum_
from transpile.primitives.numpy.structure import astype, copy, getitem

# rows whose result Numba computes as NumPy does, its length found at run time
_DATA_SHAPED = (argwhere, flatnonzero, unique)


# the reasons a call runs the NumPy version (compile/specialization.py warns with them)
_LENGTHS = " | operands of different run-time lengths (NumPy broadcasts a length of 1, or raises)"


def reads_unsized(lw, st):
    """Does the equation bind or read a value of run-time length?"""
    if not lw.unsized:
        return False
    if st.out in lw.unsized:
        return True
    return any(isinstance(a, Var) and a.name in lw.unsized
               for a in ir.iter_atoms(st.args.values()))


def rank_dtype(lw, a):
    """(rank, dtype) of an atom (a value of run-time length included), or None."""
    if isinstance(a, Var):
        av = lw.avals.get(a.name) or lw.unsized.get(a.name)
        return None if av is None else (av.ndim, av.dtype)
    if isinstance(a, Const) and np.ndim(a.value) == 0 and not isinstance(a.value, str):
        return 0, np.result_type(a.value)
    return None


def _out_dtype(lw, st):
    av = lw.avals.get(st.out) or lw.unsized.get(st.out)
    return None if av is None else av.dtype


def lower_unsized(lw, st):
    """The lines that bind st.out (an equation reading or binding a value of run-time
    length), or None: not one of ours (the generic lowering decides, and refuses what it
    cannot type)."""
    prim, a = st.prim, st.args
    x = a.get("x")
    fmt = lw.fmt
    dt = _out_dtype(lw, st)
    if prim is C.assign and isinstance(x, Var) and (x.name in lw.unsized or (
            st.out in lw.unsized and rank_dtype(lw, x) == rank_dtype(lw, Var(st.out)))):
        return [f"{st.out} = {x.name}"]     # (a name holding slices of several lengths)
    if prim is copy and isinstance(x, Var):
        return [f"{st.out} = {x.name}.copy()"]
    if prim is bincount and isinstance(x, Var) and dt is not None:
        return _bincount(lw, st, dt)
    if prim.numba is not None and prim.numba_unsized:
        # a row whose Numba form reads run-time lengths itself (np.linalg.lstsq's residuals)
        form = prim.numba(lw, st)
        if form is None:
            return None
        return form if isinstance(form, list) else [f"{st.out} = {form}"]
    if prim in _DATA_SHAPED and set(a) == {"x"} and isinstance(x, Var):
        xs = rank_dtype(lw, x)
        if xs is None or (prim is unique and xs[0] == 0):
            return None
        if prim in (argwhere, flatnonzero) and xs[0] == 1:
            return _positions(lw, st, x, 2 if prim is argwhere else 1)
        if prim is unique and xs[0] != 1:        # the unique elements of the flattened array
            return [f"{st.out} = np.unique(np.ascontiguousarray({x.name}).ravel())"]
        return [f"{st.out} = {prim.path}({x.name})"]
    if prim in (shape, attr_shape) and st.out in getattr(lw.avals, "unsized_shapes", {}):
        return [f"{st.out} = {x.name}.shape"]
    if prim is len_ and isinstance(x, Var):
        return [f"{st.out} = len({x.name})"]
    if prim in (size, attr_size, reduced_count) and isinstance(x, Var) and (
            "axis" not in a or isinstance(a["axis"], Const) and a["axis"].value is None):
        return [f"{st.out} = {x.name}.size"]
    if prim is reduced_count and isinstance(x, Var) and isinstance(a.get("axis"), Const) and \
            isinstance(a["axis"].value, (int, np.integer)) and rank_dtype(lw, x) is not None \
            and -rank_dtype(lw, x)[0] <= a["axis"].value < rank_dtype(lw, x)[0]:
        # the count a mean along one axis divides by: that axis' length
        return [f"{st.out} = {x.name}.shape[{int(a['axis'].value) % rank_dtype(lw, x)[0]}]"]
    if prim in (zeros, ones, empty, full) and st.out in lw.unsized and dt is not None:
        return _made_from_sizes(lw, st, dt)
    if prim in (arange, linspace) and st.out in lw.unsized and dt is not None:
        return _range_of_run_time_length(lw, st, dt)
    if prim in (zeros_like, ones_like, empty_like) and set(a) == {"x"} and dt is not None \
            and isinstance(x, Var):
        fn = {zeros_like: "zeros", ones_like: "ones", empty_like: "empty"}[prim]
        return [f"{st.out} = np.{fn}({x.name}.shape, {dtype_ctor(dt)})"]
    if prim is astype and isinstance(x, Var) and dt is not None:
        return [f"{st.out} = {x.name}.astype({dtype_ctor(dt)})"]
    if prim is getitem and isinstance(x, Var):
        return _getitem(lw, st)
    if prim is sum_grad and _no_axis(a) and isinstance(x, Var) and dt is not None:
        # of a sum of every element: the cotangent everywhere
        ct = a["ct"]
        if rank_dtype(lw, ct) is None or rank_dtype(lw, ct)[0] != 0:
            return None
        return [f"{st.out} = np.full({x.name}.shape, {fmt(ct)}, {dtype_ctor(dt)})"]
    if prim is sum_grad and isinstance(x, Var) and x.name in lw.unsized and dt is not None:
        return _sum_grad_along(lw, st) or lower_array_op(lw, st)
    if prim is getitem_vjp and isinstance(a["index"], IndexArg) and None in a["index"].items:
        return newaxis_getitem_vjp(lw, st, lw.index)
    if prim is getitem_vjp and _mask_of(lw, a["index"]) is not None:
        return _mask_scatter(lw, st)
    if prim is getitem_vjp and isinstance(x, Var) and x.name in lw.unsized and dt is not None \
            and _basic(lw, a["index"]):
        # a basic index names each element once: the cotangent there, 0 elsewhere
        return [f"{st.out} = np.zeros({x.name}.shape, {dtype_ctor(dt)})",
                f"{st.out}[{lw.index(a['index'], st)}] = {fmt(a['ct'])}"]
    if prim is unbroadcast:
        return lower_array_op(lw, st) or _unbroadcast(lw, st)
    if prim is C.written_part:
        return _written_part(lw, st)
    if prim in (dot_vjp_left, dot_vjp_right):
        # of a dot of two vectors: the cotangent (a scalar) times the other vector
        other = a["y"] if prim is dot_vjp_left else x
        ranks = [rank_dtype(lw, v) for v in (a["ct"], x, a["y"])]
        if None in ranks or [r[0] for r in ranks] != [0, 1, 1]:
            return None
        return elementwise(lw, Eqn(st.out, multiply, {"x": a["ct"], "y": other}, st.loc))
    if prim.elementwise and st.out in lw.unsized:
        return elementwise(lw, st)
    if prim is cumsum and isinstance(x, Var) and dt is not None and set(a) <= {"x", "axis"} \
            and (_no_axis(a) or rank_dtype(lw, x) is not None and rank_dtype(lw, x)[0] == 1
                 and isinstance(a["axis"], Const) and a["axis"].value in (0, -1)):
        # np.cumsum(np.bincount(...)): Numba's own (of the flattened array), in the result's
        # type (NumPy sums small integers and booleans as int64)
        xd = rank_dtype(lw, x)
        src = x.name if xd is not None and xd[1] == dt else f"{x.name}.astype({dtype_ctor(dt)})"
        return [f"{st.out} = np.cumsum({src})"]
    if prim in (sum_, mean) and isinstance(x, Var) and x.name in lw.unsized:
        lines = _sum_along(lw, st)
        if lines is not None:
            return lines
    return lower_array_op(lw, st)


def _bincount(lw, st, dt):
    """np.bincount(x, weights, minlength) of a vector of non-negative integers: Numba's own
    (its length, max(x) + 1 or minlength, is read at run time)."""
    x, w, m = st.args["x"], st.args.get("weights", Const(None)), st.args.get("minlength",
                                                                           Const(0))
    xs = rank_dtype(lw, x)
    if xs is None or xs[0] != 1 or xs[1].kind not in "iu" or not isinstance(m, (Var, Const)):
        return None
    args = [x.name]
    if not (isinstance(w, Const) and w.value is None):
        ws = rank_dtype(lw, w) if isinstance(w, Var) else None
        if ws is None or ws[0] != 1:
            return None
        args.append(w.name if ws[1] == dt else f"{w.name}.astype({dtype_ctor(dt)})")
    else:
        args.append("None")
    args.append(lw.fmt(m))
    return [f"{st.out} = np.bincount({', '.join(args)})"]


def _made_from_sizes(lw, st, dt):
    """np.zeros(n) / ones / empty / full with lengths computed at run time (integers, or a
    tuple of them): Numba's own, with the dtype specialization found."""
    shape = st.args["shape"]
    items = shape.items if isinstance(shape, TupleArg) else (shape,)
    for it in items:
        r = rank_dtype(lw, it) if isinstance(it, (Var, Const)) else None
        if r is None or r[0] != 0 or r[1].kind not in "iu":
            return None
    dims = [lw.fmt(it) for it in items]
    text = f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
    if st.prim is full:
        fill = st.args["fill_value"]
        r = rank_dtype(lw, fill) if isinstance(fill, (Var, Const)) else None
        if r is None or r[0] != 0:
            return None
        return [f"{st.out} = np.full({text}, {lw.fmt(fill)}, {dtype_ctor(dt)})"]
    return [f"{st.out} = {st.prim.path}({text}, {dtype_ctor(dt)})"]


def _range_of_run_time_length(lw, st, dt):
    """np.arange(-r, r + 1) / np.linspace(a, b, n) with a bound or count computed at run time:
    Numba's own (the arguments as written, NumPy's meaning), cast to the dtype specialization
    found."""
    a = st.args
    keys = ("start", "stop", "step") if st.prim is arange else ("start", "stop", "num")
    given = [k for k in keys if k in a and not (isinstance(a[k], Const) and a[k].value is None)]
    if given != list(keys[:len(given)]) or not given:
        return None           # (np.arange(5, step=2): not written positionally)
    if st.prim is linspace and not (isinstance(a.get("endpoint", Const(True)), Const) and
                                    a.get("endpoint", Const(True)).value is True):
        return None
    for k in given:
        r = rank_dtype(lw, a[k]) if isinstance(a[k], (Var, Const)) else None
        if r is None or r[0] != 0 or r[1].kind not in "iuf":
            return None
    args = ", ".join(lw.fmt(a[k]) for k in given)
    return [f"{st.out} = {st.prim.path}({args}).astype({dtype_ctor(dt)})"]


def _sum_grad_along(lw, st):
    """The cotangent of a sum along one axis of a value of run-time length: the cotangent
    repeated along that axis."""
    x, ct, a = st.args["x"], st.args["ct"], st.args
    xs, cs, dt = rank_dtype(lw, x), rank_dtype(lw, ct), _out_dtype(lw, st)
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    if xs is None or cs is None or not isinstance(ct, Var) or not isinstance(axis, Const) or \
            not isinstance(axis.value, (int, np.integer)) or isinstance(axis.value, bool) or \
            not -xs[0] <= axis.value < xs[0] or not isinstance(keep, Const) or keep.value or \
            cs[0] != xs[0] - 1:
        return None
    k, i = int(axis.value) % xs[0], f"{st.out}_i"
    at = ", ".join(i if d == k else ":" for d in range(xs[0]))
    return [f"{st.out} = np.empty({x.name}.shape, {dtype_ctor(dt)})",
            f"for {i} in range({x.name}.shape[{k}]):",
            f"    {st.out}[{at}] = {ct.name}"]


def _sum_along(lw, st):
    """np.sum / np.mean along one axis of an array of run-time length and rank >= 2 (rows a
    mask picked): Numba's np.sum along the axis (a mean divides it by that axis' length)."""
    x, a = st.args["x"], st.args
    xs, dt = rank_dtype(lw, x), _out_dtype(lw, st)
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    if xs is None or xs[0] < 2 or dt is None or not isinstance(axis, Const) or \
            not isinstance(axis.value, (int, np.integer)) or isinstance(axis.value, bool) or \
            not -xs[0] <= axis.value < xs[0] or not isinstance(keep, Const) or keep.value or \
            set(a) - {"x", "axis", "keepdims"} or not np.issubdtype(dt, np.inexact):
        return None
    k = int(axis.value) % xs[0]
    src = x.name if xs[1] == dt else f"{x.name}.astype({dtype_ctor(dt)})"
    total = f"np.sum({src}, axis={k})"
    if st.prim is mean:
        total += f" / {x.name}.shape[{k}]"
    return [f"{st.out} = {total}"]


def _basic(lw, index):
    """Is the index made of integers and slices only (no arrays, no new axes)?"""
    def scalar_int(it):
        r = rank_dtype(lw, it) if isinstance(it, (Var, Const)) else None
        return r is not None and r[0] == 0 and r[1].kind in "iu"
    return isinstance(index, IndexArg) and all(
        isinstance(it, SliceArg) or scalar_int(it) for it in index.items)


def _no_axis(a):
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    return isinstance(axis, Const) and axis.value is None and isinstance(keep, Const) and \
        not keep.value


def _mask_scatter(lw, st):
    """The cotangent of x in x[mask]: zeros of x's shape, ct's values where the mask is
    true, in NumPy's (C) order."""
    ct, mask = st.args["ct"], _mask_of(lw, st.args["index"])
    av = lw.avals.get(st.out)
    if av is None or not isinstance(ct, Var) or rank_dtype(lw, ct) is None:
        return None
    rows = rank_dtype(lw, mask)[0] == 1 and len(av.shape) > 1 and \
        rank_dtype(lw, ct)[0] == len(av.shape)     # rows picked by a vector mask
    if not rows and (rank_dtype(lw, ct)[0] != 1 or rank_dtype(lw, mask)[0] != len(av.shape)):
        return None
    j, at = f"{st.out}_j", f"{st.out}_at"
    check = f"{mask.name}.shape[0] != {av.shape[0]}" if rows else \
        f"{mask.name}.shape != {shape_text(av.shape)}"
    loop = f"for {at} in range({mask.name}.shape[0]):" if rows else \
        f"for {at} in np.ndindex({shape_text(av.shape)}):"
    return [f"if {check}:",
            f"    raise IndexError({MARK + ' ' + where_text(st) + MASK_SHAPE!r})",
            f"{st.out} = np.zeros({shape_text(av.shape)}, {dtype_ctor(av.dtype)})",
            f"{j} = 0",
            loop,
            f"    if {mask.name}[{at}]:",
            f"        {st.out}[{at}] = {ct.name}[{j}]",
            f"        {j} += 1"]


def _mask_of(lw, index):
    """The boolean mask of x[mask] (a Var), or None."""
    if not isinstance(index, IndexArg) or len(index.items) != 1:
        return None
    m = index.items[0]
    r = rank_dtype(lw, m) if isinstance(m, Var) else None
    return m if r is not None and r[0] >= 1 and r[1] == np.bool_ else None


def _getitem(lw, st):
    x, index = st.args["x"], st.args["index"]
    if isinstance(index, IndexArg) and len(index.items) == 1 and \
            isinstance(index.items[0], TupleArg) and index.items[0].kind == "tuple":
        index = IndexArg(index.items[0].items)      # x[idx], idx = np.nonzero(m)
        st = Eqn(st.out, st.prim, dict(st.args, index=index), st.loc)
    mask = _mask_of(lw, index)
    if mask is None and isinstance(index, IndexArg) and len(index.items) > 1 and \
            all(it is None for it in index.items[1:]) and \
            _mask_of(lw, IndexArg(index.items[:1])) is not None:
        return _mask_then_new_axes(lw, st)
    if mask is None and (_gather_all_axes(lw, x, index) or _gather_vector(lw, x, index)):
        return _gather(lw, st)     # (a loop: Numba's x[idx] is 4x slower than NumPy's)
    if mask is None and _table_lookup(lw, x, index):
        # lut[img] (lut = np.bincount(...)): Numba's subscript of the flattened index
        i = index.items[0].name
        return [f"{st.out} = {x.name}[np.ascontiguousarray({i}).ravel()].reshape({i}.shape)"]
    if mask is None and isinstance(index, IndexArg) and None in index.items:
        return newaxis_getitem(lw, st, lw.index)
    if mask is None:
        return [f"{st.out} = {x.name}[{lw.index(index, st)}]"]
    xs, ms = rank_dtype(lw, x), rank_dtype(lw, mask)
    if xs is not None and ms[0] == 1 and xs[0] > 1:
        # rows picked by a vector mask (Numba's x[mask] takes one 1-D boolean index)
        return [f"if {mask.name}.shape[0] != {x.name}.shape[0]:     # NumPy's error, from NumPy",
                f"    raise IndexError({MARK + ' ' + where_text(st) + MASK_SHAPE!r})",
                f"{st.out} = {x.name}[{mask.name}]"]
    if xs is None or xs[0] != ms[0]:
        raise Unlowerable(st, "a boolean mask of fewer axes than the array")
    # NumPy raises on a mask of another shape: the NumPy version then runs (and says so)
    check = [f"if {mask.name}.shape != {x.name}.shape:     # NumPy's error, from NumPy",
             f"    raise IndexError({MARK + ' ' + where_text(st) + MASK_SHAPE!r})"]
    if xs[0] == 1:
        return check + _selected(lw, st, x, mask)
    return check + [f"{st.out} = {x.name}.ravel()[{mask.name}.ravel()]"]


def _mask_then_new_axes(lw, st):
    """x[mask, None] (`counts[nz, None]`, to divide the rows picked by nz): x[mask], then
    that many axes of length 1 after its first."""
    index = st.args["index"]
    sel = Eqn(f"{st.out}_sel", st.prim, dict(st.args, index=IndexArg(index.items[:1])), st.loc)
    xs, ms = rank_dtype(lw, st.args["x"]), rank_dtype(lw, index.items[0])
    rank = xs[0] - ms[0] + 1
    lw.unsized[sel.out] = AVal((0,) * rank, xs[1])       # x's dtype, a length read at run time
    dims = [f"{sel.out}.shape[0]"] + ["1"] * (len(index.items) - 1) + \
        [f"{sel.out}.shape[{d}]" for d in range(1, rank)]
    return _getitem(lw, sel) + [f"{st.out} = np.ascontiguousarray({sel.out}).reshape("
                                f"({', '.join(dims)},))"]


def _true(m, k, is_bool):
    """m[k] as 0 or 1 (np.nonzero of numbers: not 0)."""
    return f"{m}[{k}]" if is_bool else f"({m}[{k}] != 0)"


def _count_true(m, n, bool_=True):
    """Lines counting the true elements of the vector m into n. The count and the fill after
    it add the mask's booleans instead of branching on them (a random mask mispredicts every
    other branch: 10x slower; Numba's own np.argwhere and x[mask] are as slow)."""
    return [f"{n} = 0",
            f"for {n}_k in range({m}.shape[0]):",
            f"    {n} += {_true(m, f'{n}_k', bool_)}"]


def _positions(lw, st, m, rank):
    """np.flatnonzero(m) (rank 1) / np.argwhere(m) (rank 2) of a vector m: every position
    is written, the count moves past the true ones (one spare element at the end)."""
    n, k = f"{st.out}_n", f"{st.out}_k"
    shape = f"({n} + 1,)" if rank == 1 else f"({n} + 1, 1)"
    at = f"{st.out}[{n}]" if rank == 1 else f"{st.out}[{n}, 0]"
    is_bool = rank_dtype(lw, m)[1] == np.bool_
    return _count_true(m.name, n, is_bool) + [
        f"{st.out} = np.empty({shape}, np.int64)",
        f"{n} = 0",
        f"for {k} in range({m.name}.shape[0]):",
        f"    {at} = {k}",
        f"    {n} += {_true(m.name, k, is_bool)}",
        f"{st.out} = {st.out}[:{n}]"]


def _selected(lw, st, x, mask):
    """x[mask] of vectors (their shapes checked equal), written as _positions is."""
    n, k = f"{st.out}_n", f"{st.out}_k"
    return _count_true(mask.name, n) + [
        f"{st.out} = np.empty({n} + 1, {dtype_ctor(_out_dtype(lw, st))})",
        f"{n} = 0",
        f"for {k} in range({x.name}.shape[0]):",
        f"    {st.out}[{n}] = {x.name}[{k}]",
        f"    {n} += {mask.name}[{k}]",
        f"{st.out} = {st.out}[:{n}]"]


def _gather_all_axes(lw, x, index, rank=None):
    """A[r, c] with one integer vector per axis of A (np.nonzero's result)?"""
    xs = (rank, None) if rank else rank_dtype(lw, x)
    if xs is None or xs[0] < (rank or 2) or not isinstance(index, IndexArg) or \
            len(index.items) != xs[0]:
        return False
    for it in index.items:
        r = rank_dtype(lw, it) if isinstance(it, Var) else None
        if r is None or r[0] != 1 or r[1].kind not in "iu":
            return False
    return True


def _table_lookup(lw, x, index):
    """x[idx], x a vector and idx an integer array of two or more axes?"""
    xs = rank_dtype(lw, x)
    if xs is None or xs[0] != 1 or not isinstance(index, IndexArg) or len(index.items) != 1 \
            or not isinstance(index.items[0], Var):
        return False
    r = rank_dtype(lw, index.items[0])
    return r is not None and r[0] >= 2 and r[1].kind in "iu"


def _gather_vector(lw, x, index):
    """x[idx], x a vector and idx an integer vector?"""
    xs = rank_dtype(lw, x)
    return xs is not None and xs[0] == 1 and _gather_all_axes(lw, None, index, 1)


def _gather(lw, st):
    """A[r, c]: element k is A[r[k], c[k]] (Numba indexes with one array at most); x[idx]
    of a vector likewise."""
    x, items = st.args["x"], [it.name for it in st.args["index"].items]
    dt = _out_dtype(lw, st)
    k = f"{st.out}_k"
    lines = []
    for v in dict.fromkeys(items[1:]):
        if v != items[0]:
            lines += [f"if {v}.shape[0] != {items[0]}.shape[0]:",
                      f"    raise IndexError({MARK + ' ' + where_text(st) + _LENGTHS!r})"]
    at = ", ".join(f"{v}[{k}]" for v in items)
    return lines + [f"{st.out} = np.empty({items[0]}.shape[0], {dtype_ctor(dt)})",
                    f"for {k} in range({items[0]}.shape[0]):",
                    f"    {st.out}[{k}] = {x.name}[{at}]"]


def _unbroadcast(lw, st):
    """rt.unbroadcast(ct, x), ct a vector of run-time length: summed for a scalar x, itself
    for a vector x of its length (another length: the NumPy version runs)."""
    ct, x = st.args["ct"], st.args["x"]
    cs, xs = rank_dtype(lw, ct), rank_dtype(lw, x)
    dt = _out_dtype(lw, st)
    if cs is None or xs is None or dt is None or not isinstance(ct, Var):
        return None
    if xs[0] == 0:
        return [f"{st.out} = {dtype_ctor(dt)}(np.sum({ct.name}))"]
    xav = lw.av(x) if isinstance(x, Var) else None
    if cs[0] >= 2 and xav is not None and xs[0] in (cs[0], cs[0] - 1) and \
            ct.name in lw.unsized:
        # rows a mask picked (ct of one more axis than x: summed over them), or x of ct's rank
        # whose lengths match (NumPy's broadcast of a length of 1 there: the NumPy version)
        lead = cs[0] - xs[0]
        check = " or ".join(f"{ct.name}.shape[{lead + k}] != {size_text(n)}"
                            for k, n in enumerate(xav.shape))
        cast = ct.name if cs[1] == dt else f"{ct.name}.astype({dtype_ctor(dt)})"
        return [f"if {check}:",
                f"    raise IndexError({MARK + ' ' + where_text(st) + _LENGTHS!r})",
                f"{st.out} = np.sum({cast}, axis=0)" if lead else f"{st.out} = {cast}.copy()"]
    if cs[0] != 1:
        return None
    if xs[0] != 1 or not isinstance(x, Var):
        return None
    cast = ct.name if cs[1] == dt else f"{ct.name}.astype({dtype_ctor(dt)})"
    return [f"if {ct.name}.shape[0] != {x.name}.shape[0]:",
            f"    raise IndexError({MARK + ' ' + where_text(st) + _LENGTHS!r})",
            f"{st.out} = {cast}"]


def _written_part(lw, st):
    """rt.written_part(g, idx) of a write v[idx] = ... into a vector, idx an integer vector of
    run-time length: g[idx], with 0 where a later position of idx names the same element
    (NumPy keeps the last value written there)."""
    x, index = st.args["x"], st.args["index"]
    if isinstance(x, Var) and _mask_of(lw, index) is not None:
        # a mask names each element once: what it picks of g, in C order (as x[mask])
        return _getitem(lw, Eqn(st.out, getitem, {"x": x, "index": index}, st.loc))
    xs = rank_dtype(lw, x) if isinstance(x, Var) else None
    if xs is None or xs[0] != 1 or not isinstance(index, IndexArg) or len(index.items) != 1:
        return None
    idx = index.items[0]
    r = rank_dtype(lw, idx) if isinstance(idx, Var) else None
    dt = _out_dtype(lw, st)
    if r is None or r[0] != 1 or r[1].kind not in "iu" or dt is None:
        return None
    k, at, seen = f"{st.out}_k", f"{st.out}_at", f"{st.out}_seen"
    return [f"{st.out} = np.empty({idx.name}.shape[0], {dtype_ctor(dt)})",
            f"{seen} = np.zeros({x.name}.shape[0], np.bool_)",
            f"for {k} in range({idx.name}.shape[0] - 1, -1, -1):     # the last write wins",
            f"    {at} = {idx.name}[{k}] % {x.name}.shape[0] if {idx.name}[{k}] < 0 "
            f"else {idx.name}[{k}]",
            f"    {st.out}[{k}] = 0 if {seen}[{at}] else {x.name}[{at}]",
            f"    {seen}[{at}] = True"]
