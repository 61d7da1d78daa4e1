"""Run-time helpers for batched (vmap) code. The batch axis is always axis 0.

Generated code calls these only where the batching transform could not decide something
when it generated the code (a per-example rank it did not know) or where a derivative
helper needs to know which of its arguments carry the batch axis.
"""
import numpy as np

from transpile_runtime.broadcasting import _norm_axes, unbroadcast
from transpile_runtime.adjoints import check_complex_output


def batch_broadcast(x, size):
    """Give an unbatched value a leading batch axis of `size` (a broadcast view, no copy)."""
    x = np.asarray(x)
    return np.broadcast_to(x, (size,) + x.shape)


def batch_axes(x):
    """All axes of a batched value except the batch axis: (1, 2, ..., ndim - 1)."""
    return tuple(range(1, np.ndim(x)))


def batch_align(x, like_ndim, like_batched):
    """Insert unit axes after the batch axis of x so that it broadcasts example by example
    against a value of rank like_ndim (NumPy aligns shapes from the right; the batch axis
    sits at 0)."""
    n = like_ndim - (1 if like_batched else 0)
    r = np.ndim(x) - 1
    if r >= n:
        return x
    return np.reshape(x, np.shape(x)[:1] + (1,) * (n - r) + np.shape(x)[1:])


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
