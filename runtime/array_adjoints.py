"""Adjoint helpers for shape primitives (roll, repeat, the stack family, split, pad, sort,
cumprod, kron, linspace, tensordot). Each is a row of the primitive table
(transpile/primitives/numpy/arrays.py) with its own rules, so derivative code stays
differentiable."""
import numpy as np


def roll_back(ct, shift, axis=None):
    """Cotangent of x in np.roll(x, shift, axis)."""
    neg = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return np.roll(ct, neg, axis)


def repeat_vjp(ct, x, repeats, axis=None):
    """Cotangent of x in np.repeat(x, repeats, axis): sum each run of copies."""
    shape = np.shape(x)
    if axis is None:
        flat_n = int(np.prod(shape))
        return np.reshape(_sum_runs(np.ravel(ct), flat_n, repeats, 0), shape)
    axis = axis % len(shape)
    return _sum_runs(ct, shape[axis], repeats, axis)


def _sum_runs(ct, n, repeats, axis):
    reps = np.broadcast_to(np.asarray(repeats, dtype=int), (n,))
    starts = np.concatenate([[0], np.cumsum(reps)[:-1]]).astype(int)
    if np.all(reps > 0):
        return np.add.reduceat(ct, starts, axis=axis)
    out_shape = list(np.shape(ct))
    out_shape[axis] = n
    out = np.zeros(out_shape, dtype=np.result_type(ct))
    ids = np.repeat(np.arange(n), reps)
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, ids, np.moveaxis(ct, axis, 0))
    return out


_JOIN = {"vstack": (np.atleast_2d, 0), "hstack": (np.atleast_1d, None),
         "dstack": (np.atleast_3d, 2), "column_stack": (None, 1)}


def _joined_form(a, kind):
    if kind == "column_stack":
        a = np.asarray(a)
        return a.reshape(-1, 1) if a.ndim < 2 else a
    f, _ = _JOIN[kind]
    return f(a)


def _join_axis(pieces, kind):
    axis = _JOIN[kind][1]
    if axis is None:        # hstack: axis 0 for 1-D pieces, else 1
        axis = 0 if pieces[0].ndim == 1 else 1
    return axis


def joined_vjp(ct, arrays, k, kind):
    """Cotangent of arrays[k] in np.vstack/hstack/dstack/column_stack(arrays)."""
    pieces = [_joined_form(np.zeros(np.shape(a)), kind) for a in arrays]
    axis = _join_axis(pieces, kind)
    start = sum(p.shape[axis] for p in pieces[:k])
    index = [slice(None)] * np.ndim(ct)
    index[axis] = slice(start, start + pieces[k].shape[axis])
    return np.reshape(ct[tuple(index)], np.shape(arrays[k]))


def joined_array(x, kind):
    """np.vstack/hstack/dstack/column_stack of one array: the list of its rows."""
    return getattr(np, kind)(x)


def joined_array_vjp(ct, x, kind):
    """Cotangent of the array x in np.vstack/hstack/dstack/column_stack(x) (x read as the list
    of its rows)."""
    rows = list(np.asarray(x))
    parts = [joined_vjp(ct, rows, k, kind) for k in range(len(rows))]
    dtype = np.result_type(ct)
    return np.stack(parts).astype(dtype, copy=False) if parts else np.zeros(np.shape(x), dtype)


def joined_pad(part, arrays, k, kind):
    """Transpose of joined_vjp: zeros shaped like the joined result, `part` at slot k."""
    pieces = [_joined_form(np.zeros(np.shape(a)), kind) for a in arrays]
    axis = _join_axis(pieces, kind)
    shape = list(pieces[k].shape)
    shape[axis] = sum(p.shape[axis] for p in pieces)
    out = np.zeros(shape, dtype=np.result_type(part))
    start = sum(p.shape[axis] for p in pieces[:k])
    index = [slice(None)] * len(shape)
    index[axis] = slice(start, start + pieces[k].shape[axis])
    out[tuple(index)] = np.reshape(part, pieces[k].shape)
    return out


# np.hsplit / np.vsplit / np.dsplit: (the fewest dimensions NumPy takes, the axis they split)
SPLIT_KINDS = {"h": (1, None), "v": (2, 0), "d": (3, 2)}


