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
from transpile_runtime import array_adjoints as AA, stats_adjoints as SA


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
    # two slice copies into one new array (Numba's np.concatenate is ~3x slower)
    out, os_ = eqn.out, lw.avals[eqn.out]
    return [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})",
            f"{out}[{_at(k, xs.ndim, f':{s}')}] = {lw.fmt(x)}[{_at(k, xs.ndim, f'{n - s}:')}]",
            f"{out}[{_at(k, xs.ndim, f'{s}:')}] = {lw.fmt(x)}[{_at(k, xs.ndim, f':{n - s}')}]"]


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


HUGE_PAGES_FROM = 1 << 22    # bytes: transpile_runtime.backends.numba_memory.large_pages


def _cumulative(op, fn):
    def form(lw, eqn):
        if _const(eqn, "dtype") is not None or _const(eqn, "out") is not None:
            return None
        x, out = eqn.args["x"], eqn.out
        xs, os_ = lw.av(x), lw.avals[out]
        axis = _const(eqn, "axis")
        if xs.ndim == 1 and axis in (None, 0, -1) and xs.dtype == os_.dtype:
            # one loop into a new array backed by huge pages where it is large (NumPy's
            # accumulation is sequential too: the same numbers)
            big = xs.size * os_.dtype.itemsize >= HUGE_PAGES_FROM
            return [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"] + \
                ([f"large_pages({out})"] if big else []) + [
                    f"{out}_acc = {_dt(os_.dtype)}({'0' if op == '+' else '1'})",
                    f"for {out}_i in range({int(xs.shape[0])}):",
                    f"    {out}_acc {op}= {lw.fmt(x)}[{out}_i]",
                    f"    {out}[{out}_i] = {out}_acc"]
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
    # element by element inside (a slice per step cost ~100 ns: 300000 short rows took 30 ms)
    rest = [f"{out}_i{m}" for m in range(len(shape)) if m != k]

    def at(step):
        items = list(rest)
        items.insert(k, step)
        return ", ".join(items)
    lines = [f"{out} = {start}", f"for {j} in {loop}:"]
    d = 1
    for m, n in enumerate(shape):
        if m != k:
            lines.append("    " * d + f"for {out}_i{m} in range({int(n)}):")
            d += 1
    lines.append("    " * d + f"{out}[{at(j)}] {op}= {out}[{at(other)}]")
    return lines


cumsum = _cumulative("+", "cumsum")
cumprod = _cumulative("*", "cumprod")


def diff(lw, eqn):
    """np.diff along any axis: n differences of neighbouring slices."""
    x, out = eqn.args["x"], eqn.out
    xs = lw.av(x)
    if xs is None:          # (np.diff of a tuple: np.diag_indices_from's check of a shape)
        return None
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
    """np.sort along the last axis (axis=None: the flattened array): Numba's sort of small
    arrays, NumPy's of large ones (runtime/backends/numba_sort.py: sort_lines)."""
    x = eqn.args["x"]
    xs = lw.av(x)
    axis = _const(eqn, "axis", -1)
    if axis is None:
        return f"sort_lines({lw.fmt(x)}.ravel())"
    k = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if k is None:
        return None
    if k == xs.ndim - 1:
        return f"sort_lines({lw.fmt(x)})"
    if xs.shape[k] <= SHORT_SORT and xs.size and xs.dtype.kind in "biuf":
        return _short_sort(lw, eqn, x, k)
    # another axis: moved last (a transposed view), sorted, moved back, made contiguous
    perm = [i for i in range(xs.ndim) if i != k] + [k]
    back = [perm.index(i) for i in range(xs.ndim)]
    return (f"np.ascontiguousarray(np.transpose(sort_lines(np.transpose({lw.fmt(x)}, "
            f"{tuple(perm)})), {tuple(back)}))")


SHORT_SORT = 16     # an axis this short sorts by insertion, one position at a time


def _short_sort(lw, eqn, x, k):
    """np.sort along a short axis k that is not the last: for each position of the other
    axes, its n values are sorted by a sorting network (Batcher's odd-even merge) of
    branch-free compare-exchange steps (sort2: NaN last, as NumPy), which compile to selects;
    Numba's sort of a transposed view and an insertion sort were both ~2-5x slower than NumPy."""
    xs, out = lw.av(x), eqn.out
    n = xs.shape[k]
    rest = [d for i, d in enumerate(xs.shape) if i != k]
    names = [f"{out}_i{i}" for i in range(len(rest))]

    def at(j):
        items = list(names)
        items.insert(k, str(j))
        return ", ".join(items)
    step = "sort2" if xs.dtype.kind == "f" else "sort2_int"
    v = [f"{out}_v{j}" for j in range(n)]
    inner = [f"{v[j]} = {lw.fmt(x)}[{at(j)}]" for j in range(n)]
    inner += [f"{v[a]}, {v[b]} = {step}({v[a]}, {v[b]})" for a, b in _network(n)]
    inner += [f"{out}[{at(j)}] = {v[j]}" for j in range(n)]
    lines = [f"{out} = np.empty({_shape(xs.shape)}, {_dt(lw.avals[out].dtype)})"]
    for d, (i, m) in enumerate(zip(names, rest)):
        lines.append("    " * d + f"for {i} in range({int(m)}):")
    return lines + ["    " * len(rest) + line for line in inner]


def _network(n):
    """Batcher's odd-even merge sorting network for n values: compare-exchange pairs (a, b),
    a < b, in order (the network for the next power of two, without the pairs that reach
    past n: those positions hold +inf and never move)."""
    size = 1
    while size < n:
        size *= 2
    pairs = []
    p = 1
    while p < size:
        q = p
        while q >= 1:
            for j in range(q % p, size - q, 2 * q):
                for i in range(min(q, size - j - q)):
                    a, b = i + j, i + j + q
                    if a // (2 * p) == b // (2 * p) and b < n:
                        pairs.append((a, b))
            q //= 2
        p *= 2
    return pairs


def argsort(lw, eqn):
    """np.argsort along any axis (None: of the flattened array). Small arrays: Numba's argsort
    of each line along the axis, kept where the line's values are distinct; equal values (or
    NaNs), which NumPy orders by its own algorithm (introsort, SIMD sorts), and large arrays
    are NumPy's own argsort called from the compiled code (the same indices as NumPy,
    always)."""
    kind = _const(eqn, "kind")
    if kind not in (None, "quicksort", "stable", "mergesort"):
        return None
    return _argsort_lines(lw, eqn, kind in ("stable", "mergesort"))


def _argsort_lines(lw, eqn, stable):
    """argsort of eqn's x along its axis; stable: equal values keep their order."""
    x, out = eqn.args["x"], eqn.out
    xs = lw.av(x)
    axis = _const(eqn, "axis", -1)
    if xs is None or not xs.shape or axis is _NOT_CONST:
        return None
    src = lw.fmt(x)
    if axis is None:
        src, shape, k = f"np.ascontiguousarray({src}).ravel()", (int(np.prod(xs.shape)),), 0
    else:
        k = _axis(axis, xs.ndim)
        if k is None:
            return None
        shape = tuple(int(n) for n in xs.shape)
    rest = [n for i, n in enumerate(shape) if i != k]
    names = [f"{out}_i{i}" for i in range(len(rest))]
    at = list(names)
    at.insert(k, ":")
    at = ", ".join(at)
    src_name, by_numpy = f"{out}_x", f"{out}_by_numpy"
    lines = [f"{src_name} = {src}",
             f"{by_numpy} = {src_name}.size >= NUMPY_SORT_MIN",
             f"{out} = np.empty({_shape(shape)}, {_dt(lw.avals[out].dtype)})"]
    inner = [f"if not {by_numpy}:",
             f"    {out}_line = {src_name}[{at}]"]
    if stable:       # Numba's mergesort is stable: the indices NumPy's stable sort gives
        inner += [f"    {out}[{at}] = np.argsort({out}_line, kind='mergesort')"]
    else:
        inner += [f"    {out}_p = np.argsort({out}_line)",
                  f"    if distinct_sorted({out}_line, {out}_p):",
                  f"        {out}[{at}] = {out}_p",
                  "    else:",
                  f"        {by_numpy} = True"]
    for d, (i, m) in enumerate(zip(names, rest)):
        lines.append("    " * d + f"for {i} in range({int(m)}):")
    lines += ["    " * len(rest) + line for line in inner]
    return lines + [f"if {by_numpy}:",
                    f"    {out} = numpy_argsort({src_name}, {k}, {stable})"]


def whole(fn):
    """np.any / np.all / np.count_nonzero over all elements, or along one axis (a count of
    the nonzero or zero elements along it, Numba's np.sum with an axis)."""
    def form(lw, eqn):
        axis, x = _const(eqn, "axis"), eqn.args["x"]
        if axis is None:
            return f"np.{fn}({lw.fmt(x)})"
        xs = lw.av(x)
        k = _axis(axis, xs.ndim) if xs is not None and xs.ndim and \
            axis is not _NOT_CONST else None
        if k is None:
            return None
        if xs.ndim == 1:      # Numba's sum along the only axis gives a scalar: so does NumPy
            return f"np.{fn}({lw.fmt(x)})"
        test = "==" if fn == "all" else "!="
        count = f"np.sum({lw.fmt(x)} {test} 0, axis={k})"
        return {"any": f"{count} > 0", "all": f"{count} == 0",
                "count_nonzero": f"{count}.astype(np.int64)"}[fn]
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
    if os_.shape[k] <= n:       # x has n entries or fewer along the axis: np.diff was empty
        return f"np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})"
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


def with_k(fn):
    """np.diag / np.diagflat / np.triu / np.tril with a constant diagonal offset k (Numba
    takes each of them with the array's own dtype)."""
    def form(lw, eqn):
        k = _const(eqn, "k", 0)
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            return None
        x = eqn.args["x"] if "x" in eqn.args else eqn.args["v"]
        av = lw.av(x)
        if av is None or av.ndim not in ((1, 2) if fn in ("diag", "diagflat") else (2,)):
            return None
        if fn in ("triu", "tril"):     # runtime/backends/numba_arrays.py (Numba's: 20x slower)
            return f"triangle({lw.fmt(x)}, {int(k)}, {fn == 'triu'})"
        return f"np.{fn}({lw.fmt(x)}, {int(k)})"
    return form


def diag_vjp(lw, eqn):
    """The cotangent of np.diag(x, k): the k-th diagonal of ct (x a vector), or zeros of x's
    shape with ct on that diagonal (x a matrix, square or not)."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    k = _const(eqn, "k", 0)
    cs, xs, os_ = lw.av(ct), lw.av(x), lw.avals[out]
    if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)) or cs is None \
            or xs is None:
        return None
    k = int(k)
    if xs.ndim == 1 and cs.ndim == 2:
        return f"np.diag({lw.fmt(ct)}, {k})"
    if xs.ndim != 2 or cs.ndim != 1:
        return None
    i = f"{out}_i"
    return [f"{out} = np.zeros({_shape(xs.shape)}, {_dt(os_.dtype)})",
            f"for {i} in range({lw.fmt(ct)}.shape[0]):",
            f"    {out}[{i} + {max(-k, 0)}, {i} + {max(k, 0)}] = {lw.fmt(ct)}[{i}]"]


def _pad_widths(eqn, ndim):
    """np.pad's pad_width as (before, after) per axis, when it is a constant."""
    pw = _const(eqn, "pad_width")
    if pw is _NOT_CONST or pw is None:
        return None
    try:
        pw = np.broadcast_to(np.asarray(pw), (ndim, 2))
    except ValueError:
        return None
    if pw.dtype.kind not in "iu" or (pw < 0).any():
        return None
    return [(int(lo), int(hi)) for lo, hi in pw]


def _pad_source(mode, i, lo, n):
    """The position along one axis of x that np.pad(mode) copies to padded position i."""
    if mode == "edge":
        return f"min(max({i} - {lo}, 0), {n - 1})"
    if mode == "wrap":
        return f"({i} - {lo}) % {n}"
    if mode == "reflect":
        if n == 1:
            return "0"
        return f"{n - 1} - abs({n - 1} - ({i} - {lo}) % {2 * (n - 1)})"
    # symmetric
    t = f"({i} - {lo}) % {2 * n}"
    return f"{t} if {t} < {n} else {2 * n - 1} - {t}"


def _pad_mode(eqn):
    mode = _const(eqn, "mode", "constant")
    return mode if mode in ("constant", "edge", "wrap", "reflect", "symmetric") else None


