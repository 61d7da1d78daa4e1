"""Small array helpers named in primitive rules (transpose inverse, safe log, cumsum adjoint)."""
import numpy as np


def transpose_back(g, axes):
    """Undo np.transpose(x, axes) on the cotangent g."""
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, tuple(int(i) for i in np.argsort(axes)))


def log_base(x):
    """log(x) with 0 where x == 0: d(x**y)/dy is 0 at x == 0 (as in JAX)."""
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0, np.log(np.where(x == 0, 1, x)))


def cumsum_vjp(ct, x, axis=None):
    """Cotangent of x in np.cumsum(x, axis): a reversed cumulative sum."""
    if axis is None:
        rev = np.cumsum(np.ravel(ct)[::-1])[::-1]
        return np.reshape(rev, np.shape(x))
    return np.flip(np.cumsum(np.flip(ct, axis), axis=axis), axis)


def check_norm_ord(x, ord):
    """Rules for np.linalg.norm cover the 2-norm/Frobenius norm only."""
    if ord not in (None, 2, "fro") or (ord == 2 and np.ndim(x) > 1):
        raise NotImplementedError(
            f"grad of np.linalg.norm supports ord=None (2-norm / Frobenius) only, got ord={ord!r}")
    return x


def expand_last(x):
    return np.expand_dims(x, -1)


def tile_vjp(ct, x, reps):
    """Cotangent of x in np.tile(x, reps): sum the tiles back onto x."""
    shape = np.shape(x)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    nd = max(len(shape), len(reps))
    shape_p = (1,) * (nd - len(shape)) + tuple(shape)
    reps_p = (1,) * (nd - len(reps)) + reps
    split = []
    for r, n in zip(reps_p, shape_p):
        split += [r, n]
    out = np.reshape(ct, split).sum(axis=tuple(range(0, 2 * nd, 2)))
    return np.reshape(out, shape)


def diagonal_vjp(ct, x, offset=0, axis1=0, axis2=1):
    """Cotangent of x in np.diagonal(x, offset, axis1, axis2)."""
    out = np.zeros(np.shape(x), dtype=np.result_type(ct))
    view = np.diagonal(out, offset, axis1, axis2)
    view.setflags(write=True)
    view[...] = ct
    return out


def getitem(x, index):
    return x[index]


def tuple_concat(a, b):
    """`(n,) + x.shape`: two shapes (or other tuples) joined."""
    return tuple(a) + tuple(b)


def attr_shape(x):
    return np.shape(x)


def attr_ndim(x):
    return np.ndim(x)


def attr_size(x):
    return np.size(x)


def attr_dtype(x):
    return np.result_type(x)


def numpy_scalar(x):
    """A Python number as NumPy's scalar of its type (np.exp(0.5) is an np.float64, strong in
    NumPy 2 promotion: np.exp(0.5) * v32 is float64); arrays and NumPy scalars as they are."""
    return np.asarray(x)[()] if isinstance(x, (bool, int, float, complex)) else x


def attr_c_contiguous(x):
    """x.flags.c_contiguous (a number: True): whether a reshape of x is a view of it."""
    return bool(x.flags.c_contiguous) if isinstance(x, np.ndarray) else True


def generator_draw(rng, method, args, kwnames):
    """rng.method(*args) on a np.random.Generator (its state advances); the last len(kwnames)
    arguments are passed by keyword."""
    cut = len(args) - len(kwnames)
    a, kw = args[:cut], dict(zip(kwnames, args[cut:]))
    if not isinstance(rng, (np.random.Generator, np.random.RandomState)):
        raise TypeError(f".{method}(...) is called on a {type(rng).__name__}, not a "
                        "np.random.Generator")
    return getattr(rng, method)(*a, **kw)


def legacy_draw(rs, method, args, kwnames):
    """rs.method(*args) on a np.random.RandomState made in the function (a row of its own:
    jit compiles it on Numba's generator, not as a Generator method)."""
    return generator_draw(rs, method, args, kwnames)
