"""The random bits behind transpile.random: Threefry-2x32 with 20 rounds, the counter-based
generator of Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3"
(SC 2011), and the samplers built on it.

Both sides call these Numba functions: transpile.random (after checking its arguments in
Python) and the code jit lowers a call of transpile.random to. One implementation, so a key
gives the same numbers inside and outside jit, to the bit (log and cos included).

A key is uint32[2]. Every use of a key first derives a stream key from it and a purpose tag
(sampling, splitting, folding), then draws block i of that stream from counter
(low 32 bits of i, high bits of i + lane * 2**24); normals take two lanes per value.
Arithmetic is on uint64 holding 32-bit words (Numba promotes uint32 arithmetic to 64 bits).
"""
import numpy as np
from numba import njit

_M32 = np.uint64(0xFFFFFFFF)
_PARITY = np.uint64(0x1BD11BDA)          # the Threefish key-schedule constant
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_LANE = np.uint64(1 << 24)

SAMPLE, SPLIT, FOLD = 0x53414D50, 0x53504C49, 0x464F4C44     # 'SAMP', 'SPLI', 'FOLD'


@njit(cache=True)
def threefry2x32(k0, k1, c0, c1):
    """One Threefry-2x32-20 block: key words k0, k1 and counter words c0, c1 -> two words."""
    k0, k1 = np.uint64(k0) & _M32, np.uint64(k1) & _M32
    k2 = _PARITY ^ k0 ^ k1
    ks = (k0, k1, k2)
    x0 = (np.uint64(c0) + k0) & _M32
    x1 = (np.uint64(c1) + k1) & _M32
    for group in range(5):
        for j in range(4):
            r = np.uint64(_ROTATIONS[4 * (group % 2) + j])
            x0 = (x0 + x1) & _M32
            x1 = (((x1 << r) | (x1 >> (np.uint64(32) - r))) & _M32) ^ x0
        s = group + 1
        x0 = (x0 + ks[s % 3]) & _M32
        x1 = (x1 + ks[(s + 1) % 3] + np.uint64(s)) & _M32
    return x0, x1


@njit(cache=True)
def _stream(key, tag):
    return threefry2x32(key[0], key[1], np.uint64(tag), np.uint64(0))


@njit(cache=True)
def _block(s0, s1, i, lane):
    """Block i of lane `lane` of stream (s0, s1), as one 64-bit word."""
    i = np.uint64(i)
    a, b = threefry2x32(s0, s1, i & _M32, (i >> np.uint64(32)) + np.uint64(lane) * _LANE)
    return (a << np.uint64(32)) | b


@njit(cache=True)
def key_from_seed(seed):
    """The key of a seed taken modulo 2**64: [high 32 bits, low 32 bits]."""
    s = np.uint64(seed)
    out = np.empty(2, np.uint32)
    out[0] = np.uint32(s >> np.uint64(32))
    out[1] = np.uint32(s & _M32)
    return out


@njit(cache=True)
def split(key, num):
    """`num` child keys, uint32[num, 2]."""
    s0, s1 = _stream(key, SPLIT)
    out = np.empty((num, 2), np.uint32)
    for j in range(num):
        a, b = threefry2x32(s0, s1, np.uint64(j) & _M32, np.uint64(j) >> np.uint64(32))
        out[j, 0] = np.uint32(a)
        out[j, 1] = np.uint32(b)
    return out


@njit(cache=True)
def fold_in(key, data):
    """The key mixing `data` (taken modulo 2**64) into `key`."""
    s0, s1 = _stream(key, FOLD)
    d = np.uint64(data)
    a, b = threefry2x32(s0, s1, d & _M32, d >> np.uint64(32))
    out = np.empty(2, np.uint32)
    out[0] = np.uint32(a)
    out[1] = np.uint32(b)
    return out


@njit(cache=True)
def bits(key, n):
    """n uniform 64-bit words of the sampling stream."""
    s0, s1 = _stream(key, SAMPLE)
    out = np.empty(n, np.uint64)
    for i in range(n):
        out[i] = _block(s0, s1, i, 0)
    return out