def pad(lw, eqn):
    """np.pad with a constant pad_width: zeros around x (constant mode), or each element of
    the result copied from the position of x the mode names (edge, wrap, reflect, symmetric)."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    mode = _pad_mode(eqn)
    widths = _pad_widths(eqn, xs.ndim) if xs.shape else None
    if mode is None or widths is None or 0 in xs.shape:
        return None
    if mode == "constant":
        inner = ", ".join(f"{lo}:{lo + n}" for (lo, _), n in zip(widths, xs.shape))
        return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})",
                f"{out}[{inner}] = {lw.fmt(x)}"]
    names = [f"{out}_i{k}" for k in range(xs.ndim)]
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"]
    for k, (i, m) in enumerate(zip(names, os_.shape)):
        lines.append("    " * k + f"for {i} in range({int(m)}):")
        lines.append("    " * (k + 1) + f"{out}_s{k} = "
                     + _pad_source(mode, i, widths[k][0], int(xs.shape[k])))
    src = ", ".join(f"{out}_s{k}" for k in range(xs.ndim))
    lines.append("    " * xs.ndim + f"{out}[{', '.join(names)}] = {lw.fmt(x)}[{src}]")
    return lines


def pad_vjp(lw, eqn):
    """The cotangent of np.pad: the inner block (constant mode), or each element's cotangent
    added to the element of x it was copied from."""
    ct, out = eqn.args["ct"], eqn.out
    cs, os_ = lw.av(ct), lw.avals[out]
    mode = _pad_mode(eqn)
    widths = _pad_widths(eqn, cs.ndim) if cs.shape else None
    if mode is None or widths is None or not os_.shape or 0 in os_.shape:
        return None
    if mode == "constant":
        inner = ", ".join(f"{lo}:{lo + n}" for (lo, _), n in zip(widths, os_.shape))
        return f"{lw.fmt(ct)}[{inner}].copy()"
    names = [f"{out}_i{k}" for k in range(cs.ndim)]
    lines = [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})"]
    for k, (i, m) in enumerate(zip(names, cs.shape)):
        lines.append("    " * k + f"for {i} in range({int(m)}):")
        lines.append("    " * (k + 1) + f"{out}_s{k} = "
                     + _pad_source(mode, i, widths[k][0], int(os_.shape[k])))
    src = ", ".join(f"{out}_s{k}" for k in range(cs.ndim))
    lines.append("    " * cs.ndim + f"{out}[{src}] += {lw.fmt(ct)}[{', '.join(names)}]")
    return lines


def _reduced_axes(eqn, ndim):
    """The axes an order statistic reduces (sorted), or None: axis None, an int or a tuple
    of distinct ints."""
    axis = _const(eqn, "axis")
    if axis is _NOT_CONST:
        return None
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    ks = [_axis(a, ndim) for a in items]
    if not items or any(k is None for k in ks) or len(set(ks)) != len(ks):
        return None
    return tuple(sorted(ks))


SORT_LANES_UP_TO = 16     # a lane this short is sorted in place; a longer one partitioned


def _lanes(lw, x, axes, out, lines_per_lane, kth=None):
    """Loops over the positions of x's kept axes; at each, the lane along the reduced axes
    copied into `{out}_lane`, then `lines_per_lane(kept)` (kept: the kept axes' index names).
    With `kth` (the sorted positions the lines read), `{out}_s` holds the lane in sorted
    order at those positions and at the last one (NaN last, as NumPy's sort and partition;
    the last position then tells whether the lane holds a NaN): a short lane sorted by a
    sorting network, a longer one partitioned (Numba's np.partition, as NumPy partitions)."""
    xs = lw.av(x)
    kept = [d for d in range(xs.ndim) if d not in axes]
    n = int(np.prod([xs.shape[d] for d in axes], dtype=np.int64))
    names = {d: f"{out}_i{d}" for d in range(xs.ndim)}
    lines = [f"{out}_lane = np.empty({n}, {_dt(xs.dtype)})"]
    order = []
    if kth is not None and n <= SORT_LANES_UP_TO:
        # a sorting network of branch-free compare-exchanges (sort2: NaN last)
        step = "sort2" if xs.dtype.kind == "f" else "sort2_int"
        v = [f"{out}_v{j}" for j in range(n)]
        order = [f"{v[j]} = {out}_lane[{j}]" for j in range(n)]
        order += [f"{v[a]}, {v[b]} = {step}({v[a]}, {v[b]})" for a, b in _network(n)]
        order += [f"{out}_lane[{j}] = {v[j]}" for j in range(n)] + [f"{out}_s = {out}_lane"]
    elif kth is not None:
        ks = sorted({int(k) % n for k in kth} | {n - 1})
        lines.append(f"{out}_kth = np.array([{', '.join(map(str, ks))}], np.int64)")
        order = [f"{out}_s = np.partition({out}_lane, {out}_kth)"]
    depth = 0
    for d in kept:
        lines.append("    " * depth + f"for {names[d]} in range({int(xs.shape[d])}):")
        depth += 1
    inner = [f"{out}_p = 0"]
    d2 = 0
    for d in axes:
        inner.append("    " * d2 + f"for {names[d]} in range({int(xs.shape[d])}):")
        d2 += 1
    at = ", ".join(names[d] for d in range(xs.ndim))
    inner += ["    " * d2 + f"{out}_lane[{out}_p] = {lw.fmt(x)}[{at}]",
              "    " * d2 + f"{out}_p += 1"] + order
    inner += lines_per_lane([names[d] for d in kept])
    return lines + ["    " * depth + line for line in inner]


def _quantile_spots(q, n, method):
    """For one quantile q (a float64) of n sorted values, NumPy's choice (_quantile): ('take',
    index) or ('lerp', previous, next, gamma), indices as NumPy's (negative: from the end)."""
    if method in ("lower", "higher", "nearest"):
        v = (n - 1) * q
        v = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](v)
        return ("take", int(v))
    v = (n - 1) * q if method == "linear" else \
        0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q))
    prev = np.floor(v)
    nxt = prev + 1
    if v >= n - 1:
        prev = nxt = -1.0
    if v < 0:
        prev = nxt = 0.0
    gamma = v - prev
    if method == "midpoint":
        gamma = 0.0 if v % 1 == 0 else 0.5
    return ("lerp", int(prev), int(nxt), float(gamma))


def order_statistic(fn):
    """np.median / np.percentile / np.quantile (methods linear, lower, higher, nearest,
    midpoint) over every element or along axes, a constant q (a number or a vector), as
    NumPy computes them: each lane along the reduced axes sorted, the order statistics NumPy
    picks for each q, interpolated with NumPy's two-sided formula (a + (b - a) t, or
    b - (b - a) (1 - t) where t >= 0.5) in the result dtype (the difference in x's dtype);
    the median the mean of the middle one or two; a lane holding NaN gives NaN."""
    def form(lw, eqn):
        x, out = eqn.args["x"], eqn.out
        xs, os_ = lw.av(x), lw.avals[out]
        method = _const(eqn, "method", "linear")
        if xs is None or not xs.shape or 0 in xs.shape or xs.dtype.kind not in "fiu" or \
                _const(eqn, "out") is not None or _const(eqn, "weights") is not None or \
                method not in ("linear", "lower", "higher", "nearest", "midpoint") or \
                os_.dtype.kind != "f" and fn == "median":
            return None
        axes = _reduced_axes(eqn, xs.ndim)
        keep = _const(eqn, "keepdims", False)
        if axes is None or keep not in (True, False):
            return None
        n = int(np.prod([xs.shape[d] for d in axes], dtype=np.int64))
        whole = False
        if fn == "median":
            qs, qshape = [None], ()
        else:
            q = _const(eqn, "q")
            if q is _NOT_CONST:
                return None
            try:
                qa = np.asarray(q)
            except (TypeError, ValueError):
                return None
            if qa.dtype.kind not in "iuf":
                return None
            # integer quantiles (np.quantile(x, 1)): NumPy takes the element, no interpolation
            whole = fn == "quantile" and qa.dtype.kind in "iu" and method == "linear"
            qa = np.true_divide(qa, 100) if fn == "percentile" else qa.astype(np.float64)
            if qa.ndim > 1 or np.isnan(qa).any() or (qa < 0).any() or (qa > 1).any():
                return None
            qs, qshape = [float(v) for v in qa.ravel()], qa.shape
        core = [1 if d in axes else int(s) for d, s in enumerate(xs.shape) if keep or
                d not in axes]
        if tuple(os_.shape) != tuple(qshape) + tuple(core):
            return None
        dt, xdt = _dt(os_.dtype), _dt(xs.dtype)
        nan_check = xs.dtype.kind == "f"

        def value(j, q):
            s = f"{out}_s"
            if q is None:                       # the median: the mean of the middle values
                if n % 2:
                    return f"{dt}({s}[{(n - 1) // 2}])"
                a, b = f"{dt}({s}[{n // 2 - 1}])", f"{dt}({s}[{n // 2}])"
                return f"({a} + {b}) / {dt}(2)"
            spot = _quantile_spots(q, n, "lower" if whole else method)
            if spot[0] == "take":
                return f"{dt}({s}[{spot[1]}])"
            _, p, nx, t = spot
            a, b = f"{s}[{p}]", f"{s}[{nx}]"
            d = f"{dt}({xdt}({b} - {a}))"
            if t >= 0.5:
                return f"{dt}({b}) - {d} * {dt}({1 - t!r})"
            return f"{dt}({a}) + {d} * {dt}({t!r})"

        def per_lane(kept):
            lines = []
            for j, q in enumerate(qs):
                at = ([str(j)] if qshape else []) + (
                    [("0" if d in axes else f"{out}_i{d}") for d in range(xs.ndim)]
                    if keep else kept)
                target = f"{out}[{', '.join(at)}]" if at else out
                val = value(j, q)
                if nan_check:
                    val = f"{dt}({out}_s[{n - 1}]) if np.isnan({out}_s[{n - 1}]) else {val}"
                lines.append(f"{target} = {val}")
            return lines
        kth = ([n // 2 - 1, n // 2] if n % 2 == 0 else [(n - 1) // 2]) if fn == "median" else \
            [i for q in qs for i in _quantile_spots(q, n, "lower" if whole else method)[1:3]
             if isinstance(i, int)]
        head = [f"{out} = np.empty({_shape(os_.shape)}, {dt})"] if os_.shape else []
        return head + _lanes(lw, x, axes, out, per_lane, kth)
    return form


def quantile_mask(lw, eqn):
    """rt.quantile_mask for a constant q (a number or a vector), over every element or along
    axes: in each lane, the two order statistics around q (n - 1) (rt's _positions), each
    weight shared among the lane's entries equal to it (computed in float64, then in the
    result dtype); a vector q puts its entries on a leading axis."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    q = _const(eqn, "q")
    method = _const(eqn, "method", "linear")
    if q is _NOT_CONST or np.ndim(q) > 1 or not xs.shape or 0 in xs.shape or \
            method not in ("linear", "lower", "higher", "nearest", "midpoint") or \
            os_.shape != np.shape(q) + tuple(xs.shape):
        return None
    axes = _reduced_axes(eqn, xs.ndim)
    if axes is None:
        return None
    n = int(np.prod([xs.shape[d] for d in axes], dtype=np.int64))
    spots = [SA._positions(v, n, method) for v in np.ravel(np.asarray(q, dtype=np.float64))]
    lead = [str(j) for j in range(len(spots))] if np.ndim(q) else [None]
    dt = _dt(os_.dtype)
    names = [f"{out}_i{d}" for d in range(xs.ndim)]

    def per_lane(kept):
        # the lane's entries again, in x's order: where each equals the statistic
        at = ", ".join(names)
        walk, d2 = [], 0
        for d in axes:
            walk.append("    " * d2 + f"for {names[d]} in range({int(xs.shape[d])}):")
            d2 += 1
        pad = "    " * d2
        lines = []
        for j, (lo, hi, frac) in zip(lead, spots):
            lo, hi, f = int(lo), int(hi), float(frac)
            dest = at if j is None else f"{j}, {at}"
            lines += [f"{out}_lo = {out}_s[{lo}]", f"{out}_hi = {out}_s[{hi}]",
                      f"{out}_nlo = 0", f"{out}_nhi = 0"]
            lines += walk + [pad + f"{out}_nlo += {lw.fmt(x)}[{at}] == {out}_lo",
                             pad + f"{out}_nhi += {lw.fmt(x)}[{at}] == {out}_hi"]
            lines += walk + [
                pad + f"{out}[{dest}] = {dt}({1.0 - f!r} * (({lw.fmt(x)}[{at}] == {out}_lo) / "
                f"np.float64({out}_nlo)) + {f!r} * (({lw.fmt(x)}[{at}] == {out}_hi) / "
                f"np.float64({out}_nhi)))"]
        return lines
    kth = [int(k) for lo, hi, _ in spots for k in (lo, hi)]
    return [f"{out} = np.empty({_shape(os_.shape)}, {dt})"] + \
        _lanes(lw, x, axes, out, per_lane, kth)


def _quantile_weights(lw, eqn, w):
    """(nq, the reduced axes of x, x's shape) for rt.quantile_vjp / _jvp of a vector q."""
    q, ws = _const(eqn, "q"), lw.av(w)
    if q is _NOT_CONST or np.ndim(q) != 1 or ws is None or ws.ndim < 2 or \
            _const(eqn, "keepdims", False) not in (True, False):
        return None
    xshape = tuple(int(d) for d in ws.shape[1:])
    axes = _reduced_axes(eqn, len(xshape))
    if axes is None or ws.shape[0] != np.shape(q)[0]:
        return None
    return int(ws.shape[0]), axes, xshape


def _reduced_at(names, axes, keep):
    return [("0" if d in axes else v) for d, v in enumerate(names) if keep or d not in axes]


def quantile_vjp(lw, eqn):
    """rt.quantile_vjp for a vector q: each entry of x gets sum_j ct[j, its lane] w[j, it]."""
    ct, w, out = eqn.args["ct"], eqn.args["w"], eqn.out
    spec, os_ = _quantile_weights(lw, eqn, w), lw.avals[out]
    if spec is None or lw.av(ct) is None:
        return None
    nq, axes, xshape = spec
    if os_.shape != xshape:
        return None
    keep = _const(eqn, "keepdims", False)

    def body(names):
        cat = ", ".join([names[0]] + _reduced_at(names[1:], axes, keep))
        return [f"{out}[{', '.join(names[1:])}] += {lw.fmt(ct)}[{cat}] * "
                f"{lw.fmt(w)}[{', '.join(names)}]"]
    return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})"] + \
        _loops(out, (nq,) + xshape, body)


def quantile_jvp(lw, eqn):
    """rt.quantile_jvp for a vector q: sum over each lane of w * t, per entry of q."""
    t, w, out = eqn.args["t"], eqn.args["w"], eqn.out
    spec, os_ = _quantile_weights(lw, eqn, w), lw.avals[out]
    if spec is None or lw.av(t) is None or lw.av(t).shape != spec[2]:
        return None
    nq, axes, xshape = spec
    keep = _const(eqn, "keepdims", False)

    def body(names):
        oat = ", ".join([names[0]] + _reduced_at(names[1:], axes, keep))
        return [f"{out}[{oat}] += {lw.fmt(w)}[{', '.join(names)}] * "
                f"{lw.fmt(t)}[{', '.join(names[1:])}]"]
    return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})"] + \
        _loops(out, (nq,) + xshape, body)


