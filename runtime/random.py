"""transpile.random's functions (transpile/random.py re-exports them): their argument checks,
then the Threefry kernels of prng.py. They live here, below transpile/, because NumPy code
generated from a call of transpile.random inside a transformed function calls them too
(rt.random.normal(key, (3,))), and Numba code calls the same kernels: a key gives the same
numbers in every mode.

Each function has a `shapes` twin (SHAPES[fn]) for transpile to evaluate on stand-in values
while it generates code: the checks that do not look at values, and a result of the right
shape and dtype. The checks of values (minval < maxval, p sums to 1) run when the call does.
"""
import operator

import numpy as np


__all__ = ["key", "PRNGKey", "split", "fold_in", "normal", "uniform", "randint",
           "permutation", "bernoulli", "choice"]

_MASK64 = 0xFFFFFFFFFFFFFFFF


# ---------------------------------------------------------------- keys

def key(seed):
    """A key from an integer seed (taken modulo 2**64): ``[high 32 bits, low 32 bits]``."""
    return _prng().draw_key(_as_int(seed, "key", "seed"))


PRNGKey = key


def split(key, num=2):
    """``num`` new keys, shape ``(num, 2)``; unpack with ``key, subkey = split(key)``."""
    num = _split_args(key, num)
    if num < 0:
        raise ValueError(f"split: num must be >= 0, got {num}")
    return _prng().draw_split(key, num)


def fold_in(key, data):
    """A new key that mixes the integer ``data`` (modulo 2**64) into ``key``."""
    _check_key(key, "fold_in")
    return _prng().draw_fold_in(key, _as_int(data, "fold_in", "data"))


# ---------------------------------------------------------------- samplers

