"""Numba lowering of array operations on values of run-time length (the part of
lowering/cpu/unsized.py that moves whole arrays: its docstring says what such a value is).

Each form reads every length it needs from the operands when the code runs and checks that the
operands fit as NumPy requires: where they do not, the form raises the error type NumPy raises
(ValueError; jit then runs the NumPy version once more for NumPy's own message, at the user's
line), never a result of another shape. The forms:

* np.flip / fliplr / flipud: the array read backwards (a view, as NumPy's);
* np.transpose, x.T, rt.mT, np.swapaxes: Numba's transposed view;
* np.matmul / np.dot / `@` of vectors and matrices: Numba's np.dot (BLAS) for floats, loops
  for integers; np.outer;
* elementwise rows whose operands broadcast (a run-time-length vector against a fixed one,
  a column against a row): one loop per axis of the broadcast shape, each operand indexed 0
  along an axis where it has length 1;
* np.sum / mean / prod / max / min along one axis (keepdims too): the axis moved last, one
  reduction per row;
* np.concatenate / np.stack / hstack / vstack: the parts copied into one new array;
* x[:k, None] (np.newaxis): the selected part reshaped with the new axes of length 1;
* rt.unbroadcast / rt.sum_grad of such values (their derivatives): sums over the broadcast
  axes, repeats along the reduced one.
"""
import numpy as np

from transpile.core.ir import Const, IndexArg, SliceArg, TupleArg, Var
from transpile.lowering.cpu.text import (atom_const_text, dtype_ctor, shape_text, size_text,
                                         unsigned_operand)
from transpile.optimize.fusion import scalar_template
from transpile.primitives.internal.adjoint_helpers import (concat_vjp, extremum_mask, mT,
                                                          put_axis, sum_grad, unbroadcast)
from transpile.primitives.numpy.arrays import flip, fliplr, flipud
from transpile.primitives.numpy.products import dot, matmul, outer
from transpile.primitives.numpy.reductions import max_, mean, min_, prod, sum_
from transpile.primitives.numpy.structure import (concatenate, ravel, reshape, stack, swapaxes,
                                                  transpose)
from transpile.primitives.registry import by_name

hstack, vstack, joined_vjp = by_name("hstack"), by_name("vstack"), by_name("joined_vjp")

_BROADCAST = "operands could not be broadcast together"
_CORE_DIM = "matmul: a mismatch in the core dimension of the operands"
_PARTS = "all the input array dimensions except for the concatenation axis must match exactly"


def _info(lw, a):
    """(rank, dtype) of an atom, a value of run-time length included, or None."""
    if isinstance(a, Var):
        av = lw.avals.get(a.name) or lw.unsized.get(a.name)
        return None if av is None else (av.ndim, np.dtype(av.dtype))
    if isinstance(a, Const) and np.ndim(a.value) == 0 and not isinstance(a.value, str):
        return 0, np.result_type(a.value)
    return None


def _dt(lw, st):
    av = lw.avals.get(st.out) or lw.unsized.get(st.out)
    return None if av is None else np.dtype(av.dtype)


def _int_const(a):
    return isinstance(a, Const) and isinstance(a.value, (int, np.integer)) and \
        not isinstance(a.value, bool)


def _cast(name, have, want):
    return name if have == want else f"{name}.astype({dtype_ctor(want)})"


def _tuple_text(items):
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def lower_array_op(lw, st):
    """The lines binding st.out for one of the forms above, or None (not one of them)."""
    prim = st.prim
    if prim in (flip, fliplr, flipud):
        return _flip(lw, st)
    if prim in (transpose, mT, swapaxes):
        return _transpose(lw, st)
    if prim in (matmul, dot):
        return _product(lw, st)
    if prim is outer:
        return _outer(lw, st)
    if prim in (sum_, mean, prod, max_, min_):
        return _reduce_along(lw, st)
    if prim in (concatenate, stack, hstack, vstack):
        return _join(lw, st)
    if prim is ravel:
        return _ravel(lw, st)
    if prim is reshape:
        return _reshape(lw, st)
    if prim is unbroadcast:
        return _unbroadcast(lw, st)
    if prim is sum_grad:
        return _sum_grad(lw, st)
    if prim is extremum_mask:
        return _extremum_mask(lw, st)
    if prim is concat_vjp:
        return _concat_vjp(lw, st)
    if prim is put_axis:
        return _put_axis(lw, st)
    if prim is joined_vjp:
        return _joined_vjp(lw, st)
    if prim.elementwise and st.out in lw.unsized:
        return elementwise(lw, st)
    return None


# -- views ---------------------------------------------------------------------------------------