def trace(lw, eqn):
    """np.trace of a matrix (axes 0 and 1, a constant offset): a sum along the diagonal in
    the result dtype."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    offset = _const(eqn, "offset", 0)
    if xs.ndim != 2 or _const(eqn, "axis1", 0) != 0 or _const(eqn, "axis2", 1) != 1 or \
            not isinstance(offset, (int, np.integer)) or isinstance(offset, bool) or os_.shape:
        return None
    k = int(offset)
    r0, c0 = max(-k, 0), max(k, 0)
    n = max(0, min(int(xs.shape[0]) - r0, int(xs.shape[1]) - c0))
    i = f"{out}_i"
    return [f"{out} = {_dt(os_.dtype)}(0)",       # (Numba's np.trace takes floats only)
            f"for {i} in range({n}):",
            f"    {out} += {lw.fmt(x)}[{i} + {r0}, {i} + {c0}]"]


def einsum(lw, eqn):
    """np.einsum with constant subscripts (no '...'): one loop per index letter, the output's
    outside (in its order), the summed ones inside, the product of the operands accumulated
    in the result dtype."""
    spec, ops = _const(eqn, "subscripts"), eqn.args["operands"]
    if not isinstance(spec, str) or "..." in spec or not isinstance(ops, TupleArg):
        return None
    spec = spec.replace(" ", "")
    ins, arrow, outs = spec.partition("->")
    ins = ins.split(",")
    if not arrow:           # implicit output: the letters seen once, in alphabetical order
        seen = "".join(ins)
        outs = "".join(sorted(c for c in set(seen) if seen.count(c) == 1))
    avs = [_scalar_const_av(v) if isinstance(v, Const) else lw.av(v) for v in ops.items]
    if len(ins) != len(avs) or any(av is None or av.ndim != len(sub)
                                   for av, sub in zip(avs, ins)):
        return None
    size = {}
    for av, sub in zip(avs, ins):
        for c, n in zip(sub, av.shape):
            if size.setdefault(c, int(n)) != int(n):
                return None        # (a length of 1 broadcast: NumPy's, not written out here)
    if any(c not in size for c in outs) or len(set(outs)) != len(outs):
        return None
    out, os_ = eqn.out, lw.avals[eqn.out]
    summed = [c for c in dict.fromkeys("".join(ins)) if c not in outs]
    name = {c: f"{out}_{c}" for c in size}
    term = " * ".join(f"{lw.fmt(v)}[{', '.join(name[c] for c in sub)}]" if sub else lw.fmt(v)
                      for v, sub in zip(ops.items, ins))
    acc = f"{out}_acc"
    lines = [] if outs else [f"{acc} = {_dt(os_.dtype)}(0)"]
    if outs:
        lines.append(f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})")
    depth = 0
    for c in outs:
        lines.append("    " * depth + f"for {name[c]} in range({size[c]}):")
        depth += 1
    if outs:
        lines.append("    " * depth + f"{acc} = {_dt(os_.dtype)}(0)")
    for c in summed:
        lines.append("    " * depth + f"for {name[c]} in range({size[c]}):")
        depth += 1
    lines.append("    " * depth + f"{acc} += {term}")
    if outs:
        lines.append("    " * len(outs) + f"{out}[{', '.join(name[c] for c in outs)}] = {acc}")
    else:
        lines.append(f"{out} = {acc}")
    return lines


def _scalar_const_av(c):
    """A number written into the code (the cotangent 1.0 of a scalar result) as an einsum
    operand: a stand-in with no axes, or None."""
    v = c.value
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        return None
    return np.asarray(v)


def einsum_scatter(lw, eqn):
    """rt.einsum_scatter (the cotangent of an einsum operand with a repeated index): zeros of
    x's shape, then one loop per distinct letter writing t on the diagonal."""
    t, x, out = eqn.args["t"], eqn.args["x"], eqn.out
    spec, xs, os_ = _const(eqn, "spec"), lw.av(x), lw.avals[out]
    if not isinstance(spec, str) or xs is None:
        return None
    src, _, dst = spec.partition("->")
    ts = _scalar_const_av(t) if isinstance(t, Const) else lw.av(t)
    if ts is None or len(dst) != xs.ndim or ts.ndim != len(src):
        return None
    size = {}
    for c, n in zip(dst, xs.shape):
        if size.setdefault(c, int(n)) != int(n):
            return None
    if any(c not in size or int(n) != size[c] for c, n in zip(src, ts.shape)):
        return None
    name = {c: f"{out}_{c}" for c in size}
    lines = [f"{out} = np.zeros({_shape(xs.shape)}, {_dt(os_.dtype)})"]
    depth = 0
    for c in dict.fromkeys(dst):
        lines.append("    " * depth + f"for {name[c]} in range({size[c]}):")
        depth += 1
    value = f"{lw.fmt(t)}[{', '.join(name[c] for c in src)}]" if src else lw.fmt(t)
    lines.append("    " * depth + f"{out}[{', '.join(name[c] for c in dst)}] = {value}")
    return lines


def _cast_to(lw, a, dtype):
    av = lw.av(a)
    return lw.fmt(a) if av is None or av.dtype == dtype else f"{lw.fmt(a)}.astype({_dt(dtype)})"


def sliding(fn):
    """np.convolve / np.correlate of two vectors in a constant mode: Numba's own, the
    operands in the result dtype."""
    def form(lw, eqn):
        x, y, os_ = eqn.args["x"], eqn.args["y"], lw.avals[eqn.out]
        mode = _const(eqn, "mode", "full" if fn == "convolve" else "valid")
        xs, ys = lw.av(x), lw.av(y)
        if mode not in ("full", "same", "valid") or xs is None or ys is None or \
                xs.ndim != 1 or ys.ndim != 1 or 0 in (xs.shape[0], ys.shape[0]) or \
                os_.dtype.kind not in "fc" or xs.shape[0] < ys.shape[0]:
            return None
        return f"np.{fn}({_cast_to(lw, x, os_.dtype)}, {_cast_to(lw, y, os_.dtype)}, {mode!r})"
    return form


def interp(lw, eqn):
    """np.interp without left/right/period: Numba's own."""
    if any(_const(eqn, k) is not None for k in ("left", "right", "period")):
        return None
    x, xp, fp, os_ = eqn.args["x"], eqn.args["xp"], eqn.args["fp"], lw.avals[eqn.out]
    if any(isinstance(a, Var) and (lw.av(a) is None or lw.av(a).dtype.kind not in "fiu")
           for a in (x, xp, fp)) or os_.dtype.kind != "f":
        return None
    text = f"np.interp({lw.fmt(x)}, {lw.fmt(xp)}, {lw.fmt(fp)})"
    return text if os_.shape else f"{_dt(os_.dtype)}({text})"


def cross(lw, eqn):
    """np.cross of 3-vectors along the last axes (default axes): Numba's own."""
    x, y, os_ = eqn.args["x"], eqn.args["y"], lw.avals[eqn.out]
    if any(_const(eqn, k, d) != d for k, d in (("axisa", -1), ("axisb", -1), ("axisc", -1),
                                                ("axis", None))):
        return None
    xs, ys = lw.av(x), lw.av(y)
    if xs is None or ys is None or not xs.shape or not ys.shape or xs.shape[-1] != 3 or \
            ys.shape[-1] != 3 or xs.shape != ys.shape:
        return None
    return f"np.cross({_cast_to(lw, x, os_.dtype)}, {_cast_to(lw, y, os_.dtype)})"


def norm(lw, eqn):
    """np.linalg.norm: of a whole vector or matrix with ord None/1/2/inf/-inf/'fro' (and
    -1/-2 of a matrix), Numba's own on a contiguous float array; every other real case
    (a vector p-norm for any p, ord 0, a matrix 'nuc', an axis, keepdims) written out as loops
    (_norm_lines), in the result dtype."""
    x, os_ = eqn.args["x"], lw.avals[eqn.out]
    xs, order = lw.av(x), _const(eqn, "ord")
    if xs is None or 0 in xs.shape or xs.dtype.kind not in "fiu":
        return None
    if _const(eqn, "axis") is None and not _const(eqn, "keepdims", False) and \
            xs.ndim in (1, 2) and not os_.shape and \
            (order is None or order in (1, 2, -1, -2, np.inf, -np.inf) and
             not (xs.ndim == 1 and order in (-1, -2)) or (order == "fro" and xs.ndim == 2)):
        dt = xs.dtype if xs.dtype.kind == "f" else np.dtype(np.float64)
        src = f"np.ascontiguousarray({_cast_to(lw, x, dt)})"
        ords = "" if order in (None, "fro") else ", " + (
            "np.inf" if order == np.inf else "-np.inf" if order == -np.inf else repr(order))
        return f"{_dt(os_.dtype)}(np.linalg.norm({src}{ords}))"
    spec = _norm_spec(lw, eqn, xs)
    return None if spec is None else _norm_lines(lw, eqn, x, xs, spec)


def _norm_spec(lw, eqn, xs):
    """(kind, axes, keepdims, p) of a real np.linalg.norm, or None where it has no loop form.
    axes in NumPy's order (a matrix norm: the row axis, then the column axis); kind: 'sq'
    (the 2-norm, Frobenius), 'abs' (1), 'count' (0), 'max'/'min' (inf/-inf), 'pow' (any
    other p), 'col'/'row' (matrix 1/-1, inf/-inf: the largest or smallest column/row sum of
    |x|, p its sign), 'svd' (matrix 2, -2, 'nuc': only of a 2-D x)."""
    order, axis, keep = _const(eqn, "ord"), _const(eqn, "axis"), _const(eqn, "keepdims", False)
    if keep not in (True, False) or axis is _NOT_CONST or order is _NOT_CONST or \
            xs.dtype.kind not in "fiu":
        return None
    if axis is None:
        if order is None:
            return "sq", tuple(range(xs.ndim)), bool(keep), 2
        if xs.ndim not in (1, 2):
            return None
        axes = tuple(range(xs.ndim))
    else:
        items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(_axis(a, xs.ndim) for a in items)
        if len(axes) not in (1, 2) or None in axes or len(set(axes)) != len(axes):
            return None
    if isinstance(order, (bool, np.bool_)):
        return None
    if len(axes) == 1:
        if order is None or (not isinstance(order, str) and order == 2):
            return "sq", axes, bool(keep), 2
        if isinstance(order, str) or not isinstance(order, (int, float, np.number)) or \
                order != order:
            return None
        kind = {np.inf: "max", -np.inf: "min", 0: "count", 1: "abs"}.get(float(order), "pow")
        return kind, axes, bool(keep), float(order)
    if order in (None, "fro"):
        return "sq", axes, bool(keep), 2
    if isinstance(order, str):
        return ("svd", axes, bool(keep), "nuc") if order == "nuc" and xs.ndim == 2 else None
    if order in (1, -1):
        return "col", axes, bool(keep), float(order)
    if order in (np.inf, -np.inf):
        return "row", axes, bool(keep), float(order)
    if order in (2, -2) and xs.ndim == 2:
        return "svd", axes, bool(keep), int(order)
    return None


def _norm_at(names, axes, keep):
    """The index of the norm's result at a lane (keepdims: 0 at the reduced axes)."""
    return ", ".join(_reduced_at(names, axes, keep))


def _pick(v, best, larger, first):
    """Statements keeping the larger (smaller) of v and best; a NaN, once seen, stays (as
    np.max / np.min)."""
    cmp = ">" if larger else "<"
    return [f"if {first} or ({best} == {best} and ({v} != {v} or {v} {cmp} {best})):",
            f"    {best} = {v}"]


def _lane_lines(lw, x, xs, kind, axes, p, out, dt, names):
    """Lines leaving the norm of the lane at the kept indices of `names` in `{out}_r`."""
    r, v, acc = f"{out}_r", f"{out}_v", f"{out}_acc"
    T = _dt(dt)

    def at(free):
        return ", ".join(free.get(d, names[d]) for d in range(xs.ndim))

    def loop(d, body, depth=0):
        return ["    " * depth + f"for {names[d]} in range({int(xs.shape[d])}):"] + \
            ["    " * (depth + 1) + line for line in body]
    if kind == "svd":
        m = _cast_to(lw, x, np.dtype(np.float64)) + (".T" if axes == (1, 0) else "")
        vals = f"svd_values_lapack(np.ascontiguousarray({m}))"
        pick = {"nuc": f"np.sum({vals})", 2: f"{vals}[0]", -2: f"{vals}[-1]"}[p]
        return [f"{r} = {T}({pick})"]
    if kind in ("col", "row"):
        outer, inner = (axes[1], axes[0]) if kind == "col" else (axes[0], axes[1])
        first = f"{names[outer]} == 0"
        body = [f"{acc} = {T}(0)"] + loop(inner, [f"{acc} += abs({T}({lw.fmt(x)}[{at({})}]))"]) \
            + _pick(acc, r, p > 0, first)
        return [f"{r} = {T}(0)"] + loop(outer, body)
    d = axes[0] if len(axes) == 1 else None
    read = f"{v} = {T}({lw.fmt(x)}[{at({})}])"
    if kind in ("max", "min"):
        return [f"{r} = {T}(0)"] + loop(d, [read, f"{v} = abs({v})"] +
                                        _pick(v, r, kind == "max", f"{names[d]} == 0"))
    step = {"sq": f"{acc} += {v} * {v}", "abs": f"{acc} += abs({v})",
            "count": f"{acc} += {T}(1) if {v} != 0 else {T}(0)",
            "pow": f"{acc} += abs({v}) ** {T}({p!r})"}[kind]
    lines = [read, step]
    for k in reversed(axes):
        lines = loop(k, lines)
    end = f"{r} = np.sqrt({acc})" if kind == "sq" else \
        f"{r} = {acc} ** {T}({1.0 / p!r})" if kind == "pow" else f"{r} = {acc}"
    return [f"{acc} = {T}(0)"] + lines + [end]


def _norm_lines(lw, eqn, x, xs, spec):
    kind, axes, keep, p = spec
    out, os_ = eqn.out, lw.avals[eqn.out]
    names = [f"{out}_i{d}" for d in range(xs.ndim)]
    kept = [d for d in range(xs.ndim) if d not in axes]
    lane = _lane_lines(lw, x, xs, kind, axes, p, out, os_.dtype, names)
    if not os_.shape:
        return lane + [f"{out} = {out}_r"]
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"]
    for depth, d in enumerate(kept):
        lines.append("    " * depth + f"for {names[d]} in range({int(xs.shape[d])}):")
    body = lane + [f"{out}[{_norm_at(names, axes, keep)}] = {out}_r"]
    return lines + ["    " * len(kept) + line for line in body]