@njit(cache=True)
def uniform64(key, shape, lo, hi):
    """float64 uniform in [lo, hi): 53 random bits per value, scaled, kept below hi."""
    out = np.empty(shape, np.float64)
    flat = out.reshape(out.size)
    w = bits(key, out.size)
    lo, hi = np.float64(lo), np.float64(hi)
    if not lo < hi:
        raise ValueError("uniform: need minval < maxval")
    top = np.nextafter(hi, lo)
    for i in range(w.size):
        u = np.float64(w[i] >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        flat[i] = min(lo + u * (hi - lo), top)
    return out


@njit(cache=True)
def uniform32(key, shape, lo, hi):
    """float32 uniform in [lo, hi): 24 random bits per value, in float32 arithmetic."""
    out = np.empty(shape, np.float32)
    flat = out.reshape(out.size)
    w = bits(key, out.size)
    lo, hi = np.float32(lo), np.float32(hi)
    if not lo < hi:
        raise ValueError("uniform: need minval < maxval")
    top = np.nextafter(hi, lo)
    for i in range(w.size):
        u = np.float32(w[i] >> np.uint64(40)) * np.float32(1.0 / 16777216.0)
        flat[i] = min(lo + u * (hi - lo), top)
    return out


@njit(cache=True)
def normal(key, shape):
    """float64 standard normals (Box-Muller on two 53-bit uniforms per value)."""
    out = np.empty(shape, np.float64)
    flat = out.reshape(out.size)
    s0, s1 = _stream(key, SAMPLE)
    for i in range(flat.size):
        u1 = (np.float64(_block(s0, s1, i, 1) >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = np.float64(_block(s0, s1, i, 2) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        flat[i] = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return out


@njit(cache=True)
def randint(key, shape, lo, hi, least, most):
    """int64 uniform in [lo, hi) (hi > lo): the high 64 bits of word * (hi - lo). [lo, hi)
    must lie in [least, most] (the range of the dtype the caller casts to)."""
    out = np.empty(shape, np.int64)
    flat = out.reshape(out.size)
    w = bits(key, out.size)
    lo = np.int64(lo)
    if not lo < np.int64(hi):
        raise ValueError("randint: need minval < maxval")
    if lo < least or np.int64(hi) - 1 > most:
        raise ValueError("randint: the bounds do not fit the dtype")
    span = np.uint64(np.int64(hi) - lo)
    s_lo, s_hi = span & _M32, span >> np.uint64(32)
    for i in range(w.size):
        x = w[i]
        x_lo, x_hi = x & _M32, x >> np.uint64(32)
        mid = x_hi * s_lo + ((x_lo * s_lo) >> np.uint64(32))
        mid2 = x_lo * s_hi + (mid & _M32)
        high = x_hi * s_hi + (mid >> np.uint64(32)) + (mid2 >> np.uint64(32))
        flat[i] = lo + np.int64(high)
    return out


@njit(cache=True)
def permutation(key, n):
    """A random permutation of range(n): the order of n random 64-bit words (stable on ties)."""
    if n < 0:
        raise ValueError("permutation: n must be >= 0")
    return np.argsort(bits(key, n), kind="mergesort")


@njit(cache=True)
def bernoulli(key, shape, p):
    """True with probability p (a float64 scalar)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError("bernoulli: p must lie in [0, 1]")
    out = np.empty(shape, np.bool_)
    flat = out.reshape(out.size)
    w = bits(key, out.size)
    for i in range(w.size):
        flat[i] = np.float64(w[i] >> np.uint64(11)) * (1.0 / 9007199254740992.0) < p
    return out


@njit(cache=True)
def choice(key, shape, n, replace, p):
    """Indices into range(n): with replacement, uniform (p empty) or by the weights p (the
    inverse of their running sum); without, the first of a permutation (p empty) or the
    smallest -log(u) / p (exponential races, weighted sampling without replacement)."""
    out = np.empty(shape, np.int64)
    flat = out.reshape(out.size)
    k = out.size
    if n <= 0 and k > 0:
        raise ValueError("choice: cannot draw samples from an empty population")
    if not replace and k > n:
        raise ValueError("choice: cannot draw more samples without replacement than the population has")
    if p.size and (np.any(p < 0) or not abs(np.sum(p) - 1.0) <= 1e-8 + 1e-5):
        raise ValueError("choice: p must be non-negative and sum to 1")
    if replace and p.size == 0:
        return randint(key, shape, 0, n, 0, n)
    w = bits(key, n if not replace else k)
    if replace:
        cdf = np.cumsum(p)
        for i in range(k):
            u = np.float64(w[i] >> np.uint64(11)) * (1.0 / 9007199254740992.0) * cdf[-1]
            flat[i] = min(np.searchsorted(cdf, u, side="right"), n - 1)
        return out
    if p.size == 0:
        flat[:] = np.argsort(w, kind="mergesort")[:k]
        return out
    race = np.empty(n, np.float64)
    for i in range(n):
        u = (np.float64(w[i] >> np.uint64(11)) + 1.0) * (1.0 / 9007199254740992.0)
        race[i] = -np.log(u) / p[i] if p[i] > 0 else np.inf
    flat[:] = np.argsort(race, kind="mergesort")[:k]
    return out


@njit(cache=True)
def bernoulli_array(key, shape, p):
    """True where a uniform draw is below p (an array broadcasting to shape)."""
    if np.any(p < 0.0) or np.any(p > 1.0) or np.any(np.isnan(p)):
        raise ValueError("bernoulli: p must lie in [0, 1]")
    return uniform64(key, shape, 0.0, 1.0) < p


# ---------------------------------------------------------------- the calls of transpile.random
# With transpile.random's signatures and its arguments already checked: transpile.random calls
# them after its checks, and NumPy code generated from a call of transpile.random calls them
# directly (rt.prng.draw_normal(key, (3,))). Numba code calls the kernels above the same way.

_MASK64 = (1 << 64) - 1


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def draw_key(seed):
    return key_from_seed(np.uint64(int(seed) & _MASK64))


def draw_split(key, num=2):
    return split(key, int(num))


def draw_fold_in(key, data):
    return fold_in(key, np.uint64(int(data) & _MASK64))


def draw_normal(key, shape=(), dtype=np.float64):
    return normal(key, _shape(shape)).astype(dtype, copy=False)


def draw_uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    dtype, shape = np.dtype(dtype), _shape(shape)
    lo, hi = np.asarray(minval, dtype), np.asarray(maxval, dtype)
    draw = uniform32 if dtype.itemsize <= 4 else uniform64
    if lo.ndim == 0 and hi.ndim == 0 and dtype.itemsize >= 4:
        return draw(key, shape, lo[()], hi[()])
    # bounds per element (or float16, which Numba lacks): [0, 1) scaled here, kept below maxval
    u = draw(key, shape, 0.0, 1.0).astype(dtype, copy=False)
    return np.asarray(np.minimum(lo + u * (hi - lo), np.nextafter(hi, lo)), dtype=dtype)


def draw_randint(key, shape, minval, maxval, dtype, least, most):
    """(least, most: the range of dtype, random.int_range)"""
    return randint(key, _shape(shape), np.int64(minval), np.int64(maxval),
                   least, most).astype(dtype, copy=False)


def draw_permutation(key, x, axis=0):
    if isinstance(x, (int, np.integer)):
        return permutation(key, int(x))
    x = np.asarray(x)
    return np.take(x, permutation(key, x.shape[axis]), axis=axis)


def draw_bernoulli(key, p=0.5, shape=None):
    p = np.asarray(p)
    shape = p.shape if shape is None else _shape(shape)
    if p.ndim == 0:
        return bernoulli(key, shape, np.float64(p))
    return bernoulli_array(key, shape, p)


def draw_choice(key, a, shape=(), replace=True, p=None):
    n = int(a) if isinstance(a, (int, np.integer)) else np.shape(a)[0]
    weights = np.zeros(0) if p is None else np.asarray(p, np.float64)
    idx = choice(key, _shape(shape), n, bool(replace), weights)
    return idx if isinstance(a, (int, np.integer)) else np.asarray(a)[idx]
