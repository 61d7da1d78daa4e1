"""Run-time helpers of rows in transpile/primitives/numpy/ (ufunc_methods, histograms,
flat_indices, builtin_numbers): ufunc methods (outer, the running extremum of np.maximum.accumulate and its adjoints), np.diff's prepend/append,
np.histogram's two results, np.unravel_index's parts, builtin complex() and round()."""
import numpy as np


# ---- ufunc.outer: a reshaped to a.shape + (1,) * b.ndim (the ufunc's own row broadcasts) ------

def sinc_at_zero(k, x):
    """The k-th derivative of np.sinc at 0, shaped and typed like x (the value the derivative
    rules of sinc take at x == 0): (-1)**(k/2) pi**k / (k + 1) for even k, 0 for odd k."""
    c = 0.0 if k % 2 else (-1.0) ** (k // 2) * np.pi ** k / (k + 1)
    return np.full(np.shape(x), c, dtype=np.result_type(x, 1.0))


def outer_expand(a, b):
    a = np.asarray(a)
    return np.reshape(a, a.shape + (1,) * np.ndim(b))


# ---- np.maximum.accumulate / np.minimum.accumulate ------------------------------------------

def _index_along(x, axis):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return np.broadcast_to(np.arange(x.shape[axis]).reshape(shape), x.shape)


def running_source(x, ans, axis=0):
    """Where each running extremum came from: the last position (along axis) at or before it
    whose element equals the extremum so far (the element that set it)."""
    x, ans = np.asarray(x), np.asarray(ans)
    if x.ndim == 0:
        return np.zeros((), np.int64)
    axis = axis % x.ndim
    hit = np.where((x == ans) | (ans != ans) & (x != x), _index_along(x, axis), 0)
    return np.maximum.accumulate(hit, axis=axis).astype(np.int64)


def running_extremum_vjp(ct, x, ans, axis=0):
    """The cotangent of x: each cotangent of the running extremum added at its source."""
    ct, x = np.asarray(ct), np.asarray(x)
    src = running_source(x, ans, axis)
    out = np.zeros(x.shape, np.result_type(ct.dtype, x.dtype))
    if x.ndim == 0:
        return out + ct
    axis = axis % x.ndim
    ct_m, src_m, out_m = (np.moveaxis(a, axis, -1) for a in (ct, src, out))
    rows = src_m.reshape(-1, x.shape[axis])
    cts = ct_m.reshape(-1, x.shape[axis])
    acc = np.zeros_like(rows, dtype=out.dtype)
    for r in range(rows.shape[0]):
        np.add.at(acc[r], rows[r], cts[r])
    out_m[...] = acc.reshape(out_m.shape)
    return out


def running_extremum_jvp(t, x, ans, axis=0):
    """The tangent of the running extremum: x's tangent read at each source."""
    t = np.asarray(t)
    src = running_source(x, ans, axis)
    if t.ndim == 0:
        return t
    return np.take_along_axis(np.broadcast_to(t, np.shape(x)), src, axis=axis % t.ndim)


# ---- np.diff(x, n, axis, prepend=..., append=...) -------------------------------------------

def diff_extend(x, axis=-1, prepend=None, append=None):
    """x with prepend / append joined along axis (a scalar broadcast to one slice, as np.diff
    does): what np.diff(x, prepend=..., append=...) differences."""
    x = np.asarray(x)
    axis = axis % x.ndim

    def slab(v):
        v = np.asarray(v)
        if v.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            v = np.broadcast_to(v, tuple(shape))
        return v
    parts = ([slab(prepend)] if prepend is not None else []) + [x] + \
        ([slab(append)] if append is not None else [])
    return np.concatenate(parts, axis=axis) if len(parts) > 1 else x


def diff_extend_vjp(ct, x, axis=-1, prepend=None, append=None, which=0):
    """The cotangent of x (which=0), prepend (1) or append (2) from that of diff_extend
    (a scalar prepend / append: summed over its slice)."""
    ct, x = np.asarray(ct), np.asarray(x)
    axis = axis % x.ndim
    lo = 0 if prepend is None else (1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis])
    n = x.shape[axis]
    take = [slice(None)] * x.ndim
    if which == 0:
        take[axis] = slice(lo, lo + n)
        return ct[tuple(take)]
    if which == 1:
        take[axis] = slice(0, lo)
        part, like = ct[tuple(take)], prepend
    else:
        take[axis] = slice(lo + n, None)
        part, like = ct[tuple(take)], append
    return np.sum(part) if np.ndim(like) == 0 else part


def diff_extend_jvp(t, x, axis=-1, prepend=None, append=None, which=0):
    """The tangent of diff_extend from the tangent of one of its parts (zeros elsewhere)."""
    x = np.asarray(x)
    z = [np.zeros_like(np.asarray(v, dtype=np.result_type(v, t))) if v is not None else None
         for v in (x, prepend, append)]
    z[which] = t
    return diff_extend(z[0], axis, z[1], z[2])


# ---- np.histogram -----------------------------------------------------------------------------

def histogram_counts(x, bins=10, range=None, density=None, weights=None):
    return np.histogram(x, bins, range, density, weights)[0]


def histogram_edges(x, bins=10, range=None, density=None, weights=None):
    return np.histogram(x, bins, range, density, weights)[1]


# ---- np.unravel_index: one index array per dimension -----------------------------------------

def unravel_part(indices, shape, order="C", k=0):
    return np.unravel_index(indices, shape, order)[k]


# ---- np.triu_indices / np.tril_indices: the row indices, then the column indices ------------

def triangle_part(n, k=0, m=None, upper=True, which=0):
    return (np.triu_indices if upper else np.tril_indices)(n, k, m)[which]


# ---- x.item(): the one element as a Python number ----------------------------------------------

def item(x):
    """x.item() of an array or NumPy scalar; a Python number is itself."""
    return x.item() if hasattr(x, "item") else x


# ---- builtins complex() and round() -----------------------------------------------------------

def complex_of(real=0.0, imag=0.0):
    """complex(a, b): a Python complex for Python or NumPy scalars, real + 1j * imag for
    arrays (vmap's batched scalars)."""
    if np.ndim(real) == 0 and np.ndim(imag) == 0:
        return complex(real, imag)
    return np.asarray(real) + 1j * np.asarray(imag)


def builtin_round(x, ndigits=None):
    """round(x) / round(x, n): Python's for scalars (an int for n None), NumPy's rounding for
    arrays (vmap's batched scalars)."""
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return round(x) if ndigits is None else round(x, ndigits)
    if ndigits is None:
        return np.rint(x).astype(np.int64)
    return np.round(x, ndigits)