def _factor_lines(lw, eqn, x, xs, nrm, F, dt):
    """Lines filling F (x's shape, dtype dt) with d norm / d x of a real np.linalg.norm, as
    rt.norm_vjp's factor (transpile_runtime/linalg_adjoints.py): x / norm (2, 'fro'), sign(x)
    (1), 0 (0), sign(x) |x / norm|^(p-1), sign(x) spread evenly over the entries where |x|
    reaches the norm (inf, -inf) or over the columns (rows) whose sum does (matrix 1, -1;
    inf, -inf), u v^T of the singular vectors (matrix 2, -2; 'nuc': U V^T); or None."""
    spec = _norm_spec(lw, eqn, xs)
    ns = _scalar_const_av(nrm) if isinstance(nrm, Const) else lw.av(nrm)
    if spec is None or ns is None or xs.dtype.kind not in "fiu" or 0 in xs.shape:
        return None
    kind, axes, keep, p = spec
    if kind == "sq" and len(axes) > 2:
        return None
    names = [f"{F}_i{d}" for d in range(xs.ndim)]
    kept = [d for d in range(xs.ndim) if d not in axes]
    T = _dt(dt)
    a = f"{F}_a"
    at = ", ".join(names)
    xv = f"{T}({lw.fmt(x)}[{at}])"

    def loops(ds, body, depth=0):
        lines = []
        for k, d in enumerate(ds):
            lines.append("    " * (depth + k) + f"for {names[d]} in range({int(xs.shape[d])}):")
        return lines + ["    " * (depth + len(ds)) + line for line in body]
    lines = [f"{F} = np.empty({_shape(xs.shape)}, {T})"]
    if kind == "svd":
        m = _cast_to(lw, x, np.dtype(np.float64)) + (".T" if axes == (1, 0) else "")
        u, s_, vh = f"{F}_u", f"{F}_s", f"{F}_vh"
        lines.append(f"{u}, {s_}, {vh} = np.linalg.svd(np.ascontiguousarray({m}), False)")
        if p == "nuc":
            f = f"np.dot({u}, {vh})"
        else:
            k = "0" if p == 2 else f"{s_}.shape[0] - 1"
            f = f"np.outer({u}[:, {k}], {vh}[{k}, :])"
        f = f if axes == (0, 1) else f"{f}.T"
        return lines + [f"{F}[:, :] = {f}"]
    if len(ns.shape):
        a_text = f"{lw.fmt(nrm)}[{_norm_at(names, axes, keep)}]"
    else:
        a_text = lw.fmt(nrm)
    body = [f"{a} = {T}({a_text})"]
    if kind in ("sq", "abs", "count", "pow"):
        val = {"sq": f"{xv} / {a}", "abs": f"np.sign({xv})", "count": f"{T}(0)",
               "pow": f"np.sign({xv}) * (abs({xv}) / {a}) ** {T}({p - 1!r})"}[kind]
        body += loops(axes, [f"{F}[{at}] = {val}"])
    elif kind in ("max", "min"):
        c = f"{F}_c"
        body += [f"{c} = 0"] + loops(axes, [f"if abs({xv}) == {a}:", f"    {c} += 1"])
        body += loops(axes, [f"{F}[{at}] = np.sign({xv}) / {c} if abs({xv}) == {a} "
                             f"else {T}(0)"])
    else:            # 'col' / 'row': the column (row) sums of |x|, the largest (smallest) kept
        outer, inner = (axes[1], axes[0]) if kind == "col" else (axes[0], axes[1])
        sums, best, c, acc = f"{F}_sums", f"{F}_best", f"{F}_c", f"{F}_acc"
        io = names[outer]
        body += [f"{sums} = np.empty({int(xs.shape[outer])}, {T})", f"{best} = {T}(0)"]
        body += loops([outer], [f"{acc} = {T}(0)"] + loops([inner], [f"{acc} += abs({xv})"]) +
                      [f"{sums}[{io}] = {acc}"] + _pick(acc, best, p > 0, f"{io} == 0"))
        body += [f"{c} = 0"] + loops([outer], [f"if {sums}[{io}] == {best}:", f"    {c} += 1"])
        body += loops([outer, inner], [f"{F}[{at}] = np.sign({xv}) / {c} if "
                                       f"{sums}[{io}] == {best} else {T}(0)"])
    return lines + loops(kept, body)


def _norm_rule_spec(lw, eqn, ct_name):
    """(x, x's aval, the norm, the cotangent/tangent argument, its aval or None) of
    rt.norm_vjp / rt.norm_jvp, or None."""
    x, nrm, c = eqn.args["x"], eqn.args["nrm"], eqn.args[ct_name]
    xs = lw.av(x)
    cs = _scalar_const_av(c) if isinstance(c, Const) else lw.av(c)
    if xs is None or cs is None or lw.avals[eqn.out].dtype.kind != "f":
        return None
    return x, xs, nrm, c, cs


def norm_vjp(lw, eqn):
    """rt.norm_vjp(ct, x, nrm, ord, axis, keepdims) of a real x: ct (at each lane) times the
    factor d norm / d x (_factor_lines)."""
    spec = _norm_rule_spec(lw, eqn, "ct")
    if spec is None:
        return None
    x, xs, nrm, ct, cs = spec
    out, os_ = eqn.out, lw.avals[eqn.out]
    F = f"{out}_F"
    lines = _factor_lines(lw, eqn, x, xs, nrm, F, os_.dtype)
    nspec = _norm_spec(lw, eqn, xs)
    if lines is None or os_.shape != xs.shape:
        return None
    _, axes, keep, _ = nspec
    if cs.shape == xs.shape:            # a cotangent already spread over x's shape
        return lines + [f"{out} = {F} * {lw.fmt(ct)}"]
    if not cs.shape:
        scale = lw.fmt(ct) if isinstance(ct, Const) else f"{_dt(os_.dtype)}({lw.fmt(ct)})"
        return lines + [f"{out} = {F} * {scale}"]
    want = tuple(1 if d in axes else n for d, n in enumerate(xs.shape)) if keep else \
        tuple(n for d, n in enumerate(xs.shape) if d not in axes)
    if tuple(cs.shape) != want:
        return None
    return lines + [f"{out} = np.empty({_shape(xs.shape)}, {_dt(os_.dtype)})"] + _loops(
        out, xs.shape, lambda i: [f"{out}[{', '.join(i)}] = {F}[{', '.join(i)}] * "
                                  f"{lw.fmt(ct)}[{_norm_at(i, axes, keep)}]"])


def norm_jvp(lw, eqn):
    """rt.norm_jvp(t, x, nrm, ord, axis, keepdims) of a real x: the sum over each lane of t
    times the factor d norm / d x (_factor_lines)."""
    spec = _norm_rule_spec(lw, eqn, "t")
    if spec is None:
        return None
    x, xs, nrm, t, ts = spec
    out, os_ = eqn.out, lw.avals[eqn.out]
    if ts.shape != xs.shape:
        return None
    F = f"{out}_F"
    lines = _factor_lines(lw, eqn, x, xs, nrm, F, os_.dtype)
    if lines is None:
        return None
    _, axes, keep, _ = _norm_spec(lw, eqn, xs)
    T = _dt(os_.dtype)
    if not os_.shape:
        acc = f"{out}_acc"
        return lines + [f"{acc} = {T}(0)"] + _loops(out, xs.shape, lambda i: [
            f"{acc} += {F}[{', '.join(i)}] * {lw.fmt(t)}[{', '.join(i)}]"]) + [f"{out} = {acc}"]
    return lines + [f"{out} = np.zeros({_shape(os_.shape)}, {T})"] + _loops(
        out, xs.shape, lambda i: [f"{out}[{_norm_at(i, axes, keep)}] += "
                                  f"{F}[{', '.join(i)}] * {lw.fmt(t)}[{', '.join(i)}]"])


def searchsorted(lw, eqn):
    """np.searchsorted of a sorted vector (also of run-time length: np.unique's): Numba's
    own."""
    a, v, os_ = eqn.args["a"], eqn.args["v"], lw.avals.get(eqn.out)
    side = _const(eqn, "side", "left")
    a_av = lw.av(a) or (lw.unsized.get(a.name) if isinstance(a, Var) else None)
    if side not in ("left", "right") or _const(eqn, "sorter") is not None or \
            a_av is None or a_av.ndim != 1 or os_ is None:
        return None
    text = f"np.searchsorted({lw.fmt(a)}, {lw.fmt(v)}, side={side!r})"
    return text if os_.shape else f"np.int64({text})"


def meshgrid_part(lw, eqn):
    """Output k of np.meshgrid of vectors (dense): each element reads its vector at its index
    along the axis that vector spans ('xy': the first two swapped)."""
    xi, out, os_ = eqn.args["xi"], eqn.out, lw.avals[eqn.out]
    k, n = _const(eqn, "k", 0), len(xi.items) if isinstance(xi, TupleArg) else 0
    if not n or _const(eqn, "sparse", False) or not isinstance(k, int) or \
            any(lw.av(a) is None or lw.av(a).ndim != 1 for a in xi.items):
        return None
    axis = (1 - k if k < 2 and n > 1 else k) if _const(eqn, "indexing", "xy") == "xy" else k
    return [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"] + _loops(
        out, os_.shape, lambda i: [f"{out}[{', '.join(i)}] = {lw.fmt(xi.items[k])}[{i[axis]}]"])


def interp_index(lw, eqn):
    """rt.interp_index(x, xp): the segment np.interp reads for each x, clipped to the ends."""
    x, xp, os_ = eqn.args["x"], eqn.args["xp"], lw.avals[eqn.out]
    xps = lw.av(xp)
    if xps is None or xps.ndim != 1:
        return None
    last = max(int(xps.shape[0]) - 2, 0)
    found = f"np.searchsorted({lw.fmt(xp)}, {lw.fmt(x)}, side='right') - 1"
    if os_.shape:
        return f"np.minimum(np.maximum({found}, 0), {last})"
    return f"np.int64(min(max({found}, 0), {last}))"


