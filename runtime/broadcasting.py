"""Broadcasting helpers called by generated derivative code.

`unbroadcast` and `broadcast_like` are each other's transpose: reverse mode sums a cotangent
back to an argument's shape; forward mode broadcasts a tangent up to the result's shape.
"""
import numpy as np


def unbroadcast(g, x):
    """Sum g over the axes along which x was broadcast, so the result has x's shape/dtype."""
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    if not gshape:
        # an adjoint still holding its scalar zero (no path reached it): zeros of x's shape
        return np.broadcast_to(g, shape) if np.size(x) != 1 else np.reshape(g, shape)
    extra = len(gshape) - len(shape)
    axes = tuple(range(extra)) + tuple(
        i + extra for i, n in enumerate(shape) if n == 1 and gshape[i + extra] != 1)
    out = np.sum(g, axis=axes) if axes else g
    return np.reshape(out, shape)


def broadcast_like(t, like):
    """Broadcast t to the shape of `like` (a no-op when the shapes already agree)."""
    shape = np.shape(like)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape)


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def sum_grad(ct, x, axis=None, keepdims=False):
    """Broadcast the cotangent of a reduction over `axis` back to x's shape."""
    shape = np.shape(x)
    if not keepdims:
        for a in _norm_axes(axis, len(shape)):
            ct = np.expand_dims(ct, a)
    return np.broadcast_to(ct, shape)


def reduced_count(x, axis=None):
    """How many elements of x each reduction output combines."""
    shape = np.shape(x)
    n = 1
    for a in _norm_axes(axis, len(shape)):
        n *= shape[a]
    return n


def extremum_mask(x, ans, axis=None, keepdims=False):
    """Weights that share a max/min's cotangent equally among the tied maximal entries."""
    hit = np.asarray(x) == sum_grad(ans, x, axis, keepdims)
    count = np.sum(hit, axis=_norm_axes(axis, np.ndim(x)), keepdims=True)
    return (hit / count).astype(np.result_type(x, ans))


def select_weight(x, y):
    """d maximum(x, y)/dx: 1 where x > y, 1/2 on ties, 0 elsewhere (dtype of the result)."""
    dtype = np.result_type(x, y)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.float64
    return np.where(np.greater(x, y), dtype.type(1), np.where(np.equal(x, y), dtype.type(0.5), dtype.type(0)))


def clip_mask(x, lo=None, hi=None):
    """1 where lo <= x <= hi (the clip passes x through), else 0; in x's dtype, of the shape
    x and the bounds broadcast to."""
    x = np.asarray(x)
    inside = np.ones(x.shape, dtype=bool)
    if lo is not None:
        inside = inside & (x >= lo)
    if hi is not None:
        inside = inside & (x <= hi)
    dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
    return inside.astype(dtype)


def cast_like(t, x):
    """Cast t to x's dtype (adjoints and tangents keep their primal's dtype)."""
    dtype = np.result_type(x)
    if np.result_type(t) == dtype:
        return t
    t = np.asarray(t)
    if t.dtype.kind == "c" and dtype.kind != "c":
        t = t.real          # a real value's cotangent: the real part (NumPy would warn)
    return t.astype(dtype)


def grad_like(g, x):
    """A gradient in its parameter's dtype when that is floating or complex (float32 in,
    float32 gradient out, as in JAX); a real parameter gets the real part."""
    dtype = np.result_type(x)
    if np.ndim(g) == 0 and np.ndim(x) and not isinstance(g, np.ndarray) and g == 0:
        # an adjoint still holding the 0.0 of its reset (the parameter's name rebound by a
        # loop before anything read it): zeros of the parameter's shape
        return np.zeros(np.shape(x), dtype if np.issubdtype(dtype, np.inexact) else
                        np.result_type(g, np.float64))
    if not np.issubdtype(dtype, np.inexact) or np.result_type(g) == dtype:
        return g
    if not np.issubdtype(dtype, np.complexfloating):
        g = np.real(g)
    return np.asarray(g).astype(dtype)


def astype(x, dtype):
    """x.astype(dtype) of an array; of a number, NumPy's scalar of that type (np.float32(0.0)
    is a scalar, which `s += x[i]` rebinds and widens, not a 0-d array that keeps float32)."""
    if isinstance(x, np.ndarray):
        return x.astype(dtype)
    a = np.asarray(x).astype(dtype)
    return a[()] if a.ndim == 0 else a


def mT(x):
    """Swap the last two axes (matrix transpose of a stack of matrices); vectors and scalars
    are returned as they are."""
    if np.ndim(x) < 2:
        return x
    return np.swapaxes(x, -1, -2)


def identity(x):
    return x


def stop_gradient(x):
    """Returns x; derivatives do not flow through it."""
    return x