def _flip(lw, st):
    x = st.args["x"]
    xs = _info(lw, x)
    if xs is None or xs[0] == 0 or not isinstance(x, Var):
        return None
    n = xs[0]
    if st.prim is fliplr:
        axes = (1,)
    elif st.prim is flipud:
        axes = (0,)
    else:
        axis = st.args.get("axis", Const(None))
        if not isinstance(axis, Const):
            return None
        if axis.value is None:
            axes = tuple(range(n))
        else:
            axes = tuple(np.atleast_1d(axis.value).tolist())
    if any(not isinstance(a, int) or isinstance(a, bool) or not -n <= a < n for a in axes):
        return None
    axes = {a % n for a in axes}
    return [f"{st.out} = {x.name}[{', '.join('::-1' if k in axes else ':' for k in range(n))}]"]


def _transpose(lw, st):
    x = st.args["x"]
    xs = _info(lw, x)
    if xs is None or not isinstance(x, Var):
        return None
    n = xs[0]
    if n == 0:
        return [f"{st.out} = {x.name}"]
    if st.prim is mT:
        if n < 2:
            return None
        perm = list(range(n - 2)) + [n - 1, n - 2]
    elif st.prim is swapaxes:
        a1, a2 = st.args["axis1"], st.args["axis2"]
        if not (_int_const(a1) and _int_const(a2)) or not (-n <= a1.value < n and
                                                           -n <= a2.value < n):
            return None
        perm = list(range(n))
        i, j = int(a1.value) % n, int(a2.value) % n
        perm[i], perm[j] = perm[j], perm[i]
    else:
        axes = st.args.get("axes", Const(None))
        if not isinstance(axes, Const):
            return None
        if axes.value is None:
            perm = list(range(n))[::-1]
        else:
            perm = [int(a) % n for a in axes.value]
            if sorted(perm) != list(range(n)):
                return None
    if n == 1:
        return [f"{st.out} = {x.name}"]
    return [f"{st.out} = np.transpose({x.name}, {_tuple_text([str(p) for p in perm])})"]


def _ravel(lw, st):
    x = st.args["x"]
    if _info(lw, x) is None or not isinstance(x, Var) or set(st.args) != {"x"}:
        return None
    return [f"{st.out} = np.ravel({x.name})"]


def _reshape(lw, st):
    """np.reshape(v, s), v or s of run-time length (s: a shape written out, or the shape of
    such a value, read when the code runs); a size that differs raises ValueError, as NumPy
    does."""
    x, s = st.args["x"], st.args["shape"]
    if _info(lw, x) is None or not isinstance(x, Var) or set(st.args) != {"x", "shape"}:
        return None
    if isinstance(s, Const) and st.out in lw.avals:       # a shape written out
        return [f"{st.out} = np.ascontiguousarray({x.name})"
                f".reshape({shape_text(lw.avals[st.out].shape)})"]
    if isinstance(s, Const) and st.out in lw.unsized:      # x[:k].reshape(-1, 1)
        dims = s.value if isinstance(s.value, tuple) else (s.value,)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= -1
                   for d in dims) or sum(1 for d in dims if d == -1) > 1:
            return None
        return [f"{st.out} = np.ascontiguousarray({x.name})"
                f".reshape({_tuple_text([str(int(d)) for d in dims])})"]
    if isinstance(s, TupleArg) and st.out in lw.unsized:    # (-1, u.shape[2]): run-time ints
        for it in s.items:
            r = _info(lw, it) if isinstance(it, (Var, Const)) else None
            if r is None or r[0] != 0 or r[1].kind not in "iu":
                return None
        return [f"{st.out} = np.ascontiguousarray({x.name})"
                f".reshape({_tuple_text([lw.fmt(it) for it in s.items])})"]
    if not isinstance(s, Var) or s.name not in getattr(lw.avals, "unsized_shapes", {}):
        return None
    return [f"{st.out} = np.ascontiguousarray({x.name}).reshape({s.name})"]


# -- products ------------------------------------------------------------------------------------

