"""Adjoint helpers for primitives whose reverse rule is not a one-liner over NumPy.

Each helper is itself a primitive in the table (transpile/primitives/internal/adjoint_helpers.py), with
its own rules, so derivative code stays differentiable.
"""
import numpy as np

from .broadcasting import unbroadcast


def _as_matrix_left(x):
    return x[None, :] if np.ndim(x) == 1 else x


def matmul_vjp_left(ct, x, y):
    """Cotangent of x in matmul(x, y), given ct, the cotangent of the product."""
    x_nd, y_nd = np.ndim(x), np.ndim(y)
    if x_nd == 1 and y_nd == 1:
        return ct * y
    if y_nd == 1:
        return unbroadcast(np.expand_dims(ct, -1) * y, x)
    if x_nd == 1:
        ct2 = np.expand_dims(ct, -2)                       # (..., 1, n)
        out = np.matmul(ct2, np.swapaxes(y, -1, -2))       # (..., 1, k)
        return unbroadcast(out[..., 0, :], x)
    return unbroadcast(np.matmul(ct, np.swapaxes(y, -1, -2)), x)


def matmul_vjp_right(ct, x, y):
    """Cotangent of y in matmul(x, y), given ct, the cotangent of the product."""
    x_nd, y_nd = np.ndim(x), np.ndim(y)
    if x_nd == 1 and y_nd == 1:
        return ct * x
    if x_nd == 1:
        return unbroadcast(np.expand_dims(x, -1) * np.expand_dims(ct, -2), y)
    if y_nd == 1:
        out = np.matmul(np.swapaxes(x, -1, -2), np.expand_dims(ct, -1))
        return unbroadcast(out[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(x, -1, -2), ct), y)


def _dot_is_matmul(x, y):
    return np.ndim(x) <= 2 and np.ndim(y) <= 2


def dot_vjp_left(ct, x, y):
    """Cotangent of x in np.dot(x, y)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * y, x)
    if _dot_is_matmul(x, y):
        return matmul_vjp_left(ct, x, y)
    if np.ndim(y) == 1:           # N-d x with a vector: contracts x's last axis
        return np.expand_dims(ct, -1) * y
    # N-d dot: sum over last axis of x and second-to-last of y.
    y_free = [a for a in range(np.ndim(y)) if a != np.ndim(y) - 2]
    ct_axes = list(range(np.ndim(x) - 1, np.ndim(ct)))
    return np.tensordot(ct, y, axes=(ct_axes, y_free))


def dot_vjp_right(ct, x, y):
    """Cotangent of y in np.dot(x, y)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(ct * x, y)
    if _dot_is_matmul(x, y):
        return matmul_vjp_right(ct, x, y)
    nx = np.ndim(x) - 1
    if np.ndim(y) == 1:
        return np.tensordot(x, ct, axes=(list(range(nx)), list(range(nx))))
    out = np.tensordot(x, ct, axes=(list(range(nx)), list(range(nx))))  # (k, y_pre..., y_last)
    return np.moveaxis(out, 0, -2)


def getitem_vjp(ct, x, index):
    """Cotangent of x in x[index]: zeros of x's shape with ct added at index (repeats add up).
    A floating index is the placeholder of an example of a batch whose path never read x
    (vmap runs both sides of a batched branch, then selects): nothing is added. The cotangent
    of a float array is in its dtype (as JAX gives a float32 value a float32 cotangent: a
    float64 one would change the type of an adjoint accumulated in a loop)."""
    dtype = np.result_type(ct)
    xdt = np.result_type(x)
    if np.issubdtype(xdt, np.inexact) and np.can_cast(dtype, xdt, casting="same_kind"):
        dtype = xdt
    out = np.zeros(np.shape(x), dtype=dtype)
    if not _placeholder_index(index):
        np.add.at(out, index, ct)
    return out


def _placeholder_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, (float, np.floating)) or
               isinstance(i, np.ndarray) and i.dtype.kind == "f" for i in items)


def concat_vjp(ct, arrays, k, axis=0):
    """Cotangent of arrays[k] in np.concatenate(arrays, axis)."""
    sizes = [np.shape(a)[axis] for a in arrays]
    start = sum(sizes[:k])
    index = [slice(None)] * np.ndim(ct)
    index[axis] = slice(start, start + sizes[k])
    return ct[tuple(index)]


def concat_pad(part, arrays, k, axis=0):
    """Transpose of concat_vjp: zeros shaped like the concatenation, with `part` at slot k."""
    sizes = [np.shape(a)[axis] for a in arrays]
    shape = list(np.shape(part))
    shape[axis] = sum(sizes)
    out = np.zeros(shape, dtype=np.result_type(part))
    start = sum(sizes[:k])
    index = [slice(None)] * len(shape)
    index[axis] = slice(start, start + sizes[k])
    out[tuple(index)] = part
    return out


def take_axis(x, k, axis=0):
    """x[..., k, ...] along `axis` (the cotangent of one input of np.stack)."""
    return np.take(x, k, axis=axis)


def put_axis(part, like, k, axis=0):
    """Transpose of take_axis: zeros shaped like `like` with `part` at position k of `axis`."""
    out = np.zeros(np.shape(like), dtype=np.result_type(part))
    index = [slice(None)] * np.ndim(like)
    index[axis] = k
    out[tuple(index)] = part
    return out


def transpose_inverse(axes):
    """The axes that undo np.transpose(x, axes)."""
    return tuple(int(i) for i in np.argsort(axes))


def check_complex_output(dtype, fname, holomorphic):
    """As JAX: grad of a complex output needs holomorphic=True, which needs one."""
    if np.issubdtype(dtype, np.complexfloating) and not holomorphic:
        raise TypeError(
            f"grad requires {fname} to return a real number, but it returned dtype {dtype}. "
            "For the complex derivative of a holomorphic function pass holomorphic=True "
            "(as in JAX); for a real loss of complex values take np.real or np.abs first.")
    if holomorphic and not np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"grad(..., holomorphic=True) requires {fname} to return a complex "
                        f"value, got dtype {dtype}")


def check_scalar_output(out, fname, holomorphic=False):
    """grad needs a scalar output; anything else is an error naming the function."""
    shape = np.shape(out)
    if shape != () and int(np.prod(shape)) != 1:
        raise TypeError(
            f"grad requires {fname} to return a scalar, but it returned an array of shape {shape}. "
            "Use jacrev/jacobian for vector outputs, or reduce (e.g. np.sum) first.")
    dtype = np.result_type(out)
    if not np.issubdtype(dtype, np.inexact):
        raise TypeError(f"grad requires {fname} to return a float, got dtype {dtype}")
    check_complex_output(dtype, fname, holomorphic)
    return np.ones_like(out)