def take_vjp(lw, eqn):
    """rt.take_vjp of np.take(x, indices) over the flattened x (no axis): each element of ct
    added to the element of x its index names (repeated indices add up)."""
    ct, x, idx, out = eqn.args["ct"], eqn.args["x"], eqn.args["indices"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    cs = lw.av(ct) if isinstance(ct, Var) else None
    ids = lw.av(idx) if isinstance(idx, Var) else None
    ax = _take_axis(lw, eqn, x, idx)
    if ax is not None:          # along an axis: the slab of ct at k added at index idx[k]
        if cs is None or _const(eqn, "mode", "raise") != "raise":
            return None
        head = ":, " * ax
        lines = [f"{out} = np.zeros({_shape(xs.shape)}, {_dt(os_.dtype)})"]
        if ids is None:         # one integer: the slab of x it took
            at = f"{out}[{head}{lw.fmt(idx)}]"
            return lines + [f"{at} = {at} + {lw.fmt(ct)}"]
        k = f"{out}_k"
        at = f"{out}[{head}{lw.fmt(idx)}[{k}]]"
        return lines + [f"for {k} in range({lw.fmt(idx)}.shape[0]):",
                        f"    {at} = {at} + {lw.fmt(ct)}[{head}{k}]"]
    if _const(eqn, "axis") is not None or _const(eqn, "mode", "raise") != "raise" or \
            xs is None or ids is None or ids.dtype.kind not in "iu" or ids.ndim > 1 or \
            (cs is not None and cs.shape != ids.shape) or (cs is None and not isinstance(ct, Const)):
        return None
    flat = f"{out}_flat"
    lines = [f"{out} = np.zeros({_shape(xs.shape) if xs.shape else '()'}, {_dt(os_.dtype)})",
             f"{flat} = {out}.reshape(-1)"]
    if ids.ndim == 0:
        return lines + [f"{flat}[{lw.fmt(idx)}] += {lw.fmt(ct)}"]
    k = f"{out}_k"
    val = f"{lw.fmt(ct)}[{k}]" if cs is not None and cs.ndim else lw.fmt(ct)
    return lines + [f"for {k} in range({lw.fmt(idx)}.shape[0]):",
                    f"    {flat}[{lw.fmt(idx)}[{k}]] += {val}"]


def _take_axis(lw, eqn, x, idx):
    """np.take's axis, as a non-negative constant, where the call is a subscript along it:
    x of known rank, indices a vector of integers or one Python integer; else None."""
    axis, xs = _const(eqn, "axis"), lw.av(x)
    if not isinstance(axis, int) or isinstance(axis, bool) or xs is None or \
            not -xs.ndim <= axis < xs.ndim or _const(eqn, "out") is not None:
        return None
    if isinstance(idx, Var):
        ids = lw.av(idx)
        if ids is None or ids.ndim != 1 or ids.dtype.kind not in "iu":
            return None
    elif not (isinstance(idx, Const) and isinstance(idx.value, int) and
              not isinstance(idx.value, bool)):
        return None
    return axis % xs.ndim


def take(lw, eqn):
    """np.take over the flattened x (no axis), integer indices: Numba's own; along an axis,
    the subscript x[:, ..., indices] (a vector of integers or one integer)."""
    x, idx, os_ = eqn.args["x"], eqn.args["indices"], lw.avals[eqn.out]
    ids = lw.av(idx) if isinstance(idx, Var) else None
    ax = _take_axis(lw, eqn, x, idx)
    if ax is not None and _const(eqn, "mode", "raise") == "raise":
        text = f"{lw.fmt(x)}[{':, ' * ax}{lw.fmt(idx)}]"
        return text if os_.shape else f"{_dt(os_.dtype)}({text})"
    if _const(eqn, "axis") is not None or _const(eqn, "mode", "raise") != "raise" or \
            _const(eqn, "out") is not None or lw.av(x) is None or \
            (ids is None and not isinstance(idx, Const)) or \
            (ids is not None and ids.dtype.kind not in "iu"):
        return None
    text = f"np.take({lw.fmt(x)}, {lw.fmt(idx)})"
    return text if os_.shape else f"{_dt(os_.dtype)}({text})"


def flip(lw, eqn, axes=None):
    """np.flip: the array read backwards along those axes (a view, as NumPy's)."""
    x = eqn.args["x"]
    xs = lw.av(x)
    if xs is None or not xs.shape:
        return None
    if axes is None:
        axis = _const(eqn, "axis")
        if axis is _NOT_CONST:
            return None
        axes = tuple(range(xs.ndim)) if axis is None else \
            tuple(np.atleast_1d(axis).tolist())
    if any(not isinstance(a, int) or not -xs.ndim <= a < xs.ndim for a in axes):
        return None
    axes = {a % xs.ndim for a in axes}
    return f"{lw.fmt(x)}[{', '.join('::-1' if k in axes else ':' for k in range(xs.ndim))}]"


def flip_axis(k):
    """np.fliplr (k=1) / np.flipud (k=0): np.flip along axis k."""
    return lambda lw, eqn: flip(lw, eqn, (k,))


def _vector_axis(eqn, av):
    """Is the call along the only axis of a vector (axis -1, 0 or None)?"""
    return av is not None and av.ndim == 1 and _const(eqn, "axis", -1) in (-1, 0, None)


def sort_perm(lw, eqn):
    """rt.sort_perm: the stable argsort (of a vector: Numba's mergesort, NumPy's of large
    vectors; along an axis of an array: each line's)."""
    x = eqn.args["x"]
    if not _vector_axis(eqn, lw.av(x)):
        return _argsort_lines(lw, eqn, True)     # along an axis of an array: line by line
    return f"argsort_stable({lw.fmt(x)})"


def take_along(lw, eqn):
    """rt.take_along / np.take_along_axis: x[idx] of a vector; along an axis of an array, a
    loop over the result's positions reading x at idx's position along that axis."""
    x, idx, out = eqn.args["x"], eqn.args["idx"], eqn.out
    xs, ids = lw.av(x), lw.av(idx)
    if ids is None or xs is None:
        return None
    if _vector_axis(eqn, xs) and ids.ndim == 1:
        return f"{lw.fmt(x)}[{lw.fmt(idx)}]"
    axis = _const(eqn, "axis", -1)
    os_ = lw.avals[out]
    if axis is None or axis is _NOT_CONST or not xs.ndim or ids.ndim != xs.ndim or \
            os_ is None or os_.ndim != xs.ndim:
        return None
    k = axis % xs.ndim
    at_out, at_x, at_idx, loops = _along_loops(out, xs.shape, ids.shape, os_.shape, k)
    lines = [f"{out} = np.empty({_shape(os_.shape)}, {_dt(os_.dtype)})"] + loops
    pad = "    " * len(loops)
    return lines + [f"{pad}{out}_j = {lw.fmt(idx)}[{at_idx}]",
                    f"{pad}if {out}_j < 0:",
                    f"{pad}    {out}_j += {int(xs.shape[k])}",
                    f"{pad}{out}[{at_out}] = {lw.fmt(x)}[{at_x.format(j=out + '_j')}]"]


def _along_loops(out, xs, ids, os_, k):
    """Loops over the positions of a take_along result of shape os_ (x of shape xs, idx of
    shape ids, along axis k; an axis of length 1 broadcast reads position 0)."""
    names = [f"{out}_i{d}" for d in range(len(os_))]
    loops = ["    " * d + f"for {names[d]} in range({int(os_[d])}):" for d in range(len(os_))]
    at_out = ", ".join(names)
    at_idx = ", ".join(names[d] if ids[d] == os_[d] else "0" for d in range(len(os_)))
    at_x = ", ".join("{j}" if d == k else names[d] if xs[d] == os_[d] else "0"
                     for d in range(len(os_)))
    return at_out, at_x, at_idx, loops


def put_along(lw, eqn):
    """rt.put_along: ct added back where each element came from (add.at over repeated
    indices, of a vector and along an axis of an array)."""
    ct, like, idx, out = eqn.args["ct"], eqn.args["like"], eqn.args["idx"], eqn.out
    ls, os_, cs, ids = lw.av(like), lw.avals[out], lw.av(ct), lw.av(idx)
    if ls is None or ids is None or cs is None:
        return None
    if _vector_axis(eqn, ls) and ids.ndim == 1 and cs.shape == ids.shape:
        k = f"{out}_k"
        return [f"{out} = np.zeros({_shape(ls.shape)}, {_dt(os_.dtype)})",
                f"for {k} in range({lw.fmt(idx)}.shape[0]):",
                f"    {out}[{lw.fmt(idx)}[{k}]] += {lw.fmt(ct)}[{k}]"]
    axis = _const(eqn, "axis", -1)
    if axis is None or axis is _NOT_CONST or not ls.ndim or ids.ndim != ls.ndim or \
            cs.ndim != ls.ndim:
        return None
    k = axis % ls.ndim
    at_ct, at_x, at_idx, loops = _along_loops(out, ls.shape, ids.shape, cs.shape, k)
    pad = "    " * len(loops)
    return [f"{out} = np.zeros({_shape(ls.shape)}, {_dt(os_.dtype)})"] + loops + \
        [f"{pad}{out}_j = {lw.fmt(idx)}[{at_idx}]",
         f"{pad}if {out}_j < 0:",
         f"{pad}    {out}_j += {int(ls.shape[k])}",
         f"{pad}{out}[{at_x.format(j=out + '_j')}] += {lw.fmt(ct)}[{at_ct}]"]

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


def inner(lw, eqn):
    """np.inner: a product over the last axes, np.dot where BLAS takes it (float vectors and
    matrices: a matrix with a matrix is a @ b.T), a sum of products for integer vectors,
    a product with a scalar."""
    x, y, out = eqn.args["x"], eqn.args["y"], eqn.out
    xs, ys, os_ = lw.av(x), lw.av(y), lw.avals[out]
    if xs is None or ys is None or xs.ndim > 2 or ys.ndim > 2:
        return None
    dt = os_.dtype
    X, Y = (f"np.ascontiguousarray({_cast_to(lw, a, dt)})" if av.ndim else
            f"{_dt(dt)}({lw.fmt(a)})" for a, av in ((x, xs), (y, ys)))
    if not xs.ndim or not ys.ndim:
        return f"{X} * {Y}" if os_.shape else f"{_dt(dt)}({X} * {Y})"
    if dt.kind not in "fc":
        return f"{_dt(dt)}(np.sum({X} * {Y}))" if xs.ndim == ys.ndim == 1 else None
    if xs.ndim == 1 and ys.ndim == 1:
        return f"{_dt(dt)}(np.dot({X}, {Y}))"
    if ys.ndim == 1:
        return f"np.dot({X}, {Y})"
    if xs.ndim == 1:
        return f"np.dot({Y}, {X})"
    return f"np.dot({X}, np.ascontiguousarray({Y}.T))"


def nan_whole(fn, ddof=False):
    """Numba's np.<fn> (np.nanmean, np.nansum, ...) over every element, or along one axis (a
    loop over the other axes' rows), in the result's dtype (no dtype or out; a ddof other
    than 0 rescales the variance by n / (n - ddof), n the count of numbers)."""
    def form(lw, eqn):
        for k in ("dtype", "out"):
            if _const(eqn, k) is not None:
                return None
        keep = _const(eqn, "keepdims", False)
        d = _const(eqn, "ddof", 0) if ddof else 0
        if keep not in (True, False) or not isinstance(d, (int, np.integer, float)) or \
                isinstance(d, bool):
            return None
        if _const(eqn, "axis") is not None:
            return _nan_rows(lw, eqn, fn, d)
        if d:
            return None
        os_ = lw.avals[eqn.out]
        text = f"np.{fn}({lw.fmt(eqn.args['x'])})"
        if keep and fn != "nancumsum":          # every element, keepdims: (1, ..., 1)
            return f"np.full({_shape(os_.shape)}, {_dt(os_.dtype)}({text}))"
        return f"{text}.astype({_dt(os_.dtype)})" if os_.shape else f"{_dt(os_.dtype)}({text})"
    return form


def vdot(lw, eqn):
    """np.vdot: the flattened arrays' dot product, x conjugated (np.dot where BLAS takes it,
    a sum of products for integers)."""
    x, y, out = eqn.args["x"], eqn.args["y"], eqn.out
    xs, ys, os_ = lw.av(x), lw.av(y), lw.avals[out]
    if xs is None or ys is None or not xs.ndim or not ys.ndim or xs.size != ys.size:
        return None
    dt = os_.dtype
    X, Y = (f"np.ascontiguousarray({_cast_to(lw, a, dt)}).ravel()" for a in (x, y))
    if dt.kind == "c":
        return f"{_dt(dt)}(np.vdot({X}, {Y}))"
    if dt.kind == "f":
        return f"{_dt(dt)}(np.dot({X}, {Y}))"
    return f"{_dt(dt)}(np.sum({X} * {Y}))"


def mT(lw, eqn):
    """rt.mT: the last two axes swapped (a vector or a scalar as it is)."""
    x = eqn.args["x"]
    xs = lw.av(x)
    if xs is None:
        return None
    if xs.ndim < 2:
        return lw.fmt(x)
    perm = list(range(xs.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return f"np.transpose({lw.fmt(x)}, {_shape(tuple(perm))})"


def _nan_rows(lw, eqn, fn, ddof):
    """np.<fn>(x, axis=k): x's axes moved so that k is last, one row per other position,
    Numba's np.<fn> of each row; the rows in the result's shape (keepdims or not)."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    if fn == "nancumsum" or xs is None or not xs.ndim:
        return None
    k = _axis(_const(eqn, "axis"), xs.ndim)
    if k is None:
        return None
    perm = [m for m in range(xs.ndim) if m != k] + [k]
    n = int(xs.shape[k])
    rows = int(np.prod([xs.shape[m] for m in perm[:-1]], dtype=np.int64))
    r = f"{out}_r"
    val = f"np.{fn}({out}_m[{r}])"
    if ddof:       # NumPy: the sum of squares over (count - ddof)
        c = f"np.sum(~np.isnan({out}_m[{r}]))"
        val = (f"({val} * ({c} / max({c} - {ddof!r}, 0))" if fn == "nanvar" else
               f"({val} * np.sqrt({c} / max({c} - {ddof!r}, 0)))")
        if fn == "nanvar":
            val += ")"
    return [f"{out}_m = np.ascontiguousarray(np.transpose({lw.fmt(x)}, {_shape(tuple(perm))}))"
            f".reshape(({rows}, {n}))",
            f"{out}_f = np.empty({rows}, {_dt(os_.dtype)})",
            f"for {r} in range({rows}):",
            f"    {out}_f[{r}] = {val}",
            f"{out} = {out}_f.reshape({_shape(os_.shape)})" if os_.shape else
            f"{out} = {out}_f[0]"]


# ---- numpy.linalg factorizations (issue 22) ---------------------------------------------------
# NumPy computes real input (float32, integers, bool) in float64 and casts the results back to
# the result dtype; so do these forms: the same LAPACK routines on the same float64 numbers
# give NumPy's numbers, eigenvector and singular-vector signs included (tests compare them on
# the same inputs). Complex input, float16 and stacks of matrices have no form here (jit runs
# NumPy there). eigh / eigvalsh and svd without vectors call LAPACK as NumPy does
# (transpile_runtime/backends/numba_linalg.py); qr, svd with vectors and lstsq are Numba's own.


def _lapack_in(lw, a, ndims=(2,)):
    """The text of a real matrix argument in float64, or None where this has no form."""
    av = lw.av(a)
    if av is None or av.ndim not in ndims or av.dtype.kind not in "biuf" or \
            (av.dtype.kind == "f" and av.dtype.itemsize not in (4, 8)):
        return None
    return lw.fmt(a) if av.dtype == np.float64 else f"{lw.fmt(a)}.astype(np.float64)"


def _in_result_dtype(lw, eqn, text):
    """A float64 array result cast to the row's result dtype (float32 for float32 input)."""
    dt = lw.avals[eqn.out].dtype
    return text if dt == np.float64 else f"{text}.astype({_dt(dt)})"


def _uplo(eqn):
    uplo = _const(eqn, "UPLO", "L")
    return uplo.upper() if isinstance(uplo, str) and uplo.upper() in ("L", "U") else None


def eigh_part(pick, vectors=True):
    """rt.eigh_values / rt.eigh_vectors (pick 0 / 1) and np.linalg.eigvalsh (vectors=False):
    dsyevd on the triangle UPLO names."""
    def form(lw, eqn):
        src, uplo = _lapack_in(lw, eqn.args["x"]), _uplo(eqn)
        if src is None or uplo is None:
            return None
        return _in_result_dtype(lw, eqn, f"eigh_lapack({src}, {uplo == 'U'}, {vectors})[{pick}]")
    return form


def svd_values(lw, eqn):
    """rt.svd_values (np.linalg.svd(x, compute_uv=False)): dgesdd without vectors; with
    hermitian=True NumPy's |eigvalsh(x)| sorted descending."""
    src, herm = _lapack_in(lw, eqn.args["x"]), _const(eqn, "hermitian", False)
    if src is None or herm not in (True, False) or 0 in lw.av(eqn.args["x"]).shape:
        return None
    if herm:
        return _in_result_dtype(
            lw, eqn, f"np.sort(np.abs(eigh_lapack({src}, False, False)[0]))[::-1].copy()")
    return _in_result_dtype(lw, eqn, f"svd_values_lapack({src})")


def svd_vectors(pick):
    """rt.svd_u / rt.svd_vh (pick 0 / 2): Numba's np.linalg.svd (dgesdd, JOBZ 'A' or 'S' as
    full_matrices says, as NumPy's). hermitian=True (NumPy's eigh-based vectors, ordered by
    an argsort whose order of ties Numba's need not share) has no form."""
    def form(lw, eqn):
        src, full = _lapack_in(lw, eqn.args["x"]), _const(eqn, "full_matrices", True)
        if src is None or _const(eqn, "hermitian", False) is not False or \
                full not in (True, False) or 0 in lw.av(eqn.args["x"]).shape:
            return None
        return _in_result_dtype(lw, eqn, f"np.linalg.svd({src}, {bool(full)})[{pick}]")
    return form


def qr_part(pick):
    """rt.qr_q / rt.qr_r (pick 0 / 1), the reduced factors: Numba's np.linalg.qr (dgeqrf and
    dorgqr, as NumPy's)."""
    def form(lw, eqn):
        src = _lapack_in(lw, eqn.args["x"])
        if src is None or 0 in lw.av(eqn.args["x"]).shape:
            return None
        # (Q: a contiguous copy of Numba's slice of a Fortran array, which np.dot would warn of)
        text = f"np.linalg.qr({src})[{pick}]"
        return _in_result_dtype(lw, eqn, f"np.ascontiguousarray({text})" if pick == 0 else text)
    return form


def _scalar_text(lw, a, default):
    """A constant number or a scalar variable as text (None: the default), or None."""
    if isinstance(a, Const) or a is None:
        v = default if a is None or a.value is None else a.value
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                 np.floating)):
            return None
        return repr(float(v))
    av = lw.av(a)
    if av is None or av.shape or av.dtype.kind not in "iuf":
        return None
    return f"np.float64({lw.fmt(a)})"


def matrix_power(lw, eqn):
    """np.linalg.matrix_power of a float matrix to an integer known now: binary powering
    written out (a negative power inverts first, as NumPy's)."""
    x, n, xs = eqn.args["x"], eqn.args["n"], lw.av(eqn.args["x"])
    if xs is None or xs.ndim != 2 or xs.dtype.kind != "f" or xs.dtype.itemsize not in (4, 8) \
            or not isinstance(n, Const) or not isinstance(n.value, (int, np.integer)) or \
            isinstance(n.value, bool):
        return None
    out, k, m = eqn.out, int(xs.shape[0]), abs(int(n.value))
    dt = _dt(xs.dtype)
    if m == 0:
        return f"np.eye({k}).astype({dt})"
    base = f"np.ascontiguousarray({lw.fmt(x)})" if n.value > 0 else \
        f"np.linalg.inv(np.ascontiguousarray({lw.fmt(x)}))"
    sq = f"{out}_sq"
    lines, have = [f"{sq} = {base}"], False
    while m:                 # binary powering, unrolled (Numba's own typing fails on it)
        if m & 1:
            lines.append(f"{out} = {sq}.copy()" if not have else f"{out} = {out} @ {sq}")
            have = True
        m >>= 1
        if m:
            lines.append(f"{sq} = {sq} @ {sq}")
    return lines


def pinv(lw, eqn):
    """np.linalg.pinv as NumPy computes it: the reduced SVD (in float64, cast to the result
    dtype), singular values above rcond * max(s) inverted, the others 0, then
    vh^T @ (s^+ u^T) in the result dtype. hermitian=True has no form (see svd_vectors)."""
    x, out = eqn.args["x"], eqn.out
    src, xs, os_ = _lapack_in(lw, x), lw.av(x), lw.avals[out]
    rcond = _scalar_text(lw, eqn.args.get("rcond"), 1e-15)
    if src is None or rcond is None or _const(eqn, "hermitian", False) is not False or \
            0 in xs.shape or os_.dtype.kind != "f":
        return None
    m, n = (int(d) for d in xs.shape)
    k, dt = min(m, n), _dt(os_.dtype)
    u, s, vt, i = f"{out}_u", f"{out}_s", f"{out}_vt", f"{out}_i"
    cast = "" if os_.dtype == np.float64 else f".astype({dt})"
    return [f"{u}, {s}, {vt} = np.linalg.svd({src}, False)"] + \
        ([f"{s} = {s}{cast}"] if cast else []) + [
            f"{out}_cut = {rcond} * np.float64(np.max({s}))",
            f"for {i} in range({k}):",
            f"    {s}[{i}] = {dt}(1) / {s}[{i}] if {s}[{i}] > {out}_cut else {dt}(0)",
            f"{out} = np.dot(np.ascontiguousarray({vt}.T){cast}, "
            f"{s}.reshape(({k}, 1)) * np.ascontiguousarray({u}.T){cast})"]


def _lstsq_call(lw, eqn):
    """Numba's np.linalg.lstsq (dgelsd, as NumPy's) of float64 copies, with NumPy's default
    rcond (float64's eps times the longer side: NumPy solves in float64), or None."""
    a, b = eqn.args["x"], eqn.args["y"]
    sa, sb = _lapack_in(lw, a), _lapack_in(lw, b, (1, 2))
    if sa is None or sb is None or 0 in lw.av(a).shape or 0 in lw.av(b).shape:
        return None
    m, n = (int(d) for d in lw.av(a).shape)
    rcond = _scalar_text(lw, eqn.args.get("rcond"), np.finfo(np.float64).eps * max(m, n))
    if rcond is None:
        return None
    return f"np.linalg.lstsq({sa}, {sb}, {rcond})"


def lstsq_part(pick):
    """rt.lstsq_x / rt.lstsq_residuals / rt.lstsq_rank (pick 0 / 1 / 2), from one call of
    Numba's lstsq where they are adjacent equations (Lowerer.shared_result). The residuals'
    length is known only at run time (empty unless x has full column rank and more rows
    than columns): their form is lowered where values of run-time length are
    (lowering/cpu/unsized.py), and reads no result shape."""
    def form(lw, eqn):
        call = _lstsq_call(lw, eqn)
        if call is None:
            return None
        av = lw.avals.get(eqn.out) or lw.unsized.get(eqn.out)
        if av is None:
            return None
        whole, lines = lw.shared_result(call, eqn.out)      # (one call for adjacent parts)
        if pick == 2:
            return lines + [f"{eqn.out} = {_dt(av.dtype)}({whole}[2])"]
        text = f"{whole}[{pick}]"
        return lines + [f"{eqn.out} = " + (text if av.dtype == np.float64 else
                                           f"{text}.astype({_dt(av.dtype)})")]
    return form


def matrix_rank(lw, eqn):
    """np.linalg.matrix_rank of a matrix as NumPy counts: singular values (dgesdd without
    vectors; hermitian: |eigvalsh|) in the result dtype of np.linalg.svd, above tol, or
    above max(s) * rtol (default: the longer side times that dtype's eps)."""
    x, out = eqn.args["A"], eqn.out
    src, xs = _lapack_in(lw, x), lw.av(x)
    herm = _const(eqn, "hermitian", False)
    if src is None or herm not in (True, False) or 0 in xs.shape:
        return None
    sdt = np.dtype(np.float32) if xs.dtype == np.float32 else np.dtype(np.float64)
    vals = f"np.abs(eigh_lapack({src}, False, False)[0])" if herm else \
        f"svd_values_lapack({src})"
    s = f"{out}_s"
    lines = [f"{s} = {vals}" + ("" if sdt == np.float64 else f".astype({_dt(sdt)})")]
    tol, rtol = eqn.args.get("tol"), eqn.args.get("rtol")
    if tol is not None and not (isinstance(tol, Const) and tol.value is None):
        t = _scalar_text(lw, tol, None)
        if t is None or (rtol is not None and not (isinstance(rtol, Const) and
                                                   rtol.value is None)):
            return None
        lines.append(f"{out}_tol = {t}")
    else:
        r = _scalar_text(lw, rtol, None) if rtol is not None and not (
            isinstance(rtol, Const) and rtol.value is None) else None
        if r is None:
            if rtol is not None and not (isinstance(rtol, Const) and rtol.value is None):
                return None
            # max(m, n) * eps in the singular values' dtype, times their largest
            r = f"{_dt(sdt)}({max(xs.shape) * np.finfo(sdt).eps!r})"
            lines.append(f"{out}_tol = {_dt(sdt)}(max(np.max({s}), {_dt(sdt)}(0)) * {r})")
        else:       # rtol: an array of float64 in NumPy, so the product is float64
            lines.append(f"{out}_tol = np.float64(max(np.max({s}), {_dt(sdt)}(0))) * {r}")
    lines.append(f"{out} = {_dt(lw.avals[out].dtype)}(np.sum({s} > {out}_tol))")
    return lines


def residual_weights(lw, eqn):
    """rt.residual_weights(ct, like): the residuals' cotangent ct (of run-time length: one
    per column of y, or none) as a row of y (like's shape), zeros where it is empty."""
    ct, out = eqn.args["ct"], eqn.out
    os_ = lw.avals.get(out)
    if os_ is None or not isinstance(ct, Var):
        return None
    dt, c = _dt(os_.dtype), lw.fmt(ct)
    if not os_.shape:
        return [f"{out} = {dt}(0)", f"if {c}.size:", f"    {out} = {dt}({c}.ravel()[0])"]
    return [f"{out} = np.zeros({_shape(os_.shape)}, {dt})", f"if {c}.size:",
            f"    {out}[:] = {c}.reshape({_shape(os_.shape)})"]


def residual_weights_t(lw, eqn):
    """rt.residual_weights_t(c, res), its transpose: c (a row of y) in the residuals' shape
    (read at run time), zeros where there are none."""
    c, res, out = eqn.args["c"], eqn.args["res"], eqn.out
    rs = lw.unsized.get(out) if hasattr(lw, "unsized") else None
    if rs is None or not isinstance(res, Var) or rs.ndim != 1:
        return None
    return [f"{out} = np.zeros({lw.fmt(res)}.shape, {_dt(rs.dtype)})",
            f"if {lw.fmt(res)}.size:", f"    {out}[:] = {lw.fmt(c)}"]


def gap_inverse(lw, eqn):
    """rt.gap_inverse(w) of a vector: F[i, j] = 1 / (w[j] - w[i]) off the diagonal (in w's
    dtype; inf where two are equal, as NumPy's), 0 on it."""
    w, out = eqn.args["w"], eqn.out
    ws, os_ = lw.av(w), lw.avals[out]
    if ws is None or ws.ndim != 1:
        return None
    n, dt, i, j = int(ws.shape[0]), _dt(os_.dtype), f"{out}_i", f"{out}_j"
    return [f"{out} = np.zeros(({n}, {n}), {dt})",
            f"for {i} in range({n}):",
            f"    for {j} in range({n}):",
            f"        if {i} != {j}:",
            f"            {out}[{i}, {j}] = {dt}(1) / ({lw.fmt(w)}[{j}] - {lw.fmt(w)}[{i}])"]


def gap_inverse_jvp(lw, eqn):
    """rt.gap_inverse_jvp(t, w): -F^2 (t[j] - t[i]) for F = gap_inverse(w) (vectors)."""
    t, w, out = eqn.args["t"], eqn.args["w"], eqn.out
    ws, ts, os_ = lw.av(w), lw.av(t), lw.avals[out]
    if ws is None or ts is None or ws.ndim != 1 or ts.shape != ws.shape:
        return None
    n, dt, i, j = int(ws.shape[0]), _dt(os_.dtype), f"{out}_i", f"{out}_j"
    return [f"{out} = np.zeros(({n}, {n}), {dt})",
            f"for {i} in range({n}):",
            f"    for {j} in range({n}):",
            f"        if {i} != {j}:",
            f"            {out}_f = {dt}(1) / ({lw.fmt(w)}[{j}] - {lw.fmt(w)}[{i}])",
            f"            {out}[{i}, {j}] = -({out}_f * {out}_f) * "
            f"({lw.fmt(t)}[{j}] - {lw.fmt(t)}[{i}])"]


def gap_inverse_vjp(lw, eqn):
    """rt.gap_inverse_vjp(ct, w), its transpose: with c = -F^2 ct, the column sums minus the
    row sums of c."""
    ct, w, out = eqn.args["ct"], eqn.args["w"], eqn.out
    ws, cs, os_ = lw.av(w), lw.av(ct), lw.avals[out]
    if ws is None or cs is None or ws.ndim != 1 or cs.shape != (ws.shape[0],) * 2:
        return None
    n, dt, i, j = int(ws.shape[0]), _dt(os_.dtype), f"{out}_i", f"{out}_j"
    return [f"{out} = np.zeros(({n},), {dt})",
            f"for {i} in range({n}):",
            f"    for {j} in range({n}):",
            f"        if {i} != {j}:",
            f"            {out}_f = {dt}(1) / ({lw.fmt(w)}[{j}] - {lw.fmt(w)}[{i}])",
            f"            {out}_c = -({out}_f * {out}_f) * {lw.fmt(ct)}[{i}, {j}]",
            f"            {out}[{j}] += {out}_c",
            f"            {out}[{i}] -= {out}_c"]


def eye_like(lw, eqn):
    """rt.eye_like(x): the identity of x's last length, in the result dtype."""
    out = lw.avals[eqn.out]
    return f"np.eye({int(out.shape[-1])}).astype({_dt(out.dtype)})" if out.ndim == 2 else None


def check_svd_vectors(lw, eqn):
    """rt.check_svd_vectors(t, x, full_matrices): t where the singular vectors have rules
    (reduced vectors, or a square x); the refusal (full_matrices of a non-square x) has no
    form: the NumPy version raises it."""
    t, xs = eqn.args["t"], lw.av(eqn.args["x"])
    full = _const(eqn, "full_matrices", True)
    if xs is None or full not in (True, False) or (full and xs.shape[-1] != xs.shape[-2]):
        return None
    return f"{lw.fmt(t)}.copy()" if lw.av(t) is not None and lw.av(t).shape else lw.fmt(t)


def copyltu(lw, eqn):
    """rt.copyltu: the lower triangle of a square matrix mirrored onto the upper one."""
    out = eqn.out
    return _matrices(lw, eqn, "x", lambda m, x, i, j: [
        f"for {j} in range({i} + 1):",
        f"    {out}[{m}{i}, {j}] = {x}[{m}{i}, {j}]",
        f"    {out}[{m}{j}, {i}] = {x}[{m}{i}, {j}]"])


def copyltu_t(lw, eqn):
    """rt.copyltu_t, its transpose: x_ij + x_ji below the diagonal, x_ii on it, 0 above."""
    out = eqn.out
    return _matrices(lw, eqn, "x", lambda m, x, i, j: [
        f"for {j} in range({i}):",
        f"    {out}[{m}{i}, {j}] = {x}[{m}{i}, {j}] + {x}[{m}{j}, {i}]",
        f"{out}[{m}{i}, {i}] = {x}[{m}{i}, {i}]"])


# ---- np.kron, np.rot90, np.split / np.array_split pieces (issue 22) ----------------------------


def _kron_shapes(lw, x, y):
    """The shapes of np.kron's operands padded with leading 1s to the same rank, or None."""
    xs, ys = lw.av(x), lw.av(y)
    if xs is None or ys is None:
        return None
    nd = max(xs.ndim, ys.ndim)
    return (tuple([1] * (nd - xs.ndim) + [int(d) for d in xs.shape]),
            tuple([1] * (nd - ys.ndim) + [int(d) for d in ys.shape]), xs.ndim, ys.ndim)


def _kron_index(names, sa, sb, na, nb):
    """The indices of x and y that the element at `names` of np.kron(x, y) multiplies."""
    nd = len(sa)
    ia = [f"{v} // {b}" for v, b in zip(names, sb)][nd - na:]
    ib = [f"{v} % {b}" for v, b in zip(names, sb)][nd - nb:]
    return ", ".join(ia), ", ".join(ib)


def kron(lw, eqn):
    """np.kron: each element of the result is x[o // shape(y)] * y[o % shape(y)] (both cast
    to the result dtype, as NumPy's outer product multiplies)."""
    x, y, out = eqn.args["x"], eqn.args["y"], eqn.out
    shapes, os_ = _kron_shapes(lw, x, y), lw.avals[out]
    if shapes is None or not os_.shape:
        return None
    sa, sb, na, nb = shapes
    dt = _dt(os_.dtype)

    def body(names):
        ia, ib = _kron_index(names, sa, sb, na, nb)
        xa = f"{lw.fmt(x)}[{ia}]" if na else lw.fmt(x)
        yb = f"{lw.fmt(y)}[{ib}]" if nb else lw.fmt(y)
        return [f"{out}[{', '.join(names)}] = {dt}({xa}) * {dt}({yb})"]
    return [f"{out} = np.empty({_shape(os_.shape)}, {dt})"] + _loops(out, os_.shape, body)


def kron_vjp(side):
    """rt.kron_vjp_left (side 0) / rt.kron_vjp_right (side 1): each element of ct times the
    other operand's element it multiplied, added to the element of this one."""
    def form(lw, eqn):
        ct, x, y, out = eqn.args["ct"], eqn.args["x"], eqn.args["y"], eqn.out
        shapes, cs, os_ = _kron_shapes(lw, x, y), lw.av(ct), lw.avals[out]
        if shapes is None or cs is None or not cs.shape or not os_.shape:
            return None
        sa, sb, na, nb = shapes
        if cs.shape != tuple(a * b for a, b in zip(sa, sb)):
            return None
        dt = _dt(os_.dtype)

        def body(names):
            ia, ib = _kron_index(names, sa, sb, na, nb)
            mine, other, on = (ia, ib, nb) if side == 0 else (ib, ia, na)
            o = lw.fmt(y if side == 0 else x)
            o = f"{o}[{other}]" if on else o
            return [f"{out}[{mine}] += {lw.fmt(ct)}[{', '.join(names)}] * {o}"]
        return [f"{out} = np.zeros({_shape(os_.shape)}, {dt})"] + _loops(out, cs.shape, body)
    return form


def rot90(lw, eqn):
    """np.rot90 with a constant k and axes: flips and a transpose of x (a view, as NumPy's)."""
    x = eqn.args["x"]
    xs, k, axes = lw.av(x), _const(eqn, "k", 1), _const(eqn, "axes", (0, 1))
    if xs is None or xs.ndim < 2 or not isinstance(k, (int, np.integer)) or \
            isinstance(k, (bool, np.bool_)) or not isinstance(axes, (tuple, list)) or \
            len(axes) != 2 or any(not isinstance(a, (int, np.integer)) or
                                  not -xs.ndim <= a < xs.ndim for a in axes):
        return None
    a0, a1 = (int(a) % xs.ndim for a in axes)
    if a0 == a1:
        return None
    k = int(k) % 4

    def flipped(text, along):
        return f"{text}[{', '.join('::-1' if d in along else ':' for d in range(xs.ndim))}]"
    if k == 0:
        return f"{lw.fmt(x)}[{', '.join([':'] * xs.ndim)}]"
    if k == 2:
        return flipped(lw.fmt(x), (a0, a1))
    perm = list(range(xs.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:      # NumPy: transpose(flip(m, axes[1]), perm)
        return f"np.transpose({flipped(lw.fmt(x), (a1,))}, {tuple(perm)})"
    return flipped(f"np.transpose({lw.fmt(x)}, {tuple(perm)})", (a1,))   # k == 3


def _split_bounds(lw, eqn, xs):
    """(axis, start, stop) of piece k of np.split / np.array_split along a constant axis
    with constant sections or indices, or None (NumPy raises for an uneven np.split: no
    form, so the NumPy version raises it)."""
    ios, k, even = _const(eqn, "indices_or_sections"), _const(eqn, "k", 0), \
        _const(eqn, "even", True)
    axis = _const(eqn, "axis", 0)
    if xs is None or not xs.shape or ios is _NOT_CONST or not isinstance(k, int) or \
            even not in (True, False):
        return None
    if axis in AA.SPLIT_KINDS:     # np.hsplit / vsplit / dsplit (too few dimensions: NumPy's
        least, fixed = AA.SPLIT_KINDS[axis]         # error, from the NumPy version)
        if xs.ndim < least:
            return None
        axis = fixed if fixed is not None else (1 if xs.ndim > 1 else 0)
    ax = _axis(axis, xs.ndim) if axis is not _NOT_CONST else None
    if ax is None:
        return None
    n = int(xs.shape[ax])
    if isinstance(ios, (int, np.integer)) and not isinstance(ios, (bool, np.bool_)):
        parts = int(ios)
        if parts <= 0 or (even and n % parts):
            return None
        each, extra = divmod(n, parts)
        cuts = [0] + [each + 1] * extra + [each] * (parts - extra)
        bounds = np.cumsum(cuts).tolist()
    else:
        try:
            idx = [int(v) for v in ios]
        except (TypeError, ValueError):
            return None
        bounds = [0] + idx + [n]
    if not 0 <= k < len(bounds) - 1:
        return None
    lo, hi = bounds[k], bounds[k + 1]
    # NumPy slices x[lo:hi] (negative or past-the-end bounds as Python slices do)
    lo, hi, _ = slice(lo, hi).indices(n)
    return ax, lo, max(lo, hi)


def split_part(lw, eqn):
    """rt.split_part: piece k of np.split / np.array_split, a slice of x (a view, as
    NumPy's)."""
    x = eqn.args["x"]
    xs = lw.av(x)
    b = _split_bounds(lw, eqn, xs)
    if b is None:
        return None
    ax, lo, hi = b
    return f"{lw.fmt(x)}[{_at(ax, xs.ndim, f'{lo}:{hi}')}]"


def split_part_vjp(lw, eqn):
    """rt.split_part_vjp: zeros of x's shape with ct where piece k lies."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    b = _split_bounds(lw, eqn, xs)
    if b is None or os_.shape != xs.shape:
        return None
    ax, lo, hi = b
    return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})",
            f"{out}[{_at(ax, xs.ndim, f'{lo}:{hi}')}] = {lw.fmt(ct)}"]


def ptp(lw, eqn):
    """np.ptp over every element or along axes: the lane's max minus its min in x's dtype
    (NaN where the lane holds one; integers wrap as NumPy's subtraction does)."""
    x, out = eqn.args["x"], eqn.out
    xs, os_ = lw.av(x), lw.avals[out]
    keep = _const(eqn, "keepdims", False)
    if xs is None or not xs.shape or 0 in xs.shape or xs.dtype.kind not in "fiu" or \
            _const(eqn, "out") is not None or keep not in (True, False) or \
            os_.dtype != xs.dtype:
        return None
    axes = _reduced_axes(eqn, xs.ndim)
    if axes is None:
        return None
    dt = _dt(os_.dtype)

    def per_lane(kept):
        at = [("0" if d in axes else f"{out}_i{d}") for d in range(xs.ndim)] if keep else kept
        target = f"{out}[{', '.join(at)}]" if at else out
        return [f"{target} = {dt}(np.max({out}_lane) - np.min({out}_lane))"]
    head = [f"{out} = np.empty({_shape(os_.shape)}, {dt})"] if os_.shape else []
    return head + _lanes(lw, x, axes, out, per_lane)


# ---- np.cov, np.corrcoef (issue 22) -----------------------------------------------------------


def _const_vector(eqn, name):
    """A constant 1-D argument as float64 values, None when absent, or _NOT_CONST."""
    v = _const(eqn, name)
    if v is None or v is _NOT_CONST:
        return v
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        return _NOT_CONST
    return a if a.ndim == 1 else _NOT_CONST


def _cov_rows(lw, a, rowvar, is_m):
    """(rows, observations, transposed) of np.cov's observation matrix from m or y."""
    av = lw.av(a)
    if av is None or av.ndim not in (1, 2) or av.dtype.kind not in "biuf":
        return None
    if av.ndim == 1:
        return 1, int(av.shape[0]), False
    r, c = (int(d) for d in av.shape)
    # NumPy: m is transposed when not rowvar (and 2-D); y when not rowvar and of >1 rows
    flip = not rowvar and (is_m or r != 1)
    return (c, r, True) if flip else (r, c, False)


def _cov_body(lw, eqn, m_name, out):
    """Lines binding `{out}_c`, np.cov's 2-D matrix (float64), as NumPy computes it: the
    observation matrix X (m's rows, then y's), each row less its (weighted) mean, X @ (X w)^T
    times 1 / fact; or None. Weights must be constants (NumPy's checks of them then run
    here, at generation: invalid ones have no form, and the NumPy version raises)."""
    m, y = eqn.args[m_name], eqn.args.get("y", Const(None))
    rowvar, bias = _const(eqn, "rowvar", True), _const(eqn, "bias", False)
    ddof, dtype = _const(eqn, "ddof"), _const(eqn, "dtype")
    if rowvar not in (True, False) or bias not in (True, False, 0, 1) or \
            ddof is _NOT_CONST or dtype is not None or not isinstance(m, Var):
        return None
    if ddof is not None and (not isinstance(ddof, (int, np.integer)) or
                             isinstance(ddof, bool)):
        return None
    parts = [(m, _cov_rows(lw, m, rowvar, True))]
    if not (isinstance(y, Const) and y.value is None):
        if not isinstance(y, Var):
            return None
        parts.append((y, _cov_rows(lw, y, rowvar, False)))
    if any(p is None for _, p in parts) or len({p[1] for _, p in parts}) != 1:
        return None
    nv, nobs = sum(p[0] for _, p in parts), parts[0][1][1]
    if nv == 0:
        return None
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    fw, aw = _const_vector(eqn, "fweights"), _const_vector(eqn, "aweights")
    if fw is _NOT_CONST or aw is _NOT_CONST:
        return None
    w = None
    if fw is not None:
        if fw.shape != (nobs,) or not np.all(fw == np.around(fw)) or (fw < 0).any():
            return None
        w = fw
    if aw is not None:
        if aw.shape != (nobs,) or (aw < 0).any():
            return None
        w = aw if w is None else w * aw
    if w is None:
        fact = nobs - ddof
    else:
        w_sum = np.sum(w)
        fact = w_sum if ddof == 0 else w_sum - ddof if aw is None else \
            w_sum - ddof * np.sum(w * aw) / w_sum
    if not fact > 0:        # NumPy warns (and divides by 0): left to the NumPy version
        return None
    X, i = f"{out}_X", f"{out}_i"
    lines = [f"{X} = np.empty(({nv}, {nobs}), np.float64)"]
    row = 0
    for a, (r, _, flip) in parts:
        src = _cast_to(lw, a, np.dtype(np.float64))
        src = f"{src}.T" if flip else src
        lines.append(f"{X}[{row}:{row + r}, :] = {src}" if lw.av(a).ndim == 2 else
                     f"{X}[{row}, :] = {src}")
        row += r
    if w is None:
        lines += [f"for {i} in range({nv}):",
                  f"    {X}[{i}, :] -= np.sum({X}[{i}, :]) / {nobs}",
                  f"{out}_c = np.dot({X}, np.ascontiguousarray({X}.T)) * {1 / fact!r}"]
    else:
        wt = f"np.array([{', '.join(repr(float(v)) for v in w)}])"
        lines += [f"{out}_w = {wt}",
                  f"for {i} in range({nv}):",
                  f"    {X}[{i}, :] -= np.sum({X}[{i}, :] * {out}_w) / {float(np.sum(w))!r}",
                  f"{out}_c = np.dot({X}, np.ascontiguousarray(({X} * {out}_w).T)) * "
                  f"{1 / float(fact)!r}"]
    return lines, nv


def cov(lw, eqn):
    """np.cov (see _cov_body), squeezed as NumPy's: a scalar for one variable."""
    out, os_ = eqn.out, lw.avals[eqn.out]
    body = _cov_body(lw, eqn, "m", out) if os_.dtype == np.float64 else None
    if body is None:
        return None
    lines, nv = body
    if os_.shape != ((nv, nv) if nv > 1 else ()):
        return None
    return lines + [f"{out} = {out}_c" if nv > 1 else f"{out} = {out}_c[0, 0]"]


def corrcoef(lw, eqn):
    """np.corrcoef: np.cov's matrix divided by the standard deviations of its rows, then of
    its columns, clipped to [-1, 1] (NaN kept); for one variable, c / c."""
    out, os_ = eqn.out, lw.avals[eqn.out]
    body = _cov_body(lw, eqn, "x", out) if os_.dtype == np.float64 else None
    if body is None:
        return None
    lines, nv = body
    if nv == 1:
        return lines + [f"{out} = {out}_c[0, 0] / {out}_c[0, 0]"] if os_.shape == () else None
    if os_.shape != (nv, nv):
        return None
    i, j, v = f"{out}_i", f"{out}_j", f"{out}_v"
    return lines + [
        f"{out}_sd = np.sqrt(np.diag({out}_c).copy())",
        f"{out} = {out}_c",
        f"for {i} in range({nv}):",
        f"    for {j} in range({nv}):",
        f"        {v} = {out}[{i}, {j}] / {out}_sd[{i}] / {out}_sd[{j}]",
        f"        if {v} > 1.0:",
        f"            {v} = 1.0",
        f"        elif {v} < -1.0:",
        f"            {v} = -1.0",
        f"        {out}[{i}, {j}] = {v}"]


def _diagonal_spec(lw, eqn, x):
    """(offset, transposed) of np.diagonal of a matrix along its two axes, or None."""
    xs = lw.av(x)
    k, a1, a2 = _const(eqn, "offset", 0), _const(eqn, "axis1", 0), _const(eqn, "axis2", 1)
    if xs is None or xs.ndim != 2 or not isinstance(k, (int, np.integer)) or \
            isinstance(k, (bool, np.bool_)) or _axis(a1, 2) is None or _axis(a2, 2) is None \
            or _axis(a1, 2) == _axis(a2, 2):
        return None
    return int(k), _axis(a1, 2) == 1


def diagonal(lw, eqn):
    """np.diagonal of a matrix: Numba's np.diag with the offset (a copy: NumPy's read-only
    view is never written through, `view="opaque"`)."""
    x = eqn.args["x"]
    spec = _diagonal_spec(lw, eqn, x)
    if spec is None:
        return None
    k, flip = spec
    return f"np.diag({lw.fmt(x)}{'.T' if flip else ''}, {k})"


def diagonal_vjp(lw, eqn):
    """rt.diagonal_vjp of a matrix: zeros of x's shape with ct on that diagonal."""
    ct, x, out = eqn.args["ct"], eqn.args["x"], eqn.out
    spec, xs, os_, cs = _diagonal_spec(lw, eqn, x), lw.av(x), lw.avals[out], lw.av(ct)
    if spec is None or cs is None or cs.ndim != 1:
        return None
    k, flip = spec
    rows, cols = (int(d) for d in (xs.shape[::-1] if flip else xs.shape))
    count = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    if cs.shape[0] not in (1, count):       # (a length of 1 broadcasts, as NumPy's write)
        return None
    r0, c0 = (max(k, 0), max(-k, 0)) if flip else (max(-k, 0), max(k, 0))
    i = f"{out}_i"
    return [f"{out} = np.zeros({_shape(xs.shape)}, {_dt(os_.dtype)})",
            f"for {i} in range({count}):",
            f"    {out}[{i} + {r0}, {i} + {c0}] = "
            f"{lw.fmt(ct)}[{i if cs.shape[0] == count else 0}]"]


def _cov_layout(lw, eqn):
    """[(argument, rows, transposed)] of np.cov's observation matrix (m, then y), for the
    helpers of np.cov's rules, or None."""
    rowvar = _const(eqn, "rowvar", True)
    m, y = eqn.args["m"], eqn.args.get("y", Const(None))
    if rowvar not in (True, False) or not isinstance(m, Var):
        return None
    parts = [(m, _cov_rows(lw, m, rowvar, False))]
    if not (isinstance(y, Const) and y.value is None):
        if not isinstance(y, Var):
            return None
        parts.append((y, _cov_rows(lw, y, rowvar, False)))
    if any(p is None for _, p in parts):
        return None
    return [(a, p[0], p[2]) for a, p in parts]


def cov_obs_part(lw, eqn):
    """rt.cov_obs_part(t, m, y, rowvar, which): t's rows (as np.cov lays out m or y: at the
    top for which=0, below m's for which=1) in zeros of the observation matrix's shape."""
    t, out = eqn.args["t"], eqn.out
    layout, which, os_ = _cov_layout(lw, eqn), _const(eqn, "which", 0), lw.avals[out]
    if layout is None or which not in (0, 1) or which >= len(layout) or \
            lw.av(t) is None or os_.ndim != 2:
        return None
    start = 0 if which == 0 else layout[0][1]
    a, r, flip = layout[which]
    if lw.av(t).shape != lw.av(a).shape:
        return None
    src = f"{_cast_to(lw, t, os_.dtype)}{'.T' if flip else ''}"
    place = f"{out}[{start}:{start + r}, :] = {src}" if lw.av(a).ndim == 2 else \
        f"{out}[{start}, :] = {src}"
    return [f"{out} = np.zeros({_shape(os_.shape)}, {_dt(os_.dtype)})", place]


def cov_obs_vjp(lw, eqn):
    """rt.cov_obs_vjp(ct, m, y, rowvar, which): the rows of ct that came from m (which=0) or
    y (which=1), in that argument's shape."""
    ct, out = eqn.args["ct"], eqn.out
    layout, which, os_ = _cov_layout(lw, eqn), _const(eqn, "which", 0), lw.avals[out]
    cs = lw.av(ct)
    if layout is None or which not in (0, 1) or which >= len(layout) or cs is None or \
            cs.ndim != 2:
        return None
    start = 0 if which == 0 else layout[0][1]
    a, r, flip = layout[which]
    if os_.shape != lw.av(a).shape:
        return None
    block = f"{lw.fmt(ct)}[{start}:{start + r}, :]"
    block = f"{block}.T" if flip else block
    text = f"np.ascontiguousarray({block}).reshape({_shape(os_.shape)})" if os_.shape else None
    if text is None:
        return None
    return text if cs.dtype == os_.dtype else f"{text}.astype({_dt(os_.dtype)})"


def cov_constant(fn):
    """rt.cov_weights / rt.cov_norm: they read m's shape and constant weights only, so they
    are computed now (with NumPy, as the runtime helper) and written as constants."""
    def form(lw, eqn):
        vals = {}
        for k, a in eqn.args.items():
            if isinstance(a, Const):
                vals[k] = a.value
            elif lw.av(a) is not None and k in ("m", "y"):
                vals[k] = np.zeros(lw.av(a).shape, lw.av(a).dtype)
            else:
                return None
        try:
            v = fn(**vals)
        except Exception:       # (invalid arguments: the NumPy version raises)
            return None
        os_ = lw.avals[eqn.out]
        if np.ndim(v) == 0:
            return f"{_dt(os_.dtype)}({float(v)!r})"
        return f"np.array([{', '.join(repr(float(u)) for u in np.ravel(v))}], {_dt(os_.dtype)})"
    return form


def _static_value(a):
    """A Const's value, a TupleArg's items' values (nested); _NOT_CONST where one is not."""
    if isinstance(a, Const):
        return a.value
    if isinstance(a, TupleArg):
        items = [_static_value(i) for i in a.items]
        return _NOT_CONST if any(i is _NOT_CONST for i in items) else items
    return _NOT_CONST


def _contract_axes(axes, nx, ny):
    """np.tensordot's `axes` (an int, or two ints / sequences) as two lists of axes; None where
    they are not that."""
    if isinstance(axes, (int, np.integer)):
        return list(range(nx - int(axes), nx)), list(range(int(axes)))
    try:
        ax, ay = ([int(a)] if isinstance(a, (int, np.integer)) else [int(i) for i in a]
                  for a in axes)
    except (TypeError, ValueError):
        return None
    ax, ay = [a % nx for a in ax], [a % ny for a in ay]
    if len(ax) != len(ay) or len(set(ax)) != len(ax) or len(set(ay)) != len(ay):
        return None
    return ax, ay


def _tensordot_text(x, xshape, y, yshape, ax, ay):
    """The text of np.tensordot(x, y, (ax, ay)) by np.dot of the two operands made 2-D, and
    the shape of its result."""
    free_x = [d for d in range(len(xshape)) if d not in ax]
    free_y = [d for d in range(len(yshape)) if d not in ay]
    m = int(np.prod([xshape[d] for d in free_x], dtype=np.int64))
    k = int(np.prod([xshape[d] for d in ax], dtype=np.int64))
    n = int(np.prod([yshape[d] for d in free_y], dtype=np.int64))
    left = f"np.ascontiguousarray(np.transpose({x}, {tuple(free_x + ax)}))" \
        if len(xshape) > 1 else x if xshape else f"np.full((1, 1), {x})"
    right = f"np.ascontiguousarray(np.transpose({y}, {tuple(ay + free_y)}))" \
        if len(yshape) > 1 else y if yshape else f"np.full((1, 1), {y})"
    shape = tuple(int(xshape[d]) for d in free_x) + tuple(int(yshape[d]) for d in free_y)
    product = f"np.dot({left}.reshape(({m}, {k})), {right}.reshape(({k}, {n})))"
    return (f"{product}.reshape({_shape(shape)})" if shape else f"{product}[0, 0]"), shape


def _float_operands(lw, eqn, names):
    """The operands' avals where all share the result's float or complex dtype (np.dot's
    BLAS), else None."""
    os_ = lw.avals.get(eqn.out)
    avs = [lw.av(eqn.args[n]) for n in names]
    if os_ is None or any(a is None for a in avs) or os_.dtype.kind not in "fc" or \
            any(a.dtype != os_.dtype for a in avs):
        return None
    return avs


def tensordot(lw, eqn):
    """np.tensordot of float or complex arrays with axes known now: each operand's summed axes
    moved together (contracted last in x, first in y), both made 2-D and multiplied by
    np.dot (BLAS), the product given the result's shape."""
    avs = _float_operands(lw, eqn, ("x", "y"))
    axes = _static_value(eqn.args.get("axes", Const(2)))
    if avs is None or axes is _NOT_CONST:
        return None
    xs, ys = avs
    found = _contract_axes(axes, xs.ndim, ys.ndim)
    if found is None:
        return None
    return _tensordot_text(lw.fmt(eqn.args["x"]), xs.shape, lw.fmt(eqn.args["y"]), ys.shape,
                           *found)[0]


def tensordot_vjp(lw, eqn):
    """rt.tensordot_vjp: the cotangent of one operand of np.tensordot (the cotangent
    contracted with the other operand over that operand's free axes, axes put back in order)."""
    avs = _float_operands(lw, eqn, ("ct", "x", "y"))
    axes, which = _static_value(eqn.args["axes"]), _const(eqn, "which")
    if avs is None or axes is _NOT_CONST or which not in (0, 1):
        return None
    cs, xs, ys = avs
    found = _contract_axes(axes, xs.ndim, ys.ndim)
    if found is None:
        return None
    ax, ay = found
    free_x = [d for d in range(xs.ndim) if d not in ax]
    free_y = [d for d in range(ys.ndim) if d not in ay]
    na = len(free_x)
    ct = lw.fmt(eqn.args["ct"])
    if which == 0:
        text, _ = _tensordot_text(ct, cs.shape, lw.fmt(eqn.args["y"]), ys.shape,
                                  list(range(na, cs.ndim)), free_y)
        order = free_x + [ax[ay.index(j)] for j in sorted(ay)]
    else:
        text, _ = _tensordot_text(lw.fmt(eqn.args["x"]), xs.shape, ct, cs.shape,
                                  free_x, list(range(na)))
        order = [ay[ax.index(i)] for i in sorted(ax)] + free_y
    back = tuple(int(i) for i in np.argsort(order))
    return text if back == tuple(range(len(back))) else f"np.transpose({text}, {back})"


# np.gradient with a uniform spacing: each output slice along the axis as a sum of
# coefficient * f slice (coefficients in units of 1/h); edges by edge_order
_GRADIENT_TERMS = {
    1: [("1:-1", [(0.5, "2:"), (-0.5, ":-2")]), ("0", [(-1.0, "0"), (1.0, "1")]),
        ("-1", [(1.0, "-1"), (-1.0, "-2")])],
    2: [("1:-1", [(0.5, "2:"), (-0.5, ":-2")]), ("0", [(-1.5, "0"), (2.0, "1"), (-0.5, "2")]),
        ("-1", [(0.5, "-3"), (-2.0, "-2"), (1.5, "-1")])],
}


def _gradient_setup(lw, eqn, arr):
    """(axis, ndim, spacing text, edge order, the array's aval) of a np.gradient row with one
    axis and a uniform spacing (none, or one number); None otherwise."""
    av = lw.av(eqn.args[arr])
    if av is None or not av.ndim:
        return None
    axis = _static_value(eqn.args.get("axis", Const(None)))
    if axis is _NOT_CONST:
        return None
    if isinstance(axis, list):
        axis = axis[0] if len(axis) == 1 else _NOT_CONST
    if axis is None and av.ndim == 1:
        axis = 0
    if not isinstance(axis, (int, np.integer)) or not -av.ndim <= axis < av.ndim:
        return None
    order = _const(eqn, "edge_order", 1)
    spacing = eqn.args.get("varargs")
    items = spacing.items if isinstance(spacing, TupleArg) else () if spacing is None else \
        [Const(v) for v in spacing.value] if isinstance(spacing, Const) and \
        isinstance(spacing.value, tuple) else None
    if items is None or len(items) > 1 or order not in (1, 2):
        return None
    if items and (lw.av(items[0]) if isinstance(items[0], Var) else None) is not None and \
            lw.av(items[0]).ndim:
        return None     # coordinates (an array of positions): not lowered
    if items and isinstance(items[0], Const) and np.ndim(items[0].value):
        return None
    h = lw.fmt(items[0]) if items else "1.0"
    return int(axis) % av.ndim, av.ndim, h, order, av


def _along(k, nd, part):
    return ", ".join(part if d == k else ":" for d in range(nd))


def gradient_lines(arr, transpose=False):
    """rt.gradient_array / rt.gradient_apply (transpose=False): the stencil of np.gradient
    along its axis; rt.gradient_vjp (True): the stencil's transpose added into zeros."""
    def form(lw, eqn):
        setup = _gradient_setup(lw, eqn, "f" if transpose else arr)
        os_ = lw.avals.get(eqn.out)
        if setup is None or os_ is None or os_.dtype.kind not in "fc":
            return None
        k, nd, h, order, av = setup
        out, src = eqn.out, lw.fmt(eqn.args[arr])
        n = f"{src}.shape[{k}]"
        lines = [f"if {n} < {order + 1}:",
                 "    raise ValueError('Shape of array too small to calculate a numerical "
                 "gradient, at least (edge_order + 1) elements are required.')",
                 f"{out}_inv = 1.0 / {h}",
                 f"{out} = np.{'zeros' if transpose else 'empty'}({src}.shape, {_dt(os_.dtype)})"]
        for part, terms in _GRADIENT_TERMS[order]:
            if transpose:
                lines += [f"{out}[{_along(k, nd, s)}] += ({c} * {out}_inv) * "
                          f"{src}[{_along(k, nd, part)}]" for c, s in terms]
            else:
                total = " + ".join(f"({c} * {out}_inv) * {src}[{_along(k, nd, s)}]"
                                   for c, s in terms)
                lines.append(f"{out}[{_along(k, nd, part)}] = {total}")
        return lines
    return form