def _split_axis(x, axis):
    """axis 'h' (np.hsplit): 1, or 0 for a 1-D array; 'v' (np.vsplit): 0; 'd' (np.dsplit): 2;
    each raising NumPy's error for an array of too few dimensions."""
    if axis not in SPLIT_KINDS:
        return axis
    least, fixed = SPLIT_KINDS[axis]
    if np.ndim(x) < least:
        raise ValueError(f"{axis}split only works on arrays of {least} or more dimensions")
    return fixed if fixed is not None else (1 if np.ndim(x) > 1 else 0)


def split_part(x, indices_or_sections, axis=0, k=0, even=True):
    """Piece k of np.split (even=True) / np.array_split (even=False) (and np.vsplit: axis 'v',
    np.hsplit: axis 'h', np.dsplit: axis 'd')."""
    f = np.split if even else np.array_split
    return f(x, indices_or_sections, _split_axis(x, axis))[k]


def split_part_vjp(ct, x, indices_or_sections, axis=0, k=0, even=True):
    """Cotangent of x for piece k of a split: zeros with ct at the piece's place."""
    out = np.zeros(np.shape(x), dtype=np.result_type(ct, np.float32) if np.ndim(ct) else
                   np.result_type(ct))
    f = np.split if even else np.array_split
    f(out, indices_or_sections, _split_axis(out, axis))[k][...] = ct
    return out


# np.pad's modes that copy elements of x into the border (the others compute new values)
PAD_COPY_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_vjp(ct, pad_width, ndim, mode="constant"):
    """Cotangent of x in np.pad(x, pad_width, mode): the inner block (constant mode), plus,
    for a mode that copies elements of x into the border, each border element's cotangent
    added to the element it copies (found by padding the elements' positions the same way)."""
    pw = np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2))
    index = tuple(slice(int(lo), ct.shape[i] - int(hi)) for i, (lo, hi) in enumerate(pw))
    if mode == "constant":
        return ct[index]
    if mode not in PAD_COPY_MODES:
        raise NotImplementedError(f"the gradient of np.pad with mode={mode!r} is not supported "
                                  f"(modes: {', '.join(PAD_COPY_MODES)})")
    shape = tuple(ct.shape[i] - int(lo) - int(hi) for i, (lo, hi) in enumerate(pw))
    size = int(np.prod(shape))
    source = np.pad(np.arange(size).reshape(shape), pad_width, mode=mode)
    total = np.bincount(source.ravel(), weights=np.real(ct).ravel(), minlength=size)
    if np.iscomplexobj(ct):
        total = total + 1j * np.bincount(source.ravel(), weights=np.imag(ct).ravel(),
                                         minlength=size)
    return total.reshape(shape).astype(np.result_type(ct), copy=False)


def sort_perm(x, axis=-1):
    """The permutation np.sort applies (stable), as indices along `axis`."""
    return np.argsort(x, axis=axis, kind="stable")


def take_along(x, idx, axis=-1):
    if axis is None:
        return np.ravel(x)[idx]
    return np.take_along_axis(x, idx, axis=axis)


def put_along(ct, like, idx, axis=-1):
    """Transpose of take_along: ct added back where each element came from (an index taken
    twice gets both cotangents)."""
    out = np.zeros(np.shape(like), dtype=np.result_type(ct))
    if axis is None:
        flat = np.ravel(out).copy()
        np.add.at(flat, idx, ct)
        return np.reshape(flat, np.shape(like))
    ct = np.asarray(ct)
    nd = out.ndim
    axis = axis % nd
    where = []
    for d in range(nd):       # the position along each other axis (0 where x broadcast)
        if d == axis:
            where.append(np.broadcast_to(idx, ct.shape))
            continue
        n = ct.shape[d] if out.shape[d] == ct.shape[d] else 1
        where.append(np.arange(n).reshape([-1 if e == d else 1 for e in range(nd)]))
    np.add.at(out, tuple(where), ct)
    return out


def cumprod_vjp(ct, x, axis=None):
    """Cotangent of x in np.cumprod(x, axis), exact also where x has zeros."""
    x = np.asarray(x)
    if axis is None:
        return np.reshape(cumprod_vjp(np.ravel(ct), np.ravel(x), 0), x.shape)
    axis = axis % x.ndim
    xm = np.moveaxis(x, axis, -1)
    cm = np.moveaxis(np.asarray(ct), axis, -1)
    n = xm.shape[-1]
    out = np.zeros(np.broadcast_shapes(xm.shape, cm.shape), dtype=np.result_type(xm, cm))
    for i in range(n):   # d y_j / d x_i = prod_{l<=j, l!=i} x_l  for j >= i
        left = np.prod(xm[..., :i], axis=-1, keepdims=True)
        right = np.cumprod(xm[..., i + 1:], axis=-1)
        terms = np.concatenate([np.ones_like(left), right], axis=-1) * left
        out[..., i] = np.sum(cm[..., i:] * terms, axis=-1)
    return np.moveaxis(out, -1, axis)


