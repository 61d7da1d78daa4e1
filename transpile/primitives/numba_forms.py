"""Numba CPU forms of array functions that Numba has no (or only a partial) version of, for the
rows' `numba=` field: `form(lw, eqn)` returns the expression for the result, or a list of
statements that bind `eqn.out`, or None when these arguments have no form (jit then says so).

`lw` is the lowerer (transpile/lowering/cpu/module.py): `lw.fmt(arg)` prints an argument,
`lw.av(arg)` is its abstract value (shape and dtype, every shape known when this runs) and
`lw.avals[eqn.out]` the result's. The text is plain Numba-supported Python: shapes are
constants, loops are written out.
"""
import numpy as np

from transpile.core.ir import Const, IndexArg, SliceArg, TupleArg, Var
from transpile_runtime import array_adjoints as AA


def _const(eqn, name, default=None):
    a = eqn.args.get(name)
    if a is None:
        return default
    if isinstance(a, Const):
        return a.value
    return _NOT_CONST


_NOT_CONST = object()


def _dt(dtype):
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _axis(axis, ndim):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not \
            -ndim <= axis < ndim:
        return None
    return int(axis) % ndim


def _at(k, ndim, item):
    """An index text with `item` at axis k and full slices elsewhere."""
    parts = [":"] * ndim
    parts[k] = item
    return ", ".join(parts)


def _loops(out, shape, lines_inner):
    """A loop nest over `shape` (index names out_i0, out_i1, ...) around the inner lines."""
    names = [f"{out}_i{k}" for k in range(len(shape))]
    lines = []
    for k, (i, n) in enumerate(zip(names, shape)):
        lines.append("    " * k + f"for {i} in range({int(n)}):")
    lines += ["    " * len(shape) + line for line in lines_inner(names)]
    return lines


def roll(lw, eqn):
    """np.roll: Numba's takes no axis; along one axis, two slices joined."""
    return _roll(lw, eqn, eqn.args["x"], 1)


def roll_back(lw, eqn):
    """The cotangent of np.roll: the roll the other way."""
    return _roll(lw, eqn, eqn.args["ct"], -1)


def _roll(lw, eqn, x, sign):
    xs = lw.av(x)
    axis = _const(eqn, "axis")
    shift = _const(eqn, "shift")
    if axis is None:
        if shift is _NOT_CONST:
            return f"np.roll({lw.fmt(x)}, {'' if sign > 0 else '-'}{lw.fmt(eqn.args['shift'])})"
        if not isinstance(shift, (int, np.integer)) or isinstance(shift, bool):
            return None
        return f"np.roll({lw.fmt(x)}, {sign * int(shift)})"
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None or not isinstance(shift, (int, np.integer)) or isinstance(shift, bool):
        return None
    n = xs.shape[k]
    s = (sign * int(shift)) % n if n else 0
    if s == 0:
        return f"{lw.fmt(x)}.copy()"
    head = f"{lw.fmt(x)}[{_at(k, xs.ndim, f'{n - s}:')}]"
    tail = f"{lw.fmt(x)}[{_at(k, xs.ndim, f':{n - s}')}]"
    return f"np.concatenate(({head}, {tail}), axis={k})"


