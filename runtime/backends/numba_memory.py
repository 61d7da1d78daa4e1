"""Large arrays allocated by compiled Numba code, backed by huge pages as NumPy's are, and
large zeros allocated lazily as NumPy's are.

NumPy asks the kernel for transparent huge pages on every array of 4 MiB or more
(`madvise(MADV_HUGEPAGE)`); Numba's allocator does not, so a fresh 8 MB array written by
compiled code takes 2048 page faults where NumPy's takes a handful: returning four fresh
1e6-element arrays from compiled code ran twice as slow as NumPy for that alone. `large_pages(a)`
gives an array allocated in compiled code the same hint (the part of it on whole pages; nothing
for arrays under 4 MiB, nothing where the system has no madvise or ignores the hint).
"""
import sys

import numpy as np
from llvmlite import ir as llir
from numba import njit, objmode, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .messages import ALIASED  # noqa: F401 (generated code's)

HUGE_MIN_BYTES = 1 << 22        # NumPy's threshold (4 MiB)
PAGE = 4096
MADV_HUGEPAGE = 14              # Linux
HAS_MADVISE = sys.platform.startswith("linux")


@intrinsic
def _madvise(typingctx, addr, length, advice):
    """libc's madvise(addr, length, advice); its result (0 or -1) is ignored by callers."""
    sig = types.int32(types.intp, types.intp, types.int32)

    def codegen(context, builder, signature, args):
        ptr_t = llir.IntType(8).as_pointer()
        fnty = llir.FunctionType(llir.IntType(32), [ptr_t, llir.IntType(64), llir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        return builder.call(fn, [builder.inttoptr(args[0], ptr_t), args[1], args[2]])
    return sig, codegen


@njit(inline="always", cache=True)
def large_pages(a):
    """Hint huge pages for the whole pages of `a`'s buffer (4 MiB or more); returns nothing."""
    if HAS_MADVISE:
        nbytes = a.size * a.itemsize
        if nbytes >= HUGE_MIN_BYTES:
            start = (a.ctypes.data + (PAGE - 1)) & ~(PAGE - 1)
            end = (a.ctypes.data + nbytes) & ~(PAGE - 1)
            _madvise(start, end - start, np.int32(MADV_HUGEPAGE))


@njit(inline="always", cache=True)
def _extent(a):
    lo = a.ctypes.data
    hi = lo
    for k in range(a.ndim):
        step = a.strides[k] * (a.shape[k] - 1)
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + a.itemsize


@njit(inline="always", cache=True)
def overlaps(a, b):
    """Can arrays a and b share an element (their byte ranges meet)?"""
    if a.size == 0 or b.size == 0:
        return False
    a_lo, a_hi = _extent(a)
    b_lo, b_hi = _extent(b)
    return a_lo < b_hi and b_lo < a_hi


@njit(inline="always", cache=True)
def fresh_copy(a):
    """a.copy() (C order) into a new array backed by huge pages where it is large."""
    out = np.empty(a.shape, a.dtype)
    large_pages(out)
    out[...] = a
    return out


# np.zeros of a large array: NumPy's (calloc: the kernel hands out pages already zero, on first
# touch), where Numba's np.zeros writes zeros over the whole buffer first: a (3000, 3000) array
# of which a sparse matrix fills a few entries took 30 ms in compiled code, 0.08 ms in NumPy.
# Called through an object-mode block (about 0.5 us), from this size on.
LAZY_ZEROS_MIN_BYTES = 1 << 20


def zeros_lazy(shape, dtype):
    """np.zeros(shape, dtype); in compiled code, NumPy's own allocation for large arrays."""
    return np.zeros(shape, dtype)


@overload(zeros_lazy)
def _zeros_lazy(shape, dtype):
    if not isinstance(dtype, types.NumberClass):
        return None
    ndim = len(shape) if isinstance(shape, types.BaseTuple) else 1
    out_type = types.Array(dtype.dtype, ndim, "C")
    np_dtype = np.dtype(str(dtype.dtype))
    itemsize = np_dtype.itemsize

    def impl(shape, dtype):
        if _nbytes(shape, itemsize) < LAZY_ZEROS_MIN_BYTES:
            return np.zeros(shape, dtype)
        with objmode(out=out_type):
            out = np.zeros(shape, np_dtype)
        return out
    return impl


@njit(inline="always", cache=True)
def _nbytes(shape, itemsize):
    n = itemsize
    for k in shape:
        n *= k
    return n
