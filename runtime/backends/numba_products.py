"""Matrix products in compiled code: large ones by NumPy's own BLAS, small ones by Numba's.

Numba's np.dot calls SciPy's OpenBLAS, which transpile keeps on one thread
(lowering/cpu/module.py: limit_numba_blas_threads), and copies a strided operand (a column
slice, a row of a transposed matrix) before the call. NumPy passes strides to BLAS as they are
and runs a large product on every core. So from NUMPY_DOT_MIN multiply-adds on, the compiled
code hands the product to NumPy (an object-mode block: the GIL taken for about a microsecond,
NumPy releases it for the BLAS call); a large product then costs what it costs in NumPy.
"""
import numpy as np
from numba import njit, objmode, types
from numba.extending import overload

# multiply-adds from which the product is NumPy's (64 x 64 times 64 x 64: ~10 us on one core,
# where the object-mode call's ~1 us no longer counts); with a strided operand (a column, a
# slice of columns), which Numba copies before each call, from 128 x 128 on
NUMPY_DOT_MIN = 1 << 18
NUMPY_DOT_STRIDED_MIN = 1 << 14


def numpy_dot(x, y):
    """np.dot(x, y) of vectors and matrices by NumPy itself, C-ordered (called from compiled code
    through its overload). np.matmul is the same product for these ranks, and hands strided
    operands to BLAS as they are, where np.dot copies them (a column @ a slice of columns: 2.6x
    faster)."""
    return np.ascontiguousarray(np.matmul(x, y))


@overload(numpy_dot)
def _numpy_dot(x, y):
    out_type = types.Array(x.dtype, x.ndim + y.ndim - 2, "C")

    def impl(x, y):
        with objmode(out=out_type):
            out = np.ascontiguousarray(np.matmul(x, y))
        return out
    return impl


@njit(cache=True)
def blas_dot(x, y):
    """np.dot(x, y) of a matrix or vector with a matrix or vector (not two vectors), operands of
    one float or complex dtype: NumPy's for NUMPY_DOT_MIN multiply-adds or more (or
    NUMPY_DOT_STRIDED_MIN with an operand that is not contiguous), else Numba's."""
    inner = y.shape[0]
    macs = x.size * (y.size // inner) if inner > 0 else 0
    if macs >= NUMPY_DOT_MIN or macs >= NUMPY_DOT_STRIDED_MIN and not (
            _contiguous(x) and _contiguous(y)):
        return numpy_dot(x, y)
    return np.dot(x, y)


@njit(inline="always", cache=True)
def _contiguous(a):
    return a.flags.c_contiguous or a.flags.f_contiguous


# ---- integer products: Numba's np.dot takes floats and complex numbers only ----------------
# (accumulated in the operands' dtype, wrapping as NumPy's integer matmul does)

@njit(cache=True)
def int_vecdot(x, y):
    acc = x.dtype.type(0)
    for k in range(x.shape[0]):
        acc += x[k] * y[k]
    return acc


@njit(cache=True)
def int_matvec(x, y):
    out = np.zeros(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        acc = x.dtype.type(0)
        for k in range(x.shape[1]):
            acc += x[i, k] * y[k]
        out[i] = acc
    return out


@njit(cache=True)
def int_vecmat(x, y):
    out = np.zeros(y.shape[1], y.dtype)
    for k in range(x.shape[0]):
        for j in range(y.shape[1]):
            out[j] += x[k] * y[k, j]
    return out


@njit(cache=True)
def int_matmat(x, y):
    out = np.zeros((x.shape[0], y.shape[1]), x.dtype)
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            a = x[i, k]
            for j in range(y.shape[1]):
                out[i, j] += a * y[k, j]
    return out
