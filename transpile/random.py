"""Functional pseudo-random numbers, in the style of ``jax.random``.

A key is a plain NumPy ``uint32`` array of shape ``(2,)``. Functions never mutate a key: the
same key always gives the same numbers, and fresh randomness comes from ``split``/``fold_in``.

The bits come from the counter-based Threefry-2x32 generator (transpile_runtime/prng.py):
each use of a key derives a stream from it and a purpose tag (sampling, splitting, folding),
so a parent's samples are independent of its children's. The same Numba functions run here
and in the code ``jit`` compiles from a call of these functions, so a key gives the same
numbers inside and outside ``jit``.
"""
import operator

import numpy as np

from transpile_runtime import prng

__all__ = ["key", "PRNGKey", "split", "fold_in", "normal", "uniform", "randint",
           "permutation", "bernoulli", "choice"]

_MASK64 = 0xFFFFFFFFFFFFFFFF


# ---------------------------------------------------------------- keys

def key(seed):
    """A key from an integer seed (taken modulo 2**64): ``[high 32 bits, low 32 bits]``."""
    seed = _as_int(seed, "key", "seed") & _MASK64
    return prng.draw_key(seed)


PRNGKey = key


def split(key, num=2):
    """``num`` new keys, shape ``(num, 2)``; unpack with ``key, subkey = split(key)``."""
    _check_key(key, "split")
    num = _as_int(num, "split", "num")
    if num < 0:
        raise ValueError(f"split: num must be >= 0, got {num}")
    return prng.draw_split(key, num)


def fold_in(key, data):
    """A new key that mixes the integer ``data`` (modulo 2**64) into ``key``."""
    _check_key(key, "fold_in")
    data = _as_int(data, "fold_in", "data") & _MASK64
    return prng.draw_fold_in(key, data)


# ---------------------------------------------------------------- samplers

def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples of the given shape and float dtype."""
    _check_key(key, "normal")
    shape = _check_shape(shape, "normal")
    dtype = _float_dtype(dtype, "normal")
    return prng.draw_normal(key, shape, dtype)


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform samples in ``[minval, maxval)`` of the given shape and float dtype."""
    _check_key(key, "uniform")
    shape = _check_shape(shape, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    lo = np.asarray(minval, dtype=dtype)
    hi = np.asarray(maxval, dtype=dtype)
    if np.any(~(lo < hi)):
        raise ValueError(f"uniform: need minval < maxval, got minval={minval!r}, maxval={maxval!r}")
    try:
        fits = np.broadcast_shapes(shape, lo.shape, hi.shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"uniform: minval/maxval of shapes {lo.shape}, {hi.shape} "
                         f"do not broadcast to shape {shape}")
    return prng.draw_uniform(key, shape, dtype, lo, hi)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform in ``[minval, maxval)`` of the given shape and integer dtype."""
    _check_key(key, "randint")
    shape = _check_shape(shape, "randint")
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"randint: dtype must be an integer dtype, got {dtype}")
    if np.any(~(np.asarray(minval) < np.asarray(maxval))):
        raise ValueError(f"randint: need minval < maxval, got minval={minval!r}, maxval={maxval!r}")
    info = np.iinfo(dtype)
    if np.any(np.asarray(minval) < info.min) or np.any(np.asarray(maxval) - 1 > info.max):
        raise ValueError(f"randint: bounds [{minval!r}, {maxval!r}) do not fit dtype {dtype}")
    if np.ndim(minval) or np.ndim(maxval):
        raise ValueError("randint: minval and maxval must be scalars")
    return prng.draw_randint(key, shape, minval, maxval, dtype)


def permutation(key, x, axis=0):
    """A random permutation of ``range(x)`` (int ``x``) or of array ``x`` along ``axis``."""
    _check_key(key, "permutation")
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise ValueError(f"permutation: n must be >= 0, got {x}")
        return prng.draw_permutation(key, int(x))
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("permutation: x must be an int or an array with at least one axis, "
                         f"got a 0-d array {x!r}")
    return prng.draw_permutation(key, x, axis)


def bernoulli(key, p=0.5, shape=None):
    """Boolean samples that are True with probability ``p``; shape defaults to ``np.shape(p)``."""
    _check_key(key, "bernoulli")
    p = np.asarray(p)
    if not (np.issubdtype(p.dtype, np.floating) or np.issubdtype(p.dtype, np.integer)):
        raise TypeError(f"bernoulli: p must be a number or a numeric array, got dtype {p.dtype}")
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("bernoulli: p must lie in [0, 1]")
    shape = p.shape if shape is None else _check_shape(shape, "bernoulli")
    try:
        np.broadcast_shapes(p.shape, shape)
    except ValueError:
        raise ValueError(f"bernoulli: p of shape {p.shape} does not broadcast to shape {shape}") from None
    return prng.draw_bernoulli(key, p, shape)


def choice(key, a, shape=(), replace=True, p=None):
    """Samples from ``range(a)`` (int ``a``) or from the entries of array ``a`` along axis 0."""
    _check_key(key, "choice")
    shape = _check_shape(shape, "choice")
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        n = int(a)
    else:
        a = np.asarray(a)
        if a.ndim == 0:
            raise ValueError("choice: a must be an int or an array with at least one axis")
        n = a.shape[0]
    if n <= 0 and int(np.prod(shape)) > 0:
        raise ValueError(f"choice: cannot draw {shape} samples from an empty population")
    if not replace and int(np.prod(shape)) > n:
        raise ValueError(f"choice: cannot draw {int(np.prod(shape))} samples without replacement "
                         f"from a population of {n}")
    if p is not None:
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (n,):
            raise ValueError(f"choice: p must have shape ({n},), got {p.shape}")
        if np.any(p < 0) or not np.isclose(p.sum(), 1.0):
            raise ValueError("choice: p must be non-negative and sum to 1")
    return prng.draw_choice(key, a, shape, replace, p)


# ---------------------------------------------------------------- helpers

def _check_key(k, fn):
    """Validate a key; return it as one Python int (64 bits)."""
    if not isinstance(k, np.ndarray):
        hint = " (make one with transpile.random.key(seed))" if isinstance(k, (int, np.integer)) else ""
        raise TypeError(f"{fn}: expected a PRNG key (uint32 array of shape (2,)), "
                        f"got {type(k).__name__}{hint}")
    if k.dtype != np.uint32:
        raise TypeError(f"{fn}: expected a PRNG key of dtype uint32, got dtype {k.dtype}")
    if k.shape != (2,):
        extra = "; this looks like a batch of keys from split, index one (keys[0])" \
            if k.ndim == 2 and k.shape[1] == 2 else ""
        raise ValueError(f"{fn}: expected a PRNG key of shape (2,), got shape {k.shape}{extra}")
    return k


def _as_int(value, fn, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
            return int(value)
        raise TypeError(f"{fn}: {name} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


def _check_shape(shape, fn):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fn}: shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"{fn}: shape must have non-negative sizes, got {shape}")
    return shape


def _float_dtype(dtype, fn):
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fn}: dtype must be a floating dtype, got {dtype!r}") from None
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"{fn}: dtype must be a floating dtype (float16/32/64), got {dtype}")
    return dtype