def _product(lw, st):
    """x @ y, np.dot(x, y) of vectors and matrices (ranks 1 and 2)."""
    x, y = st.args["x"], st.args["y"]
    xs, ys, dt = _info(lw, x), _info(lw, y), _dt(lw, st)
    if xs is None or ys is None or dt is None or not isinstance(x, Var) or \
            not isinstance(y, Var) or xs[0] not in (1, 2) or ys[0] not in (1, 2):
        return None
    o = st.out
    kx = f"{x.name}.shape[{xs[0] - 1}]"
    ky = f"{y.name}.shape[0]"
    if dt.kind in "fc":
        operands = f"{_cast(x.name, xs[1], dt)}, {_cast(y.name, ys[1], dt)}"
        # (Numba's np.dot raises ValueError on operands that do not fit, as NumPy does; a
        # large product is NumPy's, on its threaded BLAS)
        if xs[0] == ys[0] == 1:
            return [f"{o} = {dtype_ctor(dt)}(np.dot({operands}))"]
        return [f"{o} = blas_dot({operands})"]
    if dt.kind not in "iu":
        return None       # (booleans: NumPy's logical product)
    ctor = dtype_ctor(dt)
    lines = [f"if {kx} != {ky}:",
             f"    raise ValueError({_CORE_DIM!r})"]
    xi = {1: "{k}", 2: "{i}, {k}"}[xs[0]]
    yi = {1: "{k}", 2: "{k}, {j}"}[ys[0]]
    dims, at = [], []
    if xs[0] == 2:
        dims.append(f"{x.name}.shape[0]")
        at.append(f"{o}_i")
    if ys[0] == 2:
        dims.append(f"{y.name}.shape[1]")
        at.append(f"{o}_j")
    names = {"i": f"{o}_i", "j": f"{o}_j", "k": f"{o}_k"}
    term = f"{ctor}({x.name}[{xi.format(**names)}]) * {ctor}({y.name}[{yi.format(**names)}])"
    if not dims:
        return lines + [f"{o} = {ctor}(0)",
                        f"for {o}_k in range({kx}):",
                        f"    {o} += {term}"]
    lines.append(f"{o} = np.zeros({_tuple_text(dims)}, {ctor})")
    pad = ""
    for d, a in zip(dims, at):
        lines.append(f"{pad}for {a} in range({d}):")
        pad += "    "
    lines += [f"{pad}for {o}_k in range({kx}):",
              f"{pad}    {o}[{', '.join(at)}] += {term}"]
    return lines


def _outer(lw, st):
    x, y = st.args["x"], st.args["y"]
    xs, ys, dt = _info(lw, x), _info(lw, y), _dt(lw, st)
    if xs is None or ys is None or dt is None or not isinstance(x, Var) or \
            not isinstance(y, Var) or xs[0] == 0 or ys[0] == 0:
        return None
    return [f"{st.out} = np.outer({_cast(x.name, xs[1], dt)}, {_cast(y.name, ys[1], dt)})"]


# -- elementwise rows that broadcast -------------------------------------------------------------

def broadcast_dims(o, operands, rank):
    """Lines computing the broadcast shape of `operands` ([(name, rank)]) into o_d0, o_d1, ...
    (NumPy's rule: per axis, from the right, lengths equal or 1), raising ValueError where they
    do not broadcast; and each operand's index text given the loop variables o_i0, ..."""
    lines = [f"# {o}: {', '.join(v for v, _ in operands)} broadcast together (NumPy's rule)"]
    for d in range(rank):
        have = [(v, f"{v}.shape[{d - (rank - r)}]") for v, r in operands if d >= rank - r]
        lines.append(f"{o}_d{d} = 1")
        for _, s in have:
            lines.append(f"if {s} != 1:")
            lines.append(f"    {o}_d{d} = {s}")
        cond = " or ".join(f"({s} != 1 and {s} != {o}_d{d})" for _, s in have)
        if len(have) > 1:
            lines += [f"if {cond}:", f"    raise ValueError({_BROADCAST!r})"]
    return lines


def operand_at(o, v, r, rank):
    """v[...] at the loop position of the broadcast result (o_i0, ...): 0 along an axis where v
    has length 1 (min(i, n - 1) is i there otherwise, as the lengths were checked)."""
    return f"{v}[{', '.join(f'min({o}_i{d}, {v}.shape[{d - (rank - r)}] - 1)' for d in range(rank - r, rank))}]"


