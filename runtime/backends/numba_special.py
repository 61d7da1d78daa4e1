"""Scalar scipy.special functions for fused Numba loops (Numba cannot call SciPy's ufuncs).

Each works in float64 whatever its argument (the loop casts the result to the output dtype)
and follows scipy.special at the edges (poles, +-1 for erfinv, NaN in, NaN out). The rows in
transpile/primitives/scipy/special.py name them in their `lower` templates; math.erf,
math.erfc and math.lgamma cover the rest.
"""
import math

import numpy as np
from numba import njit

__all__ = ["logsumexp_all", "erfinv_scalar", "digamma_scalar", "log_ndtr_scalar", "norm_logpdf_scalar",
           "norm_cdf_scalar", "norm_logcdf_scalar", "norm_sf_scalar", "norm_logsf_scalar",
           "t_logpdf_scalar", "trigamma_scalar"]

_TWO_OVER_SQRT_PI = 1.1283791670955126


@njit(cache=True)
def erfinv_scalar(x):
    """Inverse error function: Winitzki's closed form (about 2e-3 relative error), then
    Halley steps on erf(y) = x (on erfc(y) = 1 - |x| near +-1, where erf saturates)."""
    x = float(x)
    if x != x or x < -1.0 or x > 1.0:
        return math.nan
    if x == 1.0:
        return math.inf
    if x == -1.0:
        return -math.inf
    if x == 0.0:
        return x
    a = 0.147
    ln = math.log((1.0 - x) * (1.0 + x))
    t = 2.0 / (math.pi * a) + 0.5 * ln
    y = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), x)
    ax, ay = abs(x), abs(y)
    for _ in range(3):
        d = _TWO_OVER_SQRT_PI * math.exp(-ay * ay)
        if ax > 0.9:
            f = -(math.erfc(ay) - (1.0 - ax))
        else:
            f = math.erf(ay) - ax
        ay -= f / (d + ay * f)
    return math.copysign(ay, x)


@njit(cache=True)
def digamma_scalar(x):
    """psi(x): reflection below 0, recurrence up to 10, then the asymptotic series."""
    x = float(x)
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return x
    if x <= 0.0 and math.floor(x) == x:
        return -math.inf if x == 0.0 else math.nan
    shift = 0.0
    if x < 0.0:
        shift = -math.pi / math.tan(math.pi * (x - math.floor(x)))   # exact reduction
        x = 1.0 - x
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return math.log(x) - 0.5 / x - series + acc + shift


@njit(cache=True)
def log_ndtr_scalar(x):
    """log of the standard normal cdf; the asymptotic series far in the left tail."""
    x = float(x)
    if x > -20.0:
        if x > 0.0:
            return math.log1p(-0.5 * math.erfc(x * 0.7071067811865476))
        return math.log(0.5 * math.erfc(-x * 0.7071067811865476))
    z = 1.0 / (x * x)
    series = 1.0 - z * (1.0 - z * (3.0 - z * (15.0 - z * (105.0 - z * 945.0))))
    return -0.5 * x * x - math.log(-x) - 0.9189385332046728 + math.log(series)


@njit(cache=True)
def norm_logpdf_scalar(x, loc, scale):
    """scipy.stats.norm.logpdf (NaN for scale <= 0, as SciPy)."""
    if not scale > 0:
        return math.nan
    z = (float(x) - loc) / scale
    return -0.5 * z * z - math.log(scale) - 0.9189385332046728


@njit(cache=True)
def norm_cdf_scalar(x, loc, scale):
    if not scale > 0:
        return math.nan
    return 0.5 * math.erfc(-(float(x) - loc) / scale * 0.7071067811865476)


@njit(cache=True)
def norm_logcdf_scalar(x, loc, scale):
    if not scale > 0:
        return math.nan
    return log_ndtr_scalar((float(x) - loc) / scale)


@njit(cache=True)
def t_logpdf_scalar(x, df, loc, scale):
    """scipy.stats.t.logpdf (NaN for df <= 0 or scale <= 0)."""
    if not (scale > 0 and df > 0):
        return math.nan
    z = (float(x) - loc) / scale
    return (math.lgamma(0.5 * (df + 1.0)) - math.lgamma(0.5 * df)
            - 0.5 * math.log(df * math.pi) - math.log(scale)
            - 0.5 * (df + 1.0) * math.log1p(z * z / df))


@njit(cache=True)
def norm_sf_scalar(x, loc, scale):
    if not scale > 0:
        return math.nan
    return 0.5 * math.erfc((float(x) - loc) / scale * 0.7071067811865476)


@njit(cache=True)
def norm_logsf_scalar(x, loc, scale):
    if not scale > 0:
        return math.nan
    return log_ndtr_scalar(-(float(x) - loc) / scale)


@njit(cache=True)
def trigamma_scalar(x):
    """polygamma(1, x): reflection below 0, recurrence up to 10, then the asymptotic series."""
    x = float(x)
    if x != x:
        return math.nan
    if x <= 0.0 and math.floor(x) == x:     # poles (and -inf) are +inf, as in SciPy
        return math.inf
    if x < 0.0:
        s = math.sin(math.pi * (x - math.floor(x)))
        return math.pi * math.pi / (s * s) - trigamma_scalar(1.0 - x)
    acc = 0.0
    while x < 10.0:
        acc += 1.0 / (x * x)
        x += 1.0
    z = 1.0 / (x * x)
    series = 1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (
        5.0 / 66 - z * (691.0 / 2730 - z * 7.0 / 6)))))
    return acc + 1.0 / x + 0.5 * z + series * z / x


@njit(cache=True)
def logsumexp_all(a):
    """scipy.special.logsumexp(a) over every element (an infinite maximum is the result)."""
    m = np.max(a)
    if np.isinf(m):
        return m
    return m + np.log(np.sum(np.exp(a - m)))