def cumprod_jvp(t, x, axis=None):
    """Tangent of np.cumprod(x, axis) along t (the transpose of cumprod_vjp)."""
    x = np.asarray(x)
    if axis is None:
        return cumprod_jvp(np.ravel(t), np.ravel(x), 0)
    axis = axis % x.ndim
    xm = np.moveaxis(x, axis, -1)
    tm = np.moveaxis(np.asarray(t), axis, -1)
    n = xm.shape[-1]
    out = np.zeros(np.broadcast_shapes(xm.shape, tm.shape), dtype=np.result_type(xm, tm))
    for i in range(n):
        left = np.prod(xm[..., :i], axis=-1, keepdims=True)
        right = np.cumprod(xm[..., i + 1:], axis=-1)
        terms = np.concatenate([np.ones_like(left), right], axis=-1) * left
        out[..., i:] += tm[..., i:i + 1] * terms
    return np.moveaxis(out, -1, axis)


def kron_vjp_left(ct, a, b):
    """Cotangent of a in np.kron(a, b)."""
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    inter = []
    for i in range(nd):
        inter += [sa[i], sb[i]]
    c = np.reshape(ct, inter)
    bb = np.reshape(b, sb)
    bexp = np.reshape(bb, sum([[1, n] for n in sb], []))
    return np.reshape(np.sum(c * bexp, axis=tuple(range(1, 2 * nd, 2))), a.shape)


def kron_vjp_right(ct, a, b):
    """Cotangent of b in np.kron(a, b)."""
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    inter = []
    for i in range(nd):
        inter += [sa[i], sb[i]]
    c = np.reshape(ct, inter)
    aexp = np.reshape(a, sum([[n, 1] for n in sa], []))
    return np.reshape(np.sum(c * aexp, axis=tuple(range(0, 2 * nd, 2))), b.shape)


def linspace_weights(num, endpoint, like):
    """t in linspace(a, b) = a * (1 - t) + b * t, shaped to broadcast against a and b."""
    t = np.linspace(0.0, 1.0, int(num), endpoint=bool(endpoint))
    return np.reshape(t, (int(num),) + (1,) * np.ndim(like)).astype(
        np.result_type(like, np.float32) if np.issubdtype(np.result_type(like), np.inexact)
        else np.float64)


def linspace_part(t, num, endpoint, which, like):
    """Contribution of one endpoint (which=0: start, 1: stop) to linspace, given its value t."""
    w = linspace_weights(num, endpoint, like)
    w = 1 - w if which == 0 else w
    return w * np.asarray(t)


def linspace_part_vjp(ct, num, endpoint, which, like):
    """Transpose of linspace_part: sum the weighted cotangent over the sample axis."""
    w = linspace_weights(num, endpoint, like)
    w = 1 - w if which == 0 else w
    out = np.sum(w * ct, axis=0)
    return np.reshape(out, np.shape(like)) if np.shape(out) != np.shape(like) else out


def tensordot_vjp(ct, a, b, axes, which):
    """Cotangent of a (which=0) or b (which=1) in np.tensordot(a, b, axes)."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        ax_a = list(range(a_nd - axes, a_nd))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        ax_a = [i % a_nd for i in ax_a]
        ax_b = [i % b_nd for i in ax_b]
    free_a = [i for i in range(a_nd) if i not in ax_a]
    free_b = [i for i in range(b_nd) if i not in ax_b]
    na = len(free_a)
    ct = np.asarray(ct)
    if which == 0:
        # ct axes: free_a..., free_b...; contract with b over free_b
        out = np.tensordot(ct, b, (list(range(na, ct.ndim)), free_b))   # free_a..., ax_b...
        order = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
        # out's trailing axes follow b's axes in ascending order: map back to a's axes
        return np.transpose(out, np.argsort(order))
    out = np.tensordot(a, ct, (free_a, list(range(na))))               # ax_a..., free_b...
    order = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
    return np.transpose(out, np.argsort(order))


def diff_vjp(ct, n=1, axis=-1, like=None):
    """Cotangent of x in np.diff(x, n, axis): n times, pad a zero at both ends and take
    minus the difference (the transpose of one difference). `like` is x (read for its shape):
    where x has n entries or fewer along the axis, np.diff's result is empty and the
    cotangent is zeros of x's shape."""
    ct = np.asarray(ct)
    if like is not None and np.shape(like)[axis] <= n:
        shape = list(ct.shape)
        shape[axis] = np.shape(like)[axis]
        return np.zeros(shape, ct.dtype)
    for _ in range(n):
        widths = [(0, 0)] * ct.ndim
        widths[axis] = (1, 1)
        ct = -np.diff(np.pad(ct, widths), axis=axis)
    return ct


