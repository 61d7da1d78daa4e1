"""Helpers of the loops jit writes for NumPy's advanced indexing (transpile/lowering/cpu/
advanced.py).

NumPy writes `M[r, c] = v` in the order its iterator takes over the index arrays and the
value: C order when each of them lays its elements out in C order (no negative stride, strides
not increasing along the axes of more than one element), an order taken from memory otherwise
(F-ordered or reversed arrays). Where an element is written twice with different values, that
order decides which one stays; the compiled loops keep the last in C order, so they check
`c_ordered` of the arrays, and otherwise that no element is written twice with different
values (`same_value`), or let the call run NumPy.
"""
from numba import njit


@njit(cache=True)
def c_ordered(a):
    """Does NumPy's iterator take a's elements in C order (strides >= 0, not increasing
    along the axes of more than one element)?"""
    prev = -1
    for k in range(a.ndim):
        if a.shape[k] <= 1:
            continue
        s = a.strides[k]
        if s < 0 or (prev >= 0 and s > prev):
            return False
        prev = s
    return True


@njit(inline="always", cache=True)
def same_value(a, b):
    """a == b, a NaN equal to a NaN."""
    return a == b or (a != a and b != b)


@njit(cache=True)
def same_values(a, b):
    """Every element of a equal to b's (broadcast), a NaN equal to a NaN."""
    return bool(((a == b) | ((a != a) & (b != b))).all())


@njit(cache=True)
def distinct_sorted(v, p):
    """Are the values v[p] (v in the order argsort p gives) all different (no two equal, no
    two NaNs)? Where two are equal, NumPy's argsort orders them by its own algorithm."""
    for q in range(p.shape[0] - 1):
        a = v[p[q]]
        b = v[p[q + 1]]
        if a == b or (a != a and b != b):
            return False
    return True