def elementwise(lw, st):
    """An elementwise row over arrays of which one at least has a run-time length: the
    broadcast shape computed when the code runs, one loop per axis, the row's scalar form."""
    dt = _dt(lw, st)
    if dt is None:
        return None
    # the row's loop form for this dtype where it has one (tanh64/exp64 vectorize)
    tmpl = st.prim.lower_loop.get(np.dtype(dt).name) or scalar_template(st)
    if tmpl is None:
        return None
    o = st.out
    operands, vals = [], {}
    cdt = dt if np.issubdtype(dt, np.inexact) else None
    for k, v in st.args.items():
        if isinstance(v, Const):
            if np.ndim(v.value):
                return None
            vals[k] = atom_const_text(v, cdt if k != "condition" else None) if cdt else \
                atom_const_text(v, unsigned_operand(v, None, dt))
            continue
        r = _info(lw, v) if isinstance(v, Var) else None
        if r is None:
            return None
        if r[0] >= 1:
            operands.append((v.name, r[0]))
        vals[k] = f"np.uint64({v.name})" if unsigned_operand(v, lw.av(v), dt) else v.name
    if not operands:
        return None
    rank = max(r for _, r in operands)
    operands = list(dict.fromkeys(operands))
    one = operands[0][0] if len(operands) == 1 else None    # (nothing to broadcast)
    for k, v in st.args.items():
        if isinstance(v, Var) and _info(lw, v)[0] >= 1:
            vals[k] = f"{one}[{', '.join(f'{o}_i{d}' for d in range(rank))}]" if one else \
                operand_at(o, v.name, _info(lw, v)[0], rank)
    text = tmpl.replace("T(", f"{dtype_ctor(dt)}(").format(**vals)
    if np.issubdtype(dt, np.number):
        text = f"{dtype_ctor(dt)}({text})"
    if one:
        lines, dims = [], [f"{one}.shape[{d}]" for d in range(rank)]
    else:
        lines = broadcast_dims(o, operands, rank)
        dims = [f"{o}_d{d}" for d in range(rank)]
    lines.append(f"{o} = np.empty({_tuple_text(dims)}, {dtype_ctor(dt)})")
    pad = ""
    for d in range(rank):
        lines.append(f"{pad}for {o}_i{d} in range({dims[d]}):")
        pad += "    "
    lines.append(f"{pad}{o}[{', '.join(f'{o}_i{d}' for d in range(rank))}] = {text}")
    return lines


# -- reductions along an axis --------------------------------------------------------------------

_ONE_ROW = {sum_: "np.sum({r})", prod: "np.prod({r})", max_: "np.max({r})",
            min_: "np.min({r})", mean: "np.sum({r}) / {r}.shape[0]"}


def _reduce_along(lw, st):
    """np.sum(x, axis=k) (mean, prod, max, min; keepdims) of an array of run-time length: x
    with axis k moved last, each row reduced (an empty row: NumPy's error, from Numba's
    np.max, or its identity)."""
    x, a = st.args["x"], st.args
    xs, dt = _info(lw, x), _dt(lw, st)
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    extra = set(a) - {"x", "axis", "keepdims", "dtype", "out"}
    if xs is None or dt is None or not isinstance(x, Var) or x.name not in lw.unsized or \
            not _int_const(axis) or not -xs[0] <= axis.value < xs[0] or \
            not isinstance(keep, Const) or extra or \
            any(k in a and not (isinstance(a[k], Const) and a[k].value is None)
                for k in ("out", "dtype")) or xs[1] == np.bool_ and st.prim in (max_, min_):
        return None
    if dt.kind not in "iufc" or (dt.kind == "c" and st.prim in (max_, min_)):
        return None
    n, k, o = xs[0], int(axis.value) % xs[0], st.out
    src = x.name
    if xs[1] != dt and st.prim is not mean:
        src = f"{x.name}.astype({dtype_ctor(dt)})"
    elif st.prim is mean and xs[1].kind in "biu":
        src = f"{x.name}.astype(np.float64)"
    one = _ONE_ROW[st.prim]
    ctor = dtype_ctor(dt)
    perm = [d for d in range(n) if d != k] + [k]
    lines = [f"{o}_x = {src}" if n == 1 else
             f"{o}_x = np.transpose({src}, {_tuple_text([str(p) for p in perm])})"]
    if n == 1:
        value = f"{ctor}({one.format(r=f'{o}_x')})"
        return lines + ([f"{o} = np.full((1,), {value}, {ctor})"] if keep.value else
                        [f"{o} = {value}"])
    rest = [f"{o}_x.shape[{d}]" for d in range(n - 1)]
    lines += [f"{o} = np.empty({_tuple_text(rest)}, {ctor})",
              f"for {o}_at in np.ndindex({o}_x.shape[:-1]):",
              f"    {o}[{o}_at] = {ctor}({one.format(r=f'{o}_x[{o}_at]')})"]
    if keep.value:
        shape = [f"{x.name}.shape[{d}]" if d != k else "1" for d in range(n)]
        lines.append(f"{o} = {o}.reshape({_tuple_text(shape)})")
    return lines


# -- joins ---------------------------------------------------------------------------------------