def select_part(t, condlist, k=None):
    """t where np.select(condlist, ...) takes choice k (k None: the default), else 0."""
    taken = False
    for i, c in enumerate(condlist):
        c = np.asarray(c, dtype=bool)
        if i == k:
            return np.where(c & ~np.asarray(taken), t, np.zeros((), np.result_type(t)))
        taken = taken | c
    return np.where(taken, np.zeros((), np.result_type(t)), t)


def gradient_array(f, *varargs, axis=None, edge_order=1):
    """np.gradient when it returns one array (a 1-D f, or one axis)."""
    out = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    if isinstance(out, (list, tuple)):
        raise NotImplementedError(
            "np.gradient of an N-D array returns one array per axis; inside transformed code "
            "call it once per axis: np.gradient(f, axis=k)")
    return out


def gradient_apply(t, f, varargs, axis=None, edge_order=1):
    """np.gradient(t, *varargs, axis=axis, edge_order=edge_order) (f: for its shape)."""
    return gradient_array(t, *varargs, axis=axis, edge_order=edge_order)


def gradient_vjp(ct, f, varargs, axis=None, edge_order=1):
    """Transpose of np.gradient along its axis: the dense n x n difference matrix J
    (J[i, j] = d out_i / d f_j, from np.gradient of the identity) applied transposed."""
    nd = np.ndim(f)
    ax = 0 if axis is None else (axis[0] if isinstance(axis, (tuple, list)) else axis) % nd
    n = np.shape(f)[ax]
    spacing = list(varargs)
    if len(spacing) > 1:
        spacing = [spacing[ax]]
    J = np.gradient(np.eye(n), *spacing, axis=0, edge_order=edge_order)
    ct = np.moveaxis(np.asarray(ct), ax, -1)
    return np.moveaxis(ct @ J, -1, ax).astype(np.result_type(ct, np.float64), copy=False)


def einsum_scatter(t, x, spec):
    """Cotangent of an np.einsum operand whose subscripts repeat an index ('ii', 'iij'): spec
    'src->dst' names t's axes (src) and x's (dst); zeros of x's shape with t written on the
    diagonal the repeated letters span, copied along the letters t lacks (summed inside the
    operand alone)."""
    src, dst = spec.split("->")
    shape = np.shape(x)
    size = dict(zip(dst, shape))
    uniq = "".join(dict.fromkeys(dst))
    t = np.asarray(t)
    # t's axes in uniq's order, a length-1 axis for each letter t lacks, then broadcast
    order = [src.index(c) for c in uniq if c in src]
    t = np.transpose(t, order) if order else t
    t = np.reshape(t, tuple(size[c] if c in src else 1 for c in uniq))
    out = np.zeros(shape, dtype=np.result_type(t))
    view = np.einsum(f"{dst}->{uniq}", out)     # a writable view of that diagonal
    view[...] = t
    return out


def vander_slope(x, N=None, increasing=False, order=1):
    """The order-th derivative of each entry of np.vander(x, N, increasing) in its x: column
    x ** p becomes p (p - 1) ... (p - order + 1) x ** (p - order), 0 where p < order."""
    x = np.asarray(x)
    n = len(x) if N is None else int(N)
    p = np.arange(n) if increasing else np.arange(n)[::-1]
    coef = np.ones(n)
    for j in range(int(order)):
        coef = coef * (p - j)
    dtype = np.result_type(x, 1.0)
    return (coef * np.asarray(x, dtype)[:, None] ** np.maximum(p - order, 0)).astype(dtype)