def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples of the given shape and float dtype."""
    return _prng().draw_normal(key, *_normal_args(key, shape, dtype))


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform samples in ``[minval, maxval)`` of the given shape and float dtype."""
    shape, dtype, lo, hi = _uniform_args(key, shape, dtype, minval, maxval)
    if np.any(~(lo < hi)):
        raise ValueError(f"uniform: need minval < maxval, got minval={minval!r}, maxval={maxval!r}")
    return _prng().draw_uniform(key, shape, dtype, lo, hi)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform in ``[minval, maxval)`` of the given shape and integer dtype."""
    shape, dtype = _randint_args(key, shape, minval, maxval, dtype)
    if np.any(~(np.asarray(minval) < np.asarray(maxval))):
        raise ValueError(f"randint: need minval < maxval, got minval={minval!r}, maxval={maxval!r}")
    return _prng().draw_randint(key, shape, minval, maxval, dtype, *int_range(dtype))


def permutation(key, x, axis=0):
    """A random permutation of ``range(x)`` (int ``x``) or of array ``x`` along ``axis``."""
    x = _permutation_args(key, x)
    if not isinstance(x, np.ndarray) and x < 0:
        raise ValueError(f"permutation: n must be >= 0, got {x}")
    return _prng().draw_permutation(key, x, axis)


def bernoulli(key, p=0.5, shape=None):
    """Boolean samples that are True with probability ``p``; shape defaults to ``np.shape(p)``."""
    p, shape = _bernoulli_args(key, p, shape)
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("bernoulli: p must lie in [0, 1]")
    return _prng().draw_bernoulli(key, p, shape)


def choice(key, a, shape=(), replace=True, p=None):
    """Samples from ``range(a)`` (int ``a``) or from the entries of array ``a`` along axis 0."""
    a, n, shape, p = _choice_args(key, a, shape, p)
    if n <= 0 and int(np.prod(shape)) > 0:
        raise ValueError(f"choice: cannot draw {shape} samples from an empty population")
    if not replace and int(np.prod(shape)) > n:
        raise ValueError(f"choice: cannot draw {int(np.prod(shape))} samples without replacement "
                         f"from a population of {n}")
    if p is not None and (np.any(p < 0) or not np.isclose(p.sum(), 1.0)):
        raise ValueError("choice: p must be non-negative and sum to 1")
    return _prng().draw_choice(key, a, shape, replace, p)


# ---------------------------------------------------------------- the checks that do not look at values

def _split_args(key, num):
    _check_key(key, "split")
    return _as_int(num, "split", "num")


def _normal_args(key, shape, dtype):
    _check_key(key, "normal")
    return _check_shape(shape, "normal"), _float_dtype(dtype, "normal")


def _uniform_args(key, shape, dtype, minval, maxval):
    _check_key(key, "uniform")
    shape = _check_shape(shape, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    lo = np.asarray(minval, dtype=dtype)
    hi = np.asarray(maxval, dtype=dtype)
    try:
        fits = np.broadcast_shapes(shape, lo.shape, hi.shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"uniform: minval/maxval of shapes {lo.shape}, {hi.shape} "
                         f"do not broadcast to shape {shape}")
    return shape, dtype, lo, hi


def _randint_args(key, shape, minval, maxval, dtype):
    _check_key(key, "randint")
    shape = _check_shape(shape, "randint")
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.integer):
        raise TypeError(f"randint: dtype must be an integer dtype, got {dtype}")
    if np.ndim(minval) or np.ndim(maxval):
        raise ValueError("randint: minval and maxval must be scalars")
    # (a check of values, but one the stand-in values (1) always pass: under jit it checks
    # the bounds known when generating code; the kernel checks those known at run time)
    info = np.iinfo(dtype)
    if np.any(np.asarray(minval) < info.min) or np.any(np.asarray(maxval) - 1 > info.max):
        raise ValueError(f"randint: bounds [{minval!r}, {maxval!r}) do not fit dtype {dtype}")
    return shape, dtype


def _permutation_args(key, x):
    _check_key(key, "permutation")
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("permutation: x must be an int or an array with at least one axis, "
                         f"got a 0-d array {x!r}")
    return x


def _bernoulli_args(key, p, shape):
    _check_key(key, "bernoulli")
    p = np.asarray(p)
    if not (np.issubdtype(p.dtype, np.floating) or np.issubdtype(p.dtype, np.integer)):
        raise TypeError(f"bernoulli: p must be a number or a numeric array, got dtype {p.dtype}")
    shape = p.shape if shape is None else _check_shape(shape, "bernoulli")
    try:
        np.broadcast_shapes(p.shape, shape)
    except ValueError:
        raise ValueError(f"bernoulli: p of shape {p.shape} does not broadcast to shape {shape}") from None
    return p, shape


def _choice_args(key, a, shape, p):
    _check_key(key, "choice")
    shape = _check_shape(shape, "choice")
    if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
        a = n = int(a)
    else:
        a = np.asarray(a)
        if a.ndim == 0:
            raise ValueError("choice: a must be an int or an array with at least one axis")
        n = a.shape[0]
    if p is not None:
        p = np.asarray(p, dtype=np.float64)
        if p.shape != (n,):
            raise ValueError(f"choice: p must have shape ({n},), got {p.shape}")
    return a, n, shape, p


# Results of the right shape and dtype from stand-in values (transpile evaluates these while
# it generates code; see the module's docstring).

def _key_shapes(seed):
    _as_int(seed, "key", "seed")
    return np.zeros(2, np.uint32)


def _split_shapes(key, num=2):
    return np.zeros((max(_split_args(key, num), 0), 2), np.uint32)


def _fold_in_shapes(key, data):
    _check_key(key, "fold_in")
    _as_int(data, "fold_in", "data")
    return np.zeros(2, np.uint32)


def _normal_shapes(key, shape=(), dtype=np.float64):
    return np.zeros(*_normal_args(key, shape, dtype))


def _uniform_shapes(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    shape, dtype, _, _ = _uniform_args(key, shape, dtype, minval, maxval)
    return np.zeros(shape, dtype)


def _randint_shapes(key, shape, minval, maxval, dtype=np.int64):
    return np.zeros(*_randint_args(key, shape, minval, maxval, dtype))


def _permutation_shapes(key, x, axis=0):
    x = _permutation_args(key, x)
    return np.zeros(max(x, 0), np.int64) if not isinstance(x, np.ndarray) else x.copy()


def _bernoulli_shapes(key, p=0.5, shape=None):
    return np.zeros(_bernoulli_args(key, p, shape)[1], np.bool_)


def _choice_shapes(key, a, shape=(), replace=True, p=None):
    a, n, shape, p = _choice_args(key, a, shape, p)
    idx = np.zeros(shape, np.int64)
    return idx if not isinstance(a, np.ndarray) else a[idx]


SHAPES = {key: _key_shapes, split: _split_shapes, fold_in: _fold_in_shapes,
          normal: _normal_shapes, uniform: _uniform_shapes, randint: _randint_shapes,
          permutation: _permutation_shapes, bernoulli: _bernoulli_shapes, choice: _choice_shapes}


# ---------------------------------------------------------------- helpers

def int_range(dtype):
    """The least and most values of an integer dtype, as int64s (what randint checks)."""
    info = np.iinfo(dtype)
    return max(int(info.min), -2**63), min(int(info.max), 2**63 - 1)


def _prng():
    """prng.py, imported at the first draw: it loads Numba, which `import transpile` does not
    (as jit imports Numba when it first compiles)."""
    from . import prng
    return prng


def _check_key(k, fn):
    """Validate a key (its type, dtype and shape)."""
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
