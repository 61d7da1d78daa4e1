"""Vectorizable scalar math for fused Numba loops.

Numba calls libm's exp for np.exp on a scalar, which stops LLVM from vectorizing a loop (no
SVML here). `exp32`/`exp64` are branch-free in the common range: Cody-Waite reduction
x = n ln2 + r, a Taylor polynomial for e**r on |r| <= ln2/2 (degree 7 for float32, 13 for
float64: truncation below one ulp), and 2**n built from the exponent bits. Overflow gives inf,
underflow 0 (NumPy gives a subnormal there, below 1.2e-38 / 2.3e-308), NaN stays NaN.

`tanh32`/`tanh64` (libm's tanh stops vectorizing as exp does; NumPy's own is SIMD): the
Taylor series of tanh (coefficients 2**2n (2**2n - 1) B_2n / (2n)!, B the Bernoulli numbers)
for |x| < 0.3, where its terms shrink by 0.04 each; 1 - 2 / (e**2|x| + 1) with x's sign
elsewhere (within 3 ulp of NumPy's: tests/test_numba_math.py).
"""
import numpy as np
from llvmlite import ir as llir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _bits_to_f32(typingctx, x):
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llir.FloatType())
    return sig, codegen


@intrinsic
def _bits_to_f64(typingctx, x):
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llir.DoubleType())
    return sig, codegen


@njit(inline="always", cache=True)
def exp32(x):
    xc = min(max(x, np.float32(-87.0)), np.float32(88.0))
    n = np.floor(xc * np.float32(1.4426950408889634) + np.float32(0.5))
    r = xc - n * np.float32(0.693359375) - n * np.float32(-2.12194440e-4)
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    e = _bits_to_f32((np.int32(n) + np.int32(127)) << np.int32(23))
    y = p * e
    y = np.float32(np.inf) if x > np.float32(88.72283) else y
    y = np.float32(0.0) if x < np.float32(-87.33654) else y
    return x if x != x else y


@njit(inline="always", cache=True)
def exp64(x):
    xc = min(max(x, -708.0), 709.0)
    n = np.floor(xc * 1.4426950408889634 + 0.5)
    r = xc - n * 6.93147180369123816490e-01 - n * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    e = _bits_to_f64((np.int64(n) + np.int64(1023)) << np.int64(52))
    y = p * e
    y = np.inf if x > 709.782712893384 else y
    y = 0.0 if x < -708.3964185322641 else y
    return x if x != x else y


# tanh's Taylor coefficients of x**3, x**5, ..., x**25 (exact fractions written as floats)
_TANH = (-1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0, -1382.0 / 155925.0,
         21844.0 / 6081075.0, -929569.0 / 638512875.0, 6404582.0 / 10854718875.0,
         -443861162.0 / 1856156927625.0, 18888466084.0 / 194896477400625.0,
         -113927491862.0 / 2900518163668125.0, 58870668456604.0 / 3698160658676859375.0)
_T1, _T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12 = _TANH
_S1, _S2, _S3, _S4, _S5, _S6 = (np.float32(c) for c in _TANH[:6])


@njit(inline="always", cache=True)
def tanh64(x):
    a = abs(x)
    z = x * x
    p = _T12 * z + _T11
    p = p * z + _T10
    p = p * z + _T9
    p = p * z + _T8
    p = p * z + _T7
    p = p * z + _T6
    p = p * z + _T5
    p = p * z + _T4
    p = p * z + _T3
    p = p * z + _T2
    p = p * z + _T1
    small = a + a * (z * p)
    big = 1.0 - 2.0 / (exp64(2.0 * a) + 1.0)
    y = np.copysign(small if a < 0.3 else big, x)       # (tanh(-0.0) is -0.0)
    return x if x != x else y


@njit(inline="always", cache=True)
def tanh32(x):
    a = abs(x)
    z = x * x
    p = _S6 * z + _S5
    p = p * z + _S4
    p = p * z + _S3
    p = p * z + _S2
    p = p * z + _S1
    small = a + a * (z * p)
    big = np.float32(1.0) - np.float32(2.0) / (exp32(np.float32(2.0) * a) + np.float32(1.0))
    y = np.copysign(small if a < np.float32(0.3) else big, x)
    return x if x != x else y