def tile(lw, eqn):
    """np.tile: each element of the result reads x at its index modulo x's shape."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    if not xs.shape:
        return f"np.full({_shape(os_.shape)}, {lw.fmt(x)}, {_dt(os_.dtype)})"
    off = len(os_.shape) - xs.ndim
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"]
    lines += _loops(out, os_.shape, lambda i: [
        f"{out}[{', '.join(i)}] = {lw.fmt(x)}["
        + ", ".join(f"{i[off + k]} % {n}" for k, n in enumerate(xs.shape)) + "]"])
    return lines


def linspace(lw, eqn):
    """np.linspace: start + i * step in one loop, then stop itself at the end (NumPy's own
    arithmetic, so the same numbers; Numba's np.linspace is ~10x slower than NumPy's)."""
    out, os_ = eqn.out, lw.avals[eqn.out]
    endpoint = _const(eqn, "endpoint", True)
    if endpoint is _NOT_CONST or len(os_.shape) != 1:
        return None
    num = int(os_.shape[0])
    start, stop = lw.fmt(eqn.args["start"]), lw.fmt(eqn.args["stop"])
    div = num - 1 if endpoint else num
    value, last = f"{start} + {out}_i * {out}_step", stop
    if os_.dtype.kind in "iub":         # NumPy floors a float linspace into an integer dtype
        value, last = f"np.floor({value})", f"np.floor({stop})"
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})",
             f"{out}_step = ({stop} - {start}) / {max(div, 1)}" if div > 0 else f"{out}_step = 0.0",
             f"for {out}_i in range({num}):",
             f"    {out}[{out}_i] = {value}"]
    if endpoint and num > 1:
        lines.append(f"{out}[{num - 1}] = {last}")
    return lines


def repeat(lw, eqn):
    """np.repeat: Numba's flattens (axis=None); along an axis, element i // repeats."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    axis = _const(eqn, "axis")
    if axis is None:
        return f"np.repeat({lw.fmt(x)}, {lw.fmt(eqn.args['repeats'])})"
    reps = _const(eqn, "repeats")
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None or not isinstance(reps, (int, np.integer)) or isinstance(reps, bool):
        return None
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"]
    lines += _loops(out, os_.shape, lambda i: [
        f"{out}[{', '.join(i)}] = {lw.fmt(x)}["
        + ", ".join(f"{v} // {int(reps)}" if m == k else v for m, v in enumerate(i)) + "]"])
    return lines


def _cumulative(op, fn):
    def form(lw, eqn):
        if _const(eqn, "dtype") is not None or _const(eqn, "out") is not None:
            return None
        x, out = eqn.args["x"], eqn.out
        xs, os_ = lw.av(x), lw.avals[out]
        axis = _const(eqn, "axis")
        if axis is None or xs.ndim == 1 and axis in (0, -1):
            text = f"np.{fn}({lw.fmt(x)})"
            return text if xs.dtype == os_.dtype else f"{text}.astype({_dt(os_.dtype)})"
        k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
        if k is None:
            return None
        return _scan(out, f"{lw.fmt(x)}.astype({_dt(os_.dtype)})", op, k, xs.shape, False)
    return form


def _scan(out, start, op, k, shape, backward):
    """`out = start`, then each slice along axis k combined (op=) with its neighbour before it
    (after it, backward)."""
    j = f"{out}_j"
    loop = f"range({shape[k] - 2}, -1, -1)" if backward else f"range(1, {shape[k]})"
    other = f"{j} + 1" if backward else f"{j} - 1"
    return [f"{out} = {start}",
            f"for {j} in {loop}:",
            f"    {out}[{_at(k, len(shape), j)}] {op}= {out}[{_at(k, len(shape), other)}]"]


cumsum = _cumulative("+", "cumsum")
cumprod = _cumulative("*", "cumprod")


def diff(lw, eqn):
    """np.diff along any axis: n differences of neighbouring slices."""
    x, out = eqn.args["x"], eqn.out
    xs = lw.av(x)
    n, axis = _const(eqn, "n", 1), _const(eqn, "axis", -1)
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None or not isinstance(n, (int, np.integer)) or n < 0 or xs.dtype == np.bool_:
        return None
    if n == 0:
        return f"{lw.fmt(x)}.copy()"
    lines, src = [], lw.fmt(x)
    for step in range(int(n)):
        dst = out if step == n - 1 else f"{out}_d{step + 1}"
        lines.append(f"{dst} = {src}[{_at(k, xs.ndim, '1:')}] - {src}[{_at(k, xs.ndim, ':-1')}]")
        src = dst
    return lines