def _join(lw, st):
    """np.concatenate / np.stack (hstack, vstack) of arrays some of run-time length: the
    lengths checked, the parts copied into one new array."""
    arrs, dt = st.args["arrays"], _dt(lw, st)
    if not isinstance(arrs, TupleArg) or not arrs.items or dt is None:
        return None
    infos = [_info(lw, v) if isinstance(v, Var) else None for v in arrs.items]
    if any(i is None for i in infos) or len({i[0] for i in infos}) != 1 or \
            any(k not in ("arrays", "axis") for k in st.args):
        return None
    rank = infos[0][0]
    axis = st.args.get("axis", Const(0))
    if st.prim is hstack:
        axis = Const(0 if rank == 1 else 1)
    elif st.prim is vstack:
        if rank == 1:
            return _stack(lw, st, arrs.items, infos, 0, dt)
        axis = Const(0)
    if not _int_const(axis):
        return None
    if st.prim is stack:
        if not -(rank + 1) <= axis.value <= rank:
            return None
        return _stack(lw, st, arrs.items, infos, int(axis.value) % (rank + 1), dt)
    if rank == 0 or not -rank <= axis.value < rank:
        return None
    k, o = int(axis.value) % rank, st.out
    names = [v.name for v in arrs.items]
    first = names[0]
    lines = []
    checks = [f"{v}.shape[{d}] != {first}.shape[{d}]" for v in names[1:] for d in range(rank)
              if d != k]
    if checks:
        lines += [f"if {' or '.join(checks)}:", f"    raise ValueError({_PARTS!r})"]
    total = " + ".join(f"{v}.shape[{k}]" for v in names)
    shape = [total if d == k else f"{first}.shape[{d}]" for d in range(rank)]
    lines += [f"{o} = np.empty({_tuple_text(shape)}, {dtype_ctor(dt)})", f"{o}_at = 0"]
    for v, info in zip(names, infos):
        at = ", ".join(f"{o}_at:{o}_at + {v}.shape[{k}]" if d == k else ":" for d in range(rank))
        lines += [f"{o}[{at}] = {_cast(v, info[1], dt)}", f"{o}_at += {v}.shape[{k}]"]
    return lines


def _stack(lw, st, items, infos, k, dt):
    """np.stack along a new axis k (vstack of vectors: k = 0)."""
    names = [v.name for v in items]
    rank, first, o = infos[0][0], names[0], st.out
    lines = []
    checks = [f"{v}.shape != {first}.shape" for v in names[1:] if v != first]
    if checks:
        lines += [f"if {' or '.join(checks)}:",
                  "    raise ValueError('all input arrays must have the same shape')"]
    shape = [f"{first}.shape[{d}]" for d in range(rank)]
    shape.insert(k, str(len(names)))
    lines.append(f"{o} = np.empty({_tuple_text(shape)}, {dtype_ctor(dt)})")
    for j, (v, info) in enumerate(zip(names, infos)):
        at = [":"] * rank
        at.insert(k, str(j))
        lines.append(f"{o}[{', '.join(at)}] = {_cast(v, info[1], dt)}")
    return lines


# -- new axes ------------------------------------------------------------------------------------

def newaxis_getitem(lw, st, index_text):
    """x[:k, None] (np.newaxis among integers, slices and `...`) of an array of run-time
    length: the part the other items select, reshaped with a length of 1 at each new axis
    (a view where the part is contiguous, as the sized lowering does)."""
    x, index = st.args["x"], st.args["index"]
    xs = _info(lw, x)
    if xs is None or not isinstance(x, Var) or not isinstance(index, IndexArg) or \
            None not in index.items:
        return None
    items = index.items
    ints = 0
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, SliceArg):
            continue
        r = _info(lw, it) if isinstance(it, (Var, Const)) else None
        if r is None or r[0] != 0 or r[1].kind not in "iu":
            return None       # (an index array beside the new axis)
        ints += 1
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > xs[0] or sum(1 for it in items if it is Ellipsis) > 1:
        return None
    rank = xs[0] - ints
    if rank == 0:
        return None
    o = st.out
    rest = IndexArg(tuple(it for it in items if it is not None))
    part = f"{x.name}[{index_text(rest, st)}]" if rest.items not in ((), (Ellipsis,)) \
        else x.name
    dims, j = [], 0
    for it in items:
        if it is None:
            dims.append("1")
        elif it is Ellipsis:
            for _ in range(xs[0] - consumed):
                dims.append(f"{o}_p.shape[{j}]")
                j += 1
        elif isinstance(it, SliceArg):
            dims.append(f"{o}_p.shape[{j}]")
            j += 1
    dims += [f"{o}_p.shape[{d}]" for d in range(j, rank)]
    return [f"{o}_p = {part}",
            f"{o} = np.ascontiguousarray({o}_p).reshape({_tuple_text(dims)})"]


