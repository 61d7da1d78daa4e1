"""Compare-exchange steps of the sorting networks jit writes for np.sort along a short axis.

`sort2(a, b)` is (a, b) in NumPy's order (NaN last) without a branch, so the straight-line
network over one position's values compiles to selects (and vectorizes across positions),
where an insertion sort's data-dependent branches were mispredicted half of the time.
"""
from numba import njit


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