def average(lw, eqn):
    """np.average over all elements or along one axis, without weights, with weights of x's
    shape, or (along an axis) with 1-D weights of that axis' length."""
    if _const(eqn, "keepdims", False):
        return None
    x, w = eqn.args["x"], eqn.args.get("weights", Const(None))
    xs, out = lw.av(x), lw.avals[eqn.out]
    dt = _dt(out.dtype)
    axis = _const(eqn, "axis")
    no_weights = isinstance(w, Const) and w.value is None
    if axis is None:
        if no_weights:
            return f"{dt}(np.mean({lw.fmt(x)}))"
        if not isinstance(w, Var) or lw.av(w).shape != xs.shape:
            return None
        return f"{dt}(np.sum({lw.fmt(x)} * {lw.fmt(w)}) / np.sum({lw.fmt(w)}))"
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None:
        return None
    if no_weights:
        value = f"np.sum({lw.fmt(x)}, axis={k}) / {int(xs.shape[k])}"
    elif isinstance(w, Var) and lw.av(w).shape == xs.shape:
        value = f"np.sum({lw.fmt(x)} * {lw.fmt(w)}, axis={k}) / np.sum({lw.fmt(w)}, axis={k})"
    elif isinstance(w, Var) and lw.av(w).shape == (xs.shape[k],):
        along = _shape(tuple(n if i == k else 1 for i, n in enumerate(xs.shape)))
        value = (f"np.sum({lw.fmt(x)} * np.ascontiguousarray({lw.fmt(w)}).reshape({along}), "
                 f"axis={k}) / np.sum({lw.fmt(w)})")
    else:
        return None
    return f"{dt}({value})" if not out.shape else f"({value}).astype({dt})"


def joined(kind):
    """np.hstack / vstack / dstack / column_stack of a tuple of arrays (Numba has them)."""
    def form(lw, eqn):
        arrs = eqn.args["arrays"]
        if not isinstance(arrs, TupleArg) or not all(
                isinstance(a, Var) and lw.av(a).shape for a in arrs.items):
            return None
        dt = lw.avals[eqn.out].dtype
        items = ", ".join(lw.fmt(a) if lw.av(a).dtype == dt else
                          f"{lw.fmt(a)}.astype({_dt(dt)})" for a in arrs.items)
        return f"np.{kind}(({items},))"
    return form


def sort(lw, eqn):
    """np.sort: Numba sorts along the last axis (axis=None: the flattened array)."""
    x = eqn.args["x"]
    xs = lw.av(x)
    axis = _const(eqn, "axis", -1)
    if axis is None:
        return f"np.sort({lw.fmt(x)}.ravel())"
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None:
        return None
    if k == xs.ndim - 1:
        return f"np.sort({lw.fmt(x)})"
    # another axis: moved last (a transposed view), sorted, moved back, made contiguous
    perm = [i for i in range(xs.ndim) if i != k] + [k]
    back = [perm.index(i) for i in range(xs.ndim)]
    return (f"np.ascontiguousarray(np.transpose(np.sort(np.transpose({lw.fmt(x)}, "
            f"{tuple(perm)})), {tuple(back)}))")


def argsort(lw, eqn):
    x = eqn.args["x"]
    if lw.av(x).ndim != 1 or _const(eqn, "axis", -1) not in (-1, 0):
        return None
    return f"np.argsort({lw.fmt(x)})"


def whole(fn):
    """np.any / np.all / np.count_nonzero over all elements."""
    def form(lw, eqn):
        if _const(eqn, "axis") is not None:
            return None
        return f"np.{fn}({lw.fmt(eqn.args['x'])})"
    return form


def linalg(fn, pick=None):
    """np.linalg functions on a contiguous float array (what Numba's LAPACK calls need);
    `pick`: the element of a tuple result (slogdet's sign and log)."""
    def form(lw, eqn):
        args = []
        for a in eqn.args.values():
            av = lw.av(a)
            if av is None or not av.shape:
                return None
            dt = av.dtype if np.issubdtype(av.dtype, np.inexact) else np.dtype(np.float64)
            args.append(f"{lw.fmt(a)}.astype({_dt(dt)})" if dt != av.dtype
                        else f"np.ascontiguousarray({lw.fmt(a)})")
        text = f"np.linalg.{fn}({', '.join(args)})"
        return text if pick is None else f"{text}[{pick}]"
    return form


