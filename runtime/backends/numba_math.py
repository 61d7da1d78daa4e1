"""Vectorizable scalar math for fused Numba loops.

Numba calls libm's exp for np.exp on a scalar, which stops LLVM from vectorizing a loop (no
SVML here). `exp32`/`exp64` are branch-free in the common range: Cody-Waite reduction
x = n ln2 + r, a Taylor polynomial for e**r on |r| <= ln2/2 (degree 7 for float32, 13 for
float64: truncation below one ulp), and 2**n built from the exponent bits. Overflow gives inf,
underflow 0 (NumPy gives a subnormal there, below 1.2e-38 / 2.3e-308), NaN stays NaN.
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