def newaxis_getitem_vjp(lw, st, index_text):
    """The cotangent of x in x[:k, None], the cotangent or x of run-time length: zeros of x's
    shape, the cotangent read at 0 along its new axes written at the index without them."""
    x, ct, index = st.args["x"], st.args["ct"], st.args["index"]
    xs, cs, dt = _info(lw, x), _info(lw, ct), _dt(lw, st)
    if xs is None or cs is None or dt is None or not isinstance(x, Var) or \
            not isinstance(ct, Var) or not isinstance(index, IndexArg) or \
            None not in index.items or xs[0] == 0:
        return None
    for it in index.items:
        if it is None or it is Ellipsis or isinstance(it, SliceArg):
            continue
        r = _info(lw, it) if isinstance(it, (Var, Const)) else None
        if r is None or r[0] != 0 or r[1].kind not in "iu":
            return None
    consumed = sum(1 for it in index.items if it is not None and it is not Ellipsis)
    at = []
    for it in index.items:
        if it is None:
            at.append("0")
        elif it is Ellipsis:
            at += [":"] * (xs[0] - consumed)
        elif isinstance(it, SliceArg):
            at.append(":")
    at += [":"] * (cs[0] - len(at))
    rest = IndexArg(tuple(it for it in index.items if it is not None))
    ix = index_text(rest, st) if rest.items not in ((), (Ellipsis,)) else \
        ", ".join([":"] * xs[0])
    xav = lw.av(x)
    shape = shape_text(xav.shape) if xav is not None else f"{x.name}.shape"
    return [f"{st.out} = np.zeros({shape}, {dtype_ctor(dt)})",
            f"{st.out}[{ix}] = {ct.name}[{', '.join(at)}]"]


# -- derivatives ---------------------------------------------------------------------------------

def _unbroadcast(lw, st):
    """rt.unbroadcast(ct, x): ct summed back to x's shape (the axes x lacks, and those where x
    has length 1), with ct or x of run-time length; x's lengths must broadcast to ct's."""
    ct, x = st.args["ct"], st.args["x"]
    cs, xs, dt = _info(lw, ct), _info(lw, x), _dt(lw, st)
    if cs is None or xs is None or dt is None or not isinstance(ct, Var) or \
            not isinstance(x, Var) or xs[0] > cs[0]:
        return None
    o, rank, r = st.out, cs[0], xs[0]
    if r == 0:
        return [f"{o} = {dtype_ctor(dt)}(np.sum({ct.name}))"]
    lines = []
    cond = " or ".join(f"({x.name}.shape[{d}] != 1 and {x.name}.shape[{d}] != "
                       f"{ct.name}.shape[{d + rank - r}])" for d in range(r))
    lines += [f"if {cond}:", f"    raise ValueError({_BROADCAST!r})"]
    lines.append(f"{o} = np.zeros({x.name}.shape, {dtype_ctor(dt)})")
    pad = ""
    for d in range(rank):
        lines.append(f"{pad}for {o}_i{d} in range({ct.name}.shape[{d}]):")
        pad += "    "
    at = ", ".join(f"min({o}_i{d + rank - r}, {x.name}.shape[{d}] - 1)" for d in range(r))
    lines.append(f"{pad}{o}[{at}] += {ct.name}[{', '.join(f'{o}_i{d}' for d in range(rank))}]")
    return lines


def _sum_grad(lw, st):
    """rt.sum_grad(ct, x, axis, keepdims): the cotangent of a reduction of x (of run-time
    length) along one axis, repeated along it."""
    x, ct, a = st.args["x"], st.args["ct"], st.args
    xs, cs, dt = _info(lw, x), _info(lw, ct), _dt(lw, st)
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    if xs is None or cs is None or dt is None or not isinstance(x, Var) or \
            not _int_const(axis) or not -xs[0] <= axis.value < xs[0] or \
            not isinstance(keep, Const):
        return None
    n, k, o = xs[0], int(axis.value) % xs[0], st.out
    if cs[0] == 0:
        return [f"{o} = np.full({x.name}.shape, {lw.fmt(ct)}, {dtype_ctor(dt)})"]
    if not isinstance(ct, Var) or cs[0] != (n if keep.value else n - 1):
        return None
    src = f"{ct.name}[{', '.join('0' if d == k else ':' for d in range(n))}]" if keep.value \
        else ct.name
    at = ", ".join(f"{o}_i" if d == k else ":" for d in range(n))
    return [f"{o} = np.empty({x.name}.shape, {dtype_ctor(dt)})",
            f"for {o}_i in range({x.name}.shape[{k}]):",
            f"    {o}[{at}] = {src}"]


# -- products of stacks of matrices (shapes known) -----------------------------------------------