def logsumexp(lw, eqn):
    """scipy.special.logsumexp over every element (runtime/backends/numba_special.py)."""
    if any(_const(eqn, k, d) != d for k, d in (("axis", None), ("b", None),
                                               ("keepdims", False), ("return_sign", False))):
        return None
    a = eqn.args["a"]
    if not np.issubdtype(lw.av(a).dtype, np.floating):
        return None
    return f"{_dt(lw.avals[eqn.out].dtype)}(logsumexp_all({lw.fmt(a)}))"


def tile_vjp(lw, eqn):
    """The cotangent of np.tile: every tile added back onto x."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    cs, xs, os_ = lw.av(ct), lw.av(x), lw.avals[out]
    if not xs.shape or len(cs.shape) < xs.ndim:
        return None
    off = len(cs.shape) - xs.ndim
    lines = [f"{out} = np.zeros({_shape(xs.shape)}, {_dt(os_.dtype)})"]
    lines += _loops(out, cs.shape, lambda i: [
        f"{out}[" + ", ".join(f"{i[off + k]} % {n}" for k, n in enumerate(xs.shape))
        + f"] += {lw.fmt(ct)}[{', '.join(i)}]"])
    return lines


def repeat_vjp(lw, eqn):
    """The cotangent of np.repeat with an int count: each run of copies summed."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    cs, xs, os_ = lw.av(ct), lw.av(x), lw.avals[out]
    reps, axis = _const(eqn, "repeats"), _const(eqn, "axis")
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps <= 0:
        return None
    dt = _dt(os_.dtype)
    if axis is None:
        flat, j = f"{out}_flat", f"{out}_j"
        return [f"{flat} = np.zeros({int(np.prod(xs.shape, dtype=np.int64))}, {dt})",
                f"{out}_ct = np.ascontiguousarray({lw.fmt(ct)}).ravel()",
                f"for {j} in range({out}_ct.shape[0]):",
                f"    {flat}[{j} // {int(reps)}] += {out}_ct[{j}]",
                f"{out} = {flat}.reshape({_shape(xs.shape)})" if xs.shape else
                f"{out} = {flat}[0]"]
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None:
        return None
    lines = [f"{out} = np.zeros({_shape(xs.shape)}, {dt})"]
    lines += _loops(out, cs.shape, lambda i: [
        f"{out}[" + ", ".join(f"{v} // {int(reps)}" if m == k else v for m, v in enumerate(i))
        + f"] += {lw.fmt(ct)}[{', '.join(i)}]"])
    return lines


def cumsum_vjp(lw, eqn):
    """The cotangent of np.cumsum: a cumulative sum from the end."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    cs, xs, os_ = lw.av(ct), lw.av(x), lw.avals[out]
    axis = _const(eqn, "axis")
    dt = _dt(os_.dtype)
    if axis is None:
        rev = f"np.ascontiguousarray({lw.fmt(ct)}).ravel()[::-1]"
        return f"np.ascontiguousarray(np.cumsum({rev})[::-1]).astype({dt}).reshape(" \
               f"{_shape(xs.shape)})" if xs.shape else None
    k = _axis(axis, cs.ndim) if axis is not _NOT_CONST else None
    if k is None:
        return None
    return _scan(out, f"{lw.fmt(ct)}.astype({dt})", "+", k, cs.shape, True)


def weights_along(lw, eqn):
    """np.average's weights shaped like x are used as they are."""
    w, x = eqn.args["weights"], eqn.args["x"]
    if lw.av(w) is None or lw.av(w).shape != lw.av(x).shape:
        return None
    return f"{lw.fmt(w)}.copy()"


def weights_back(lw, eqn):
    """Its transpose, for weights shaped like x (and a cotangent of that shape)."""
    ct, w, x = eqn.args["ct"], eqn.args["weights"], eqn.args["x"]
    if any(lw.av(a) is None or lw.av(a).shape != lw.av(x).shape for a in (ct, w)):
        return None
    return f"{lw.fmt(ct)}.copy()"


