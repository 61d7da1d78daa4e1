"""Run-time helpers for batched (vmap) code. The batch axis is always axis 0.

Generated code calls these only where the batching transform could not decide something
when it generated the code (a per-example rank it did not know) or where a derivative
helper needs to know which of its arguments carry the batch axis.
"""
import numpy as np

from .broadcasting import _norm_axes, unbroadcast
from .adjoints import check_complex_output


def batch_broadcast(x, size):
    """Give an unbatched value a leading batch axis of `size` (a broadcast view, no copy)."""
    x = np.asarray(x)
    return np.broadcast_to(x, (size,) + x.shape)


def batch_axes(x, outer=0):
    """All axes of a batched value except the batch axis: (1, 2, ..., ndim - 1); `outer`: the
    value has that many more batch axes in front (a vmap around the vmap that asked)."""
    return tuple(range(1, np.ndim(x) - outer))


def batch_shift_axes(axis):
    """An axis argument computed at run time, moved past a new leading batch axis."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(a + 1 if a >= 0 else a for a in axis)
    return axis + 1 if axis >= 0 else axis


def batch_align(x, like_ndim, like_batched):
    """Insert unit axes after the batch axis of x so that it broadcasts example by example
    against a value of rank like_ndim (NumPy aligns shapes from the right; the batch axis
    sits at 0)."""
    n = like_ndim - (1 if like_batched else 0)
    r = np.ndim(x) - 1
    if r >= n:
        return x
    return np.reshape(x, np.shape(x)[:1] + (1,) * (n - r) + np.shape(x)[1:])


def batch_same_shape(x, other, where=None):
    """x, checked to have other's shape: the two sides of a branch on a batched value are
    selected example by example (np.where), which must not broadcast a side that changed
    length (one example appended to a list, another did not)."""
    if np.ndim(x) == np.ndim(other) and np.shape(x) != np.shape(other):
        raise ValueError(
            f"vmap: {where or 'an `if`'}: the two sides of an `if` on the data give a value of "
            f"shapes {np.shape(x)[1:]} and {np.shape(other)[1:]} per example; one batched "
            "array cannot hold them (as in JAX, a size computed from the data gives each "
            "example its own shape)")
    return x


def batch_squeeze(x):
    """np.squeeze of each example: drop unit axes, never the batch axis."""
    axes = tuple(i for i in range(1, np.ndim(x)) if np.shape(x)[i] == 1)
    return np.squeeze(x, axis=axes) if axes else x


def batch_parts(n):
    """Slots for the per-example results of a loop over the batch."""
    return [None] * int(n)


def batch_set(parts, i, value):
    parts[i] = value
    return parts


def batch_slots(n):
    """No rows yet: the batched result of a loop over the batch is allocated at its first row
    (rt.batch_store). The placeholder is a 0-d zero of the narrowest float type, so that a
    tangent or adjoint made from it (np.zeros_like) is a zero that promotes to any dtype."""
    return np.zeros((), dtype=np.float16)


def batch_store(parts, i, value, n, where=None):
    """The batched result `parts` with row i set to one example's value (allocated, with
    zeros, at the first row; written in place afterwards). A value of None is an example whose
    path left the name unassigned: its row stays zero. `where`: the user's file:line, for
    the error when examples give values of different shapes."""
    if value is None:
        return parts
    if isinstance(value, (tuple, list, str, dict)):
        raise TypeError(f"vmap: a loop over the batch produced a {type(value).__name__} per "
                        "example; only array results can be stacked into a batch")
    value = np.asarray(value)
    shape = (int(n),) + value.shape
    if parts is None or np.ndim(parts) == 0:
        parts = np.zeros(shape, dtype=value.dtype)
    elif np.shape(parts) != shape and value.ndim == 0 and not np.any(value):
        value = np.broadcast_to(value, np.shape(parts)[1:])   # a zero adjoint kept as a scalar
    elif np.shape(parts) != shape and np.ndim(parts) == 1 and not np.any(parts):
        # the rows so far were zero adjoints kept as scalars
        parts = np.zeros(shape, dtype=np.result_type(parts, value))
    elif np.shape(parts) != shape:
        at = f"{where}: " if where else ""
        raise ValueError(f"vmap: {at}the examples give values of different shapes "
                         f"({np.shape(parts)[1:]}, and {value.shape} for example {int(i)}); "
                         "one batched array cannot hold them (as in JAX, a boolean "
                         "mask or a size computed from the data gives each example its own "
                         "shape). Keep shapes fixed, e.g. np.where(mask, x, 0) instead of "
                         "x[mask]")
    elif not np.can_cast(value.dtype, parts.dtype, casting="safe"):
        parts = parts.astype(np.result_type(parts, value))
    parts[int(i)] = value
    return parts


def batch_stacked(parts, n):
    """The batched result of a loop over the batch (rt.batch_store's rows). Where no example
    bound the name (every one took the other path), a zero per example, so that reading row
    i on the way back (only under that path, so never used) still works."""
    if np.ndim(parts) == 0:
        return np.zeros(int(n), dtype=np.asarray(parts).dtype)
    return parts


def batch_row(x, i, like):
    """Row i of a batched cotangent, shaped like one example's value."""
    if x is None or np.ndim(x) == 0:
        return np.zeros(np.shape(like), dtype=np.result_type(like, 0.0))
    row = x[int(i)]
    if np.ndim(like) == 0 and np.ndim(row) > 0:      # the example's value was a scalar
        return np.sum(row)
    return row


def batch_row_vjp(g, i, x):
    """Transpose of batch_row: zeros shaped like the batched x with g (one example's
    cotangent, broadcast where batch_row summed a row into a scalar) in row i."""
    if x is None or np.ndim(x) == 0:
        return np.zeros((), dtype=np.result_type(g, 0.0))
    out = np.zeros(np.shape(x), dtype=np.result_type(x, g, 0.0))
    out[int(i)] = g
    return out


def batch_without_row(x, i):
    """A batched cotangent with row i zeroed (that row was overwritten)."""
    if x is None or np.ndim(x) == 0:
        return x
    out = np.array(x, copy=True)
    out[int(i)] = 0
    return out


def _example_shape(x, batched):
    return np.shape(x)[1:] if batched else np.shape(x)


def batch_unbroadcast(ct, x, ct_batched, x_batched):
    """rt.unbroadcast per example. The result is batched exactly when ct is."""
    shape = _example_shape(x, x_batched)
    if not ct_batched:
        return unbroadcast(ct, np.broadcast_to(np.zeros((), np.result_type(ct)), shape))
    gshape = np.shape(ct)[1:]
    if gshape == shape:
        return ct
    extra = len(gshape) - len(shape)
    axes = tuple(range(1, extra + 1)) + tuple(
        1 + i + extra for i, n in enumerate(shape) if n == 1 and gshape[i + extra] != 1)
    out = np.sum(ct, axis=axes) if axes else ct
    return np.reshape(out, np.shape(ct)[:1] + tuple(shape))


def batch_broadcast_like(t, like, t_batched, like_batched):
    """rt.broadcast_like per example (the result is batched)."""
    shape = _example_shape(like, like_batched)
    size = np.shape(t)[0] if t_batched else np.shape(like)[0]
    if t_batched:
        t = batch_align(t, len(shape), False)
    return np.broadcast_to(t, (size,) + tuple(shape))


def batch_sum_grad(ct, x, axis, keepdims, ct_batched, x_batched):
    """rt.sum_grad per example (the result is batched)."""
    shape = _example_shape(x, x_batched)
    size = np.shape(ct)[0] if ct_batched else np.shape(x)[0]
    off = 1 if ct_batched else 0
    if not keepdims:
        for a in _norm_axes(axis, len(shape)):
            ct = np.expand_dims(ct, a + off)
    if not ct_batched:
        ct = np.expand_dims(ct, 0)
    return np.broadcast_to(ct, (size,) + tuple(shape))


def batch_reduced_count(x, axis=None):
    """rt.reduced_count of one example of a batched x."""
    shape = np.shape(x)[1:]
    n = 1
    for a in _norm_axes(axis, len(shape)):
        n *= shape[a]
    return n


def batch_extremum_mask(x, ans, axis, keepdims, x_batched, ans_batched):
    """rt.extremum_mask per example (the result is batched)."""
    size = np.shape(x)[0] if x_batched else np.shape(ans)[0]
    if not x_batched:
        x = batch_broadcast(x, size)
    hit = np.asarray(x) == batch_sum_grad(ans, x, axis, keepdims, ans_batched, True)
    axes = tuple(a + 1 for a in _norm_axes(axis, np.ndim(x) - 1))
    count = np.sum(hit, axis=axes, keepdims=True)
    return (hit / count).astype(np.result_type(x, ans))


def batch_check_scalar_output(out, fname, holomorphic=False):
    """rt.check_scalar_output for each example of a batched output."""
    shape = np.shape(out)[1:]
    if shape != () and int(np.prod(shape)) != 1:
        raise TypeError(
            f"grad requires {fname} to return a scalar, but under vmap each example returned an "
            f"array of shape {shape}. Reduce (e.g. np.sum) inside the function.")
    dtype = np.result_type(out)
    if not np.issubdtype(dtype, np.inexact):
        raise TypeError(f"grad requires {fname} to return a float, got dtype {dtype}")
    check_complex_output(dtype, fname, holomorphic)
    return np.ones_like(out)


def batch_sum_grad_vjp(g, ct, axis, keepdims, ct_batched):
    """Transpose of batch_sum_grad: sum the batched g back to ct's shape."""
    axes = tuple(a + 1 for a in _norm_axes(axis, np.ndim(g) - 1))
    out = np.sum(g, axis=axes, keepdims=keepdims)
    return out if ct_batched else np.sum(out, axis=0)


# ---- Jacobians as one generated function (transpile/api/jacobian_composed.py) ----------------


def basis_like(x):
    """The standard basis for x's elements, each shaped like x: eye(n) as (n,) + x.shape."""
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
    return np.eye(x.size, dtype=dtype).reshape((x.size,) + x.shape)


def jac_columns(cols, x):
    """Forward mode: cols[i] = J e_i (shape (n,) + out shape) -> J with shape out + x.shape."""
    cols = np.asarray(cols)
    moved = np.moveaxis(cols, 0, -1)
    return moved.reshape(moved.shape[:-1] + np.shape(x))


def jac_columns_vjp(ct, cols):
    """Cotangent of jac_columns: back to the (n,) + out layout of cols."""
    cols_shape = np.shape(cols)
    ct = np.reshape(ct, cols_shape[1:] + (cols_shape[0],))
    return np.moveaxis(ct, -1, 0)


def jac_rows(rows, out):
    """Reverse mode: rows[i] = e_i^T J (shape (m,) + x shape) -> J with shape out.shape + x."""
    rows = np.asarray(rows)
    return rows.reshape(np.shape(out) + rows.shape[1:])


def jac_columns_to(h, like):
    """cols-layout (n,) + out  ->  like's shape (out + x.shape); the cotangent of
    jac_columns_vjp."""
    return np.reshape(np.moveaxis(np.asarray(h), 0, -1), np.shape(like))


def batch_basis_like(x):
    """basis_like of each example of a batched x: the same basis for all (unbatched)."""
    shape = np.shape(x)[1:]
    dtype = np.result_type(x) if np.issubdtype(np.result_type(x), np.inexact) else np.float64
    n = int(np.prod(shape, dtype=np.int64))
    return np.eye(n, dtype=dtype).reshape((n,) + shape)


def batch_jac_columns(cols, x, x_batched):
    """jac_columns of each example of batched cols ((B, n) + out)."""
    cols = np.asarray(cols)
    xshape = np.shape(x)[1:] if x_batched else np.shape(x)
    moved = np.moveaxis(cols, 1, -1)
    return moved.reshape(moved.shape[:-1] + xshape)


def batch_jac_rows(rows, out, out_batched):
    """jac_rows of each example of batched rows ((B, m) + x shape)."""
    rows = np.asarray(rows)
    oshape = np.shape(out)[1:] if out_batched else np.shape(out)
    return rows.reshape(rows.shape[:1] + oshape + rows.shape[2:])


def batch_jac_columns_vjp(g, cols):
    """Cotangent of batch_jac_columns: back to the (B, n) + out layout of cols."""
    shape = np.shape(cols)
    g = np.reshape(g, shape[:1] + shape[2:] + shape[1:2])
    return np.moveaxis(g, -1, 1)


def _basic(index):
    return all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis
               for i in index)


