"""NumPy functions without a row, written here in the NumPy that transformed code supports
(NumPy's own source uses try/except or C helpers): calls of them are read from this source, as
a library function's own source is (frontend/normalize/calls.py). Each gives NumPy's result,
dtype included, for the arguments it takes."""
import numpy as np


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """np.trapezoid: the trapezoidal rule along `axis`, over the sample points x (a vector
    along the axis, or an array of y's shape) or a constant spacing dx."""
    y = np.asarray(y)
    nd = y.ndim
    k = axis % nd
    upper = tuple(slice(1, None) if i == k else slice(None) for i in range(nd))
    lower = tuple(slice(None, -1) if i == k else slice(None) for i in range(nd))
    if x is None:
        d = dx
    else:
        x = np.asarray(x)
        if x.ndim == 1:
            d = np.diff(x)
            d = d.reshape(tuple(d.shape[0] if i == k else 1 for i in range(nd)))
        else:
            d = np.diff(x, axis=k)
    return np.sum(d * (y[upper] + y[lower]) / 2.0, axis=k)


def digitize(x, bins, right=False):
    """np.digitize: the index of the bin each x falls in (bins increasing or decreasing)."""
    x = np.asarray(x)
    bins = np.asarray(bins)
    side = "left" if right else "right"
    if bins.shape[0] < 2:
        return np.searchsorted(bins, x, side=side)
    rising = np.all(bins[1:] >= bins[:-1])
    if not rising and not np.all(bins[1:] <= bins[:-1]):
        raise ValueError("bins must be monotonically increasing or decreasing")
    if rising:
        return np.searchsorted(bins, x, side=side)
    return bins.shape[0] - np.searchsorted(bins[::-1], x, side=side)


def lexsort(keys, axis=-1):
    """np.lexsort of a sequence of vectors: the permutation sorting by the last key, ties
    broken by the one before, and so on (stable sorts, first key first)."""
    order = np.argsort(keys[0], kind="stable")
    for key in keys[1:]:
        order = order[np.argsort(key[order], kind="stable")]
    return order


def polyfit(x, y, deg):
    """np.polyfit(x, y, deg): least-squares coefficients, highest power first (NumPy's way:
    the Vandermonde columns scaled to unit norm, np.linalg.lstsq, the scale undone; the
    cut-off of small singular values is float64's, also for float32 data)."""
    x = np.asarray(x) + 0.0
    y = np.asarray(y) + 0.0
    eps = 2.220446049250313e-16
    lhs = x[:, None] ** np.arange(deg, -1, -1)
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    c = np.linalg.lstsq(lhs / scale, y, rcond=x.shape[0] * eps)[0]
    return (c.T / scale).T


def block(arrays):
    """np.block of a list of arrays (joined along the last axis) or of a list of such lists
    (each row joined along the last axis, the rows along the one before)."""
    if not isinstance(arrays, list):
        return np.asarray(arrays)
    if not isinstance(arrays[0], list):
        return np.concatenate([np.full((1,), a) if np.ndim(a) == 0 else np.atleast_1d(a)
                               for a in arrays], axis=-1)
    for row in arrays:
        for a in row:
            if isinstance(a, list):
                raise TypeError("np.block of more than two levels of lists is not supported "
                                "in transformed code")
    return np.concatenate([np.concatenate([_at_least_2d(a) for a in row], axis=-1)
                           for row in arrays], axis=-2)


def ix_(*args):
    """np.ix_ of integer vectors: each as a column along its own axis, so that
    `A[np.ix_(rows, cols)]` picks the cross product (boolean vectors: their true positions)."""
    n = len(args)
    out = ()
    for k, v in enumerate(args):
        v = np.asarray(v)
        if v.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if v.dtype == np.bool_:
            v = np.flatnonzero(v)
        out = out + (v.reshape((1,) * k + (v.shape[0],) + (1,) * (n - k - 1)),)
    return out


def diag_indices(n, ndim=2):
    """np.diag_indices: the index of the main diagonal of an n x n x ... array."""
    idx = np.arange(n)
    return (idx,) * ndim


def diag_indices_from(arr):
    """np.diag_indices_from of an array whose axes have one length."""
    arr = np.asarray(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    n = arr.shape[0]
    for k in range(1, arr.ndim):
        if arr.shape[k] != n:
            raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(n, arr.ndim)


def divmod(x1, x2):
    """np.divmod: the floor quotient and the remainder with the divisor's sign."""
    return np.floor_divide(x1, x2), np.mod(x1, x2)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """scipy.linalg.solve_triangular: the triangle of a that `lower` names (the other one is
    not read), its diagonal taken as ones with unit_diagonal, transposed for trans 1 / 'T'
    (conjugated too for 2 / 'C'), solved for b."""
    a = np.asarray(a)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(t.shape[0], dtype=t.dtype)
    if trans == 1 or trans == "T":
        t = t.T
    elif trans == 2 or trans == "C":
        t = np.conj(t).T
    return np.linalg.solve(t, b)


def _at_least_2d(a):
    return np.full((1, 1), a) if np.ndim(a) == 0 else np.atleast_2d(a)


SOURCES = {np.trapezoid: trapezoid, np.block: block, np.ix_: ix_, np.digitize: digitize,
           np.diag_indices: diag_indices, np.diag_indices_from: diag_indices_from,
           np.lexsort: lexsort, np.polyfit: polyfit, np.divmod: divmod}
if hasattr(np, "trapz"):        # (NumPy 2.0-2.3: the deprecated name)
    SOURCES[np.trapz] = trapezoid


# SciPy functions written here, by module and name (SciPy is not imported to look them up)
SCIPY_SOURCES = {("scipy.linalg._basic", "solve_triangular"): solve_triangular}


def ours(fn):
    """Our source for `fn` above (a NumPy or SciPy function), or None."""
    try:
        mine = SOURCES.get(fn)
    except TypeError:           # (an unhashable callable)
        return None
    if mine is None:
        mine = SCIPY_SOURCES.get((getattr(fn, "__module__", None),
                                  getattr(fn, "__qualname__", None)))
    return mine


def source_of(fn):
    """The Python function to read for a call of `fn` where it has no row: ours above, or the
    implementation behind NumPy's __array_function__ dispatch; None where there is none."""
    mine = ours(fn)
    if mine is not None:
        return mine
    impl = getattr(fn, "_implementation", None)
    return impl if callable(impl) and hasattr(impl, "__code__") else None


for _fn in set(SOURCES.values()):
    _fn.__module__ = "numpy"    # errors inside name the function the user called: np.trapezoid
solve_triangular.__module__ = "scipy.linalg"