def joined_vjp(lw, eqn):
    """The cotangent of arrays[k] in np.vstack/hstack/...: its slice of the joined result."""
    ct, arrays, out = eqn.args["ct"], eqn.args["arrays"], eqn.out
    k, kind = _const(eqn, "k"), _const(eqn, "kind")
    if not isinstance(arrays, TupleArg) or not isinstance(k, int) or not isinstance(kind, str) \
            or any(lw.av(a) is None for a in arrays.items if isinstance(a, Var)):
        return None
    shapes = [lw.av(a).shape if isinstance(a, Var) else np.shape(a.value) for a in arrays.items]
    pieces = [AA._joined_form(np.zeros(s), kind) for s in shapes]
    axis = AA._join_axis(pieces, kind)
    start = sum(p.shape[axis] for p in pieces[:k])
    part = f"{lw.fmt(ct)}[{_at(axis, lw.av(ct).ndim, f'{start}:{start + pieces[k].shape[axis]}')}]"
    return f"np.ascontiguousarray({part}).reshape({_shape(shapes[k])})" if shapes[k] else None


def diff_vjp(lw, eqn):
    """The cotangent of np.diff: n times, minus the difference of the zero-padded cotangent."""
    ct, out = eqn.args["ct"], eqn.out
    cs, os_ = lw.av(ct), lw.avals[out]
    n, axis = _const(eqn, "n", 1), _const(eqn, "axis", -1)
    k = _axis(axis, cs.ndim) if axis is not _NOT_CONST else None
    if k is None or not isinstance(n, (int, np.integer)) or n < 1:
        return None
    lines, src, shape = [], lw.fmt(ct), list(cs.shape)
    for step in range(int(n)):
        dst = out if step == n - 1 else f"{out}_d{step + 1}"
        m = shape[k]
        shape[k] = m + 1
        lines += [f"{dst} = np.zeros({_shape(shape)}, {_dt(os_.dtype)})",
                  f"{dst}[{_at(k, len(shape), f':{m}')}] -= {src}",
                  f"{dst}[{_at(k, len(shape), '1:')}] += {src}"]
        src = dst
    return lines


def _shape(shape):
    shape = tuple(int(n) for n in shape)
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


# ---- adjoint helpers of linalg and np.average (issue 22: jit(grad) without a NumPy part) -------


def expand_last(lw, eqn):
    """rt.expand_last: a new axis of length 1 at the end (a reshape)."""
    x, out = eqn.args["x"], lw.avals[eqn.out]
    xs = lw.av(x)
    if xs is None or not xs.shape:
        return f"np.full({_shape(out.shape)}, {lw.fmt(x)}, {_dt(out.dtype)})"
    return f"np.ascontiguousarray({lw.fmt(x)}).reshape({_shape(out.shape)})"


def _weight_axes(lw, eqn):
    """The axes of x that np.average's weights lie along (sorted), None when the weights have
    x's shape, or False when the call has no form here."""
    w, x = eqn.args["weights"], eqn.args["x"]
    ws, xs = lw.av(w), lw.av(x)
    if ws is None or xs is None:
        return False
    if ws.shape == xs.shape:
        return None
    axis = _const(eqn, "axis")
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ks = [_axis(a, xs.ndim) for a in axes]
    if any(k is None for k in ks) or len(set(ks)) != len(ks) or len(ks) != ws.ndim:
        return False
    return tuple(ks)


def weights_laid(lw, eqn):
    """rt.weights_along: weights shaped like x as they are; 1-D weights (or weights along
    several axes) reshaped to lie along those axes of x."""
    axes = _weight_axes(lw, eqn)
    if axes is False:
        return None
    w, out = eqn.args["weights"], lw.avals[eqn.out]
    if axes is None:
        return f"{lw.fmt(w)}.copy()"
    text = lw.fmt(w)
    if len(axes) > 1:
        order = [int(i) for i in np.argsort(axes)]
        if order != sorted(order):
            text = f"np.transpose({text}, {tuple(order)})"
    return f"np.ascontiguousarray({text}).astype({_dt(out.dtype)}).reshape({_shape(out.shape)})"