def batch_getitem_vjp(ct, x, index, ct_batched, x_batched):
    """rt.getitem_vjp of each example: zeros shaped like one example of x, with that example's
    cotangent added at `index` (the same index for every example)."""
    ct = np.asarray(ct)
    xshape = np.shape(x)[1:] if x_batched else np.shape(x)
    n = ct.shape[0] if ct_batched else np.shape(x)[0]
    if not ct_batched:
        ct = np.broadcast_to(ct, (n,) + ct.shape)
    index = index if isinstance(index, tuple) else (index,)
    out = np.zeros((n,) + tuple(xshape), dtype=np.result_type(ct))
    if _basic(index):
        at = (slice(None),) + index
        out[at] += batch_align(ct, out[at].ndim, True)
    else:
        for b in range(n):
            np.add.at(out[b], index, ct[b])
    return out


def batch_getitem_vjp_back(ct, index, ct_batched):
    """The cotangent of ct in batch_getitem_vjp: each example's ct[index] (summed over the
    batch when ct was not batched)."""
    index = index if isinstance(index, tuple) else (index,)
    g = np.asarray(ct)
    if _basic(index):
        rows = g[(slice(None),) + index]
    else:
        rows = np.stack([g[b][index] for b in range(g.shape[0])])
    return rows if ct_batched else np.sum(rows, axis=0)


def batch_not(x):
    """Python's `not` applied to each example of a batched value."""
    return np.logical_not(x)


def batch_any(going):
    """Is any example of a batched while loop still running?"""
    return bool(np.any(going))


def batch_store_tangent(i, primal, t, n):
    """The tangent of row i written by rt.batch_store: `t` in row i of zeros, or a zero when
    the example left the name unassigned (primal None)."""
    if primal is None:
        return np.zeros((), dtype=np.float16)
    return batch_store(None, i, t, n)