def batched_product(lw, st):
    """np.matmul (`@`) of arrays of more than 2 axes (np.dot of one with a vector or a
    matrix, which is the same product), their shapes known: one np.dot of matrices per
    position of the broadcast batch axes (an operand with length 1 there is read at 0), a
    stack times one matrix as one product of the stack's rows, or None (not such a
    product)."""
    if st.prim not in (matmul, dot):
        return None
    x, y = st.args["x"], st.args["y"]
    xs, ys = lw.av(x), lw.av(y)
    os_ = lw.avals.get(st.out)
    if xs is None or ys is None or os_ is None or not isinstance(x, Var) or \
            not isinstance(y, Var) or max(xs.ndim, ys.ndim) <= 2 or min(xs.ndim, ys.ndim) == 0:
        return None
    if st.prim is dot and ys.ndim > 2:
        return None        # (np.dot of two stacks pairs every matrix with every other)
    dt = np.dtype(os_.dtype)
    if dt.kind not in "fc":
        return None
    xb = xs.shape[:-2] if xs.ndim >= 2 else ()
    yb = ys.shape[:-2] if ys.ndim >= 2 else ()
    batch = os_.shape[:len(os_.shape) - (xs.ndim >= 2) - (ys.ndim >= 2)]
    if len(batch) != max(len(xb), len(yb)):
        return None
    o, nb = st.out, len(batch)
    loops = [f"{o}_b{d}" for d in range(nb)]
    lines = []

    def operand(a, av, bshape, tag):
        name = a.name
        if np.dtype(av.dtype) != dt:        # cast once, before the loops
            lines.append(f"{o}_{tag} = {a.name}.astype({dtype_ctor(dt)})")
            name = f"{o}_{tag}"
        if not bshape:
            return name
        lead = nb - len(bshape)       # (an axis of length 1 broadcasts: read at 0)
        return f"{name}[{', '.join('0' if n == 1 else loops[lead + d] for d, n in enumerate(bshape))}]"
    if xs.ndim > 2 and ys.ndim == 2:
        # a stack times one matrix: the stack's rows as one matrix, one product (BLAS's gemm,
        # where a product per matrix of (1, K) rows is a gemv each: doitgen)
        xt, yt = operand(x, xs, (), "x"), operand(y, ys, (), "y")
        rows = " * ".join(size_text(n) for n in xs.shape[:-1] if n != 1) or "1"
        lines.append(f"{o} = blas_dot(np.ascontiguousarray({xt}).reshape(({rows}, "
                     f"{size_text(xs.shape[-1])})), {yt}).reshape({shape_text(os_.shape)})")
        return lines
    xt, yt = operand(x, xs, xb, "x"), operand(y, ys, yb, "y")
    lines.append(f"{o} = np.empty({shape_text(os_.shape)}, {dtype_ctor(dt)})")
    pad = ""
    for d, n in enumerate(batch):
        lines.append(f"{pad}for {loops[d]} in range({size_text(n)}):")
        pad += "    "
    lines.append(f"{pad}{o}[{', '.join(loops)}] = np.dot({xt}, {yt})")
    return lines


def _extremum_mask(lw, st):
    """rt.extremum_mask(x, ans, axis, keepdims) (the weights a max or min passes its cotangent
    back with), x of run-time length: 1 / (the count of ties) where x equals the extremum of
    its row, 0 elsewhere."""
    x, ans, a = st.args["x"], st.args["ans"], st.args
    xs, as_, dt = _info(lw, x), _info(lw, ans), _dt(lw, st)
    axis, keep = a.get("axis", Const(None)), a.get("keepdims", Const(False))
    if xs is None or as_ is None or dt is None or not isinstance(x, Var) or xs[0] == 0 or \
            not isinstance(keep, Const) or not isinstance(axis, Const):
        return None
    o, ctor = st.out, dtype_ctor(dt)
    if axis.value is None:
        if as_[0] != 0:
            return None
        return [f"{o}_hit = ({x.name} == {lw.fmt(ans)})",
                f"{o} = {o}_hit.astype({ctor}) / {ctor}(np.sum({o}_hit))"]
    if not _int_const(axis) or not -xs[0] <= axis.value < xs[0] or not isinstance(ans, Var):
        return None
    n, k = xs[0], int(axis.value) % xs[0]
    if as_[0] != (n if keep.value else n - 1):
        return None
    perm = [d for d in range(n) if d != k] + [k]
    back = [int(p) for p in np.argsort(perm)]
    m = f"{ans.name}[{', '.join('0' if d == k else ':' for d in range(n))}]" if keep.value \
        else ans.name
    lines = [f"{o}_x = np.transpose({x.name}, {_tuple_text([str(p) for p in perm])})",
             f"{o}_m = {m}",
             f"{o}_t = np.zeros({o}_x.shape, {ctor})"]
    if n == 1:
        row, mv, dest = f"{o}_x", f"{o}_m", f"{o}_t"
        pad = ""
    else:
        lines.append(f"for {o}_at in np.ndindex({o}_x.shape[:-1]):")
        row, mv, dest = f"{o}_x[{o}_at]", f"{o}_m[{o}_at]", f"{o}_t[{o}_at]"
        pad = "    "
    lines += [f"{pad}{o}_r = {row}",
              f"{pad}{o}_d = {dest}",
              f"{pad}{o}_c = 0",
              f"{pad}for {o}_j in range({o}_r.shape[0]):",
              f"{pad}    {o}_c += {o}_r[{o}_j] == {mv}",
              f"{pad}for {o}_j in range({o}_r.shape[0]):",
              f"{pad}    if {o}_r[{o}_j] == {mv}:",
              f"{pad}        {o}_d[{o}_j] = {ctor}(1) / {ctor}({o}_c)"]
    lines.append(f"{o} = {o}_t" if n == 1 else
                 f"{o} = np.transpose({o}_t, {_tuple_text([str(b) for b in back])})")
    return lines


