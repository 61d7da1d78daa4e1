"""Sorting in compiled code: the compare-exchange steps of the sorting networks jit writes
for np.sort along a short axis, and NumPy's own sorts for large arrays.

`sort2(a, b)` is (a, b) in NumPy's order (NaN last) without a branch, so the straight-line
network over one position's values compiles to selects (and vectorizes across positions),
where an insertion sort's data-dependent branches were mispredicted half of the time.
"""
import numpy as np
from numba import njit, objmode, types
from numba.extending import overload


@njit(inline="always", cache=True)
def sort2(a, b):
    """(min, max) of two floats, a NaN counting as the largest value (NumPy's sort order)."""
    swap = (b < a) | ((a != a) & (b == b))
    lo = b if swap else a
    hi = a if swap else b
    return lo, hi


@njit(inline="always", cache=True)
def sort2_int(a, b):
    """(min, max) of two integers or booleans."""
    swap = b < a
    lo = b if swap else a
    hi = a if swap else b
    return lo, hi


# ---- large sorts: NumPy's own, called from compiled code --------------------------------------
#
# Numba's np.sort / np.argsort are a plain quicksort / mergesort: on 1,000 random floats 5x
# NumPy's time, on 1,000,000 12x (NumPy 2 sorts with SIMD). Calling NumPy from compiled code
# (an object-mode block: the GIL taken, the array passed as is) costs about 1 us, so from this
# size on the sort is NumPy's (measured crossover: ~300 elements).
NUMPY_SORT_MIN = 256


def numpy_sort(x, axis):
    """np.sort(x, axis) by NumPy itself (called from compiled code through its overload)."""
    return np.ascontiguousarray(np.sort(x, axis))


def numpy_argsort(x, axis, stable):
    """np.argsort(x, axis) by NumPy itself: NumPy's order of equal values, exactly."""
    return np.ascontiguousarray(np.argsort(x, axis, kind="stable" if stable else None))


@overload(numpy_sort)
def _numpy_sort(x, axis):
    out_type = types.Array(x.dtype, x.ndim, "C")

    def impl(x, axis):
        with objmode(out=out_type):
            out = np.ascontiguousarray(np.sort(x, axis))
        return out
    return impl


@overload(numpy_argsort)
def _numpy_argsort(x, axis, stable):
    out_type = types.Array(types.intp, x.ndim, "C")

    def impl(x, axis, stable):
        with objmode(out=out_type):
            out = np.ascontiguousarray(np.argsort(x, axis, kind="stable" if stable else None))
        return out
    return impl


@njit(cache=True)
def sort_lines(x):
    """np.sort(x) along the last axis: Numba's for small arrays, NumPy's for large ones."""
    if x.size >= NUMPY_SORT_MIN:
        return numpy_sort(x, -1)
    return np.sort(x)


@njit(cache=True)
def argsort_stable(x):
    """np.argsort(x, kind='stable') of a vector (Numba's mergesort for small ones)."""
    if x.size >= NUMPY_SORT_MIN:
        return numpy_argsort(x, 0, True)
    return np.argsort(x, kind="mergesort")