def weights_laid_back(lw, eqn):
    """rt.weights_back, the transpose of weights_laid: the cotangent summed over the other
    axes of x, in the weights' own axis order."""
    axes = _weight_axes(lw, eqn)
    if axes is False:
        return None
    ct, out = eqn.args["ct"], eqn.out
    cs, xs, os_ = lw.av(ct), lw.av(eqn.args["x"]), lw.avals[out]
    if cs is None:
        return None
    if axes is None:
        return f"{lw.fmt(ct)}.copy()" if cs.shape == os_.shape else None
    if cs.ndim != xs.ndim:
        return None
    lines, src = [], lw.fmt(ct)
    for k in range(cs.ndim - 1, -1, -1):        # from the last axis: the others keep their places
        if k in axes:
            continue
        dst = f"{out}_s{k}"
        lines.append(f"{dst} = np.sum({src}, axis={k})")
        src = dst
    order = [int(i) for i in np.argsort(np.argsort(axes))]
    if order != sorted(order):
        src = f"np.transpose({src}, {tuple(order)})"
    lines.append(f"{out} = np.ascontiguousarray({src}).astype({_dt(os_.dtype)})"
                 f".reshape({_shape(os_.shape)})")
    return lines


def _matrices(lw, eqn, arg, fill):
    """Loops over the leading (stacked) axes of a matrix argument and its rows i and columns
    j; `fill(m, x, i, j)` gives the loop body for the index prefix m. The result starts at 0."""
    x, out = eqn.args[arg], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    if xs is None or xs.ndim < 2 or xs.shape[-1] != xs.shape[-2] or os_.shape != xs.shape:
        return None
    lead = xs.shape[:-2]
    n = int(xs.shape[-1])
    i, j = f"{out}_r", f"{out}_c"

    def inner(names):
        m = "".join(f"{v}, " for v in names)
        return [f"for {i} in range({n}):"] + ["    " + line for line in
                                                fill(m, lw.fmt(x), i, j)]
    return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})"] + \
        _loops(out, lead, inner)


def sym(lw, eqn):
    """rt.sym: (x + x^T) / 2 on the last two axes."""
    out = eqn.out
    return _matrices(lw, eqn, "x", lambda m, x, i, j: [
        f"for {j} in range({i} + 1):",
        f"    {out}[{m}{i}, {j}] = 0.5 * ({x}[{m}{i}, {j}] + {x}[{m}{j}, {i}])",
        f"    {out}[{m}{j}, {i}] = {out}[{m}{i}, {j}]"])


def phi(lw, eqn):
    """rt.phi: the lower triangle with the diagonal halved."""
    out = eqn.out
    return _matrices(lw, eqn, "x", lambda m, x, i, j: [
        f"for {j} in range({i}):",
        f"    {out}[{m}{i}, {j}] = {x}[{m}{i}, {j}]",
        f"{out}[{m}{i}, {i}] = 0.5 * {x}[{m}{i}, {i}]"])


def tri_read_t(lw, eqn):
    """rt.tri_read_t: the triangle UPLO names gets ct_ij + ct_ji (the diagonal ct_ii), the
    other strict triangle 0."""
    uplo, out = _const(eqn, "UPLO", "L"), eqn.out
    if uplo not in ("L", "U"):
        return None

    def at(m, i, j):
        return f"{m}{i}, {j}" if uplo == "L" else f"{m}{j}, {i}"
    return _matrices(lw, eqn, "ct", lambda m, x, i, j: [
        f"for {j} in range({i}):",
        f"    {out}[{at(m, i, j)}] = {x}[{m}{i}, {j}] + {x}[{m}{j}, {i}]",
        f"{out}[{m}{i}, {i}] = {x}[{m}{i}, {i}]"])