def _concat_vjp(lw, st):
    """rt.concat_vjp(ct, arrays, k, axis): the part of ct that arrays[k] gave
    np.concatenate's result (their lengths read when the code runs)."""
    ct, arrs, k, a = st.args["ct"], st.args["arrays"], st.args["k"], st.args
    axis = a.get("axis", Const(0))
    cs = _info(lw, ct)
    if cs is None or not isinstance(ct, Var) or not isinstance(arrs, TupleArg) or \
            not _int_const(k) or not _int_const(axis) or not 0 <= k.value < len(arrs.items) or \
            not -cs[0] <= axis.value < cs[0] or cs[0] == 0:
        return None
    infos = [_info(lw, v) if isinstance(v, Var) else None for v in arrs.items]
    if any(i is None or i[0] != cs[0] for i in infos):
        return None
    ax, o = int(axis.value) % cs[0], st.out
    before = [f"{v.name}.shape[{ax}]" for v in arrs.items[:int(k.value)]]
    mine = f"{arrs.items[int(k.value)].name}.shape[{ax}]"
    at = ", ".join(f"{o}_s:{o}_s + {mine}" if d == ax else ":" for d in range(cs[0]))
    return [f"{o}_s = {' + '.join(before) if before else '0'}",
            f"{o} = {ct.name}[{at}]"]


def _put_axis(lw, st):
    """rt.put_axis(part, like, k, axis) (the cotangent of one input of np.stack), like of
    run-time length: zeros of like's shape, part at position k along the axis."""
    part, like, k, a = st.args["part"], st.args["like"], st.args["k"], st.args
    axis = a.get("axis", Const(0))
    ls, dt = _info(lw, like), _dt(lw, st)
    if ls is None or dt is None or not isinstance(like, Var) or not _int_const(k) or \
            not _int_const(axis) or ls[0] == 0 or not -ls[0] <= axis.value < ls[0] or \
            _info(lw, part) is None:
        return None
    ax = int(axis.value) % ls[0]
    at = ", ".join(str(int(k.value)) if d == ax else ":" for d in range(ls[0]))
    return [f"{st.out} = np.zeros({like.name}.shape, {dtype_ctor(dt)})",
            f"{st.out}[{at}] = {lw.fmt(part)}"]


def _joined_vjp(lw, st):
    """rt.joined_vjp(ct, arrays, k, kind) of np.hstack / np.vstack of arrays of one rank,
    some of run-time length: the part of ct that arrays[k] gave (a row of a vstack of
    vectors)."""
    ct, arrs, k, kind = st.args["ct"], st.args["arrays"], st.args["k"], st.args["kind"]
    cs = _info(lw, ct)
    if cs is None or not isinstance(ct, Var) or not isinstance(arrs, TupleArg) or \
            not _int_const(k) or not isinstance(kind, Const) or \
            kind.value not in ("hstack", "vstack") or not 0 <= k.value < len(arrs.items):
        return None
    infos = [_info(lw, v) if isinstance(v, Var) else None for v in arrs.items]
    if any(i is None for i in infos) or len({i[0] for i in infos}) != 1 or infos[0][0] == 0:
        return None
    rank, j, o = infos[0][0], int(k.value), st.out
    if kind.value == "vstack" and rank == 1:
        return [f"{o} = {ct.name}[{j}]"]
    ax = 1 if kind.value == "hstack" and rank > 1 else 0
    if cs[0] != rank:
        return None
    before = [f"{v.name}.shape[{ax}]" for v in arrs.items[:j]]
    mine = f"{arrs.items[j].name}.shape[{ax}]"
    at = ", ".join(f"{o}_s:{o}_s + {mine}" if d == ax else ":" for d in range(rank))
    return [f"{o}_s = {' + '.join(before) if before else '0'}",
            f"{o} = {ct.name}[{at}]"]