def real_only(lw, eqn):
    """rt.check_real_linalg / rt.check_real_eigh: a real matrix passes as it is (a complex one
    has no form: the NumPy version raises the error that names the function)."""
    xs = lw.av(eqn.args["x"])
    if xs is None or np.issubdtype(xs.dtype, np.complexfloating):
        return None
    return f"{lw.fmt(eqn.args['x'])}.copy()" if xs.shape else lw.fmt(eqn.args["x"])


def abs_factor(lw, eqn):
    """rt.abs_factor (d|x|): np.sign of a real x; conj(x) / |x| of a complex one, 0 at 0."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    if xs is None:
        return None
    dt = _dt(os_.dtype)
    if not np.issubdtype(xs.dtype, np.complexfloating):
        text = f"np.sign({lw.fmt(x)})"
        if not xs.shape:
            return f"{dt}({text})"
        return text if xs.dtype == os_.dtype else f"{text}.astype({dt})"
    if not xs.shape:
        return f"({dt}(0) if {lw.fmt(x)} == 0 else {dt}(np.conj({lw.fmt(x)}) / abs({lw.fmt(x)})))"
    lines = [f"{out} = np.zeros({_shape(os_.shape)}, {dt})"]
    lines += _loops(out, os_.shape, lambda i: [
        f"{out}_v = {lw.fmt(x)}[{', '.join(i)}]",
        f"if {out}_v != 0:",
        f"    {out}[{', '.join(i)}] = np.conj({out}_v) / abs({out}_v)"])
    return lines


def written_part(lw, eqn):
    """rt.written_part(g, index) of a write y[index] = v whose index is one integer vector
    among slices (y[idx] = v, y[1:3, idx] = v): g[index] (Numba takes one integer vector in
    an index), 0 where a later position of idx names the same element (NumPy keeps the last
    value written there). Basic indexes never reach here (specialization makes them copies
    of g[index])."""
    x, index, out = eqn.args["x"], eqn.args["index"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    if xs is None or not xs.shape or not isinstance(index, IndexArg) or \
            not 0 < len(index.items) <= xs.ndim:
        return None
    vectors = [p for p, it in enumerate(index.items) if not isinstance(it, SliceArg)]
    if len(vectors) != 1:
        return None
    p = vectors[0]
    idx = index.items[p]
    if isinstance(idx, Var):
        ia = lw.av(idx)
        if ia is None or ia.ndim != 1 or ia.dtype.kind not in "iu":
            return None
        m, itext = int(ia.shape[0]), lw.fmt(idx)
    elif isinstance(idx, Const) and isinstance(idx.value, np.ndarray) and \
            idx.value.ndim == 1 and idx.value.dtype.kind in "iu":
        m, itext = int(idx.value.shape[0]), f"{out}_idx"
    else:
        return None
    if len(os_.shape) != xs.ndim or os_.shape[p] != m:
        return None
    n = int(xs.shape[p])
    k, at, seen = f"{out}_k", f"{out}_at", f"{out}_seen"
    items = [_slice_text(lw, it) if isinstance(it, SliceArg) else itext for it in index.items]
    lines = []
    if isinstance(idx, Const):
        lines.append(f"{itext} = np.array({[int(v) for v in idx.value]}, np.int64)")
    lines += [f"{out} = np.ascontiguousarray({lw.fmt(x)}[{', '.join(items)}])"
              f".astype({_dt(os_.dtype)})",
              f"{seen} = np.zeros({n}, np.bool_)",
              f"for {k} in range({m} - 1, -1, -1):     # the last write wins",
              f"    {at} = {itext}[{k}] + {n} if {itext}[{k}] < 0 else {itext}[{k}]",
              f"    if {seen}[{at}]:",
              f"        {out}[{_at(p, len(os_.shape), k)}] = 0",
              f"    {seen}[{at}] = True"]
    return lines


def _slice_text(lw, it):
    lo = "" if it.lower is None else lw.fmt(it.lower)
    hi = "" if it.upper is None else lw.fmt(it.upper)
    return f"{lo}:{hi}" + (f":{lw.fmt(it.step)}" if it.step is not None else "")
