"""The Python-language layer on code written the way other people write it (issue 22): each
construct runs under jit (compiled and, with backend='numpy', the NumPy version of the generated
code) and must give what Python gives; where it is differentiable, grad and jit(grad) must match
central finite differences.

The bugs these tests pin down gave other numbers silently (enumerate's start ignored, a loop
over an array not seeing writes into it, a view made before a loop not following writes into its
base inside the loop) or refused plain Python.
"""
import math

import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")

BACKENDS = ["numba", "numpy"]


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check_jit(fn, *args, backend="numba"):
    """jit(fn) gives what fn gives (exact for ints/bools, dtype kind kept) and leaves the same
    values in its arguments."""
    want_args = _copy(args)
    want = fn(*want_args)
    got_args = _copy(args)
    j = jit(fn, backend=backend, wait=True)
    got = j(*got_args)
    _same(got, want)
    for g, w in zip(got_args, want_args):
        _same(g, w)
    if backend == "numba":
        assert j.last_tier == "compiled"
    return got


def _same(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g, w)
    assert g.dtype.kind == w.dtype.kind, (g.dtype, w.dtype)
    if w.dtype.kind in "biu":
        assert np.array_equal(g, w), (g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def check_grad(fn, *args, argnum=0):
    want = numerical_grad(fn, list(args), argnum)
    for g in (grad(fn, argnums=argnum), jit(grad(fn, argnums=argnum), wait=True)):
        np.testing.assert_allclose(g(*_copy(args)), want, rtol=1e-6, atol=1e-8)


# -- enumerate(..., start=k): the start was ignored as a keyword (silently other numbers) ------

def enumerate_start_kw(x):
    s = 0.0
    for k, v in enumerate(x, start=1):
        s += k * v
    return s


def enumerate_zip_start_kw(a, b):
    s = 0.0
    for k, (u, v) in enumerate(zip(a, b), start=3):
        s += k * u * v
    return s


def enumerate_start_positional_runtime(x, k0):
    s = 0.0
    for k, v in enumerate(x, k0):
        s += k * v
    return s


def enumerate_start_in_generator(x):
    return sum(k * v for k, v in enumerate(x, start=2))


def enumerate_start_in_comprehension(x):
    return np.array([k * v for k, v in enumerate(x, start=-1)])


def enumerate_start_over_tuple(x):
    s = 0.0
    for k, w in enumerate((0.5, 1.5, 2.5), start=10):
        s += k * w * x[0]
    return s


ENUMERATE = [(enumerate_start_kw, (np.arange(1.0, 6.0),)),
             (enumerate_zip_start_kw, (np.arange(1.0, 6.0), np.arange(2.0, 8.0))),
             (enumerate_start_positional_runtime, (np.arange(1.0, 6.0), 4)),
             (enumerate_start_in_generator, (np.arange(1.0, 5.0),)),
             (enumerate_start_in_comprehension, (np.arange(1.0, 5.0),)),
             (enumerate_start_over_tuple, (np.array([2.0, 3.0]),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", ENUMERATE, ids=[f.__name__ for f, _ in ENUMERATE])
def test_enumerate_start(fn, args, backend):
    check_jit(fn, *args, backend=backend)


@pytest.mark.parametrize("fn,args", ENUMERATE[:4], ids=[f.__name__ for f, _ in ENUMERATE[:4]])
def test_enumerate_start_grad(fn, args):
    check_grad(fn, *args)


def test_enumerate_rejects_other_keywords():
    def f(x):
        s = 0.0
        for k, v in enumerate(x, begin=1):
            s += k * v
        return s
    with pytest.raises(Exception, match="enumerate"):
        jit(f, wait=True)(np.ones(3))


# -- reversed(...) as a for loop's iterable, lengths known only at run time --------------------

def reversed_range_len(x):
    out = np.empty_like(x)
    for i in reversed(range(len(x))):
        out[len(x) - 1 - i] = x[i] * (i + 1)
    return out


def reversed_range_step(x):
    out = np.zeros(x.shape[0] + 3)
    for i in reversed(range(1, len(x), 2)):
        out[i] = out[i + 2] + x[i]
    for i in reversed(range(len(x) - 1, -1, -3)):
        out[i] += 10 * i
    for i in reversed(range(len(x), 0, 2)):       # empty
        out[0] += 1000.0
    return out


def reversed_array_zip(a, b):
    s = 0.0
    for k, (u, v) in enumerate(zip(reversed(a), b), start=1):
        s += k * u * v
    return s


def backward_recurrence(x):
    """A suffix recurrence, the way a backward pass is written by hand."""
    acc = 0.0
    out = np.empty_like(x)
    for i in reversed(range(x.shape[0])):
        acc = acc * 0.5 + np.sin(x[i])
        out[i] = acc
    return out


REVERSED = [(reversed_range_len, (np.arange(1.0, 6.0),)),
            (reversed_range_step, (np.arange(7.0),)),
            (reversed_range_step, (np.arange(6.0),)),
            (reversed_array_zip, (np.arange(1.0, 5.0), np.arange(2.0, 7.0))),
            (backward_recurrence, (np.linspace(-1.0, 2.0, 6),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", REVERSED, ids=[f"{f.__name__}{len(a[0])}"
                                                   for f, a in REVERSED])
def test_reversed_loops(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def _reversed_range_loss(x):
    return np.sum(reversed_range_len(x) ** 2)


def _backward_recurrence_loss(x):
    return np.sum(backward_recurrence(x) * np.arange(x.shape[0]))


@pytest.mark.parametrize("fn,args", [(_reversed_range_loss, REVERSED[0][1]), REVERSED[3],
                                     (_backward_recurrence_loss, REVERSED[4][1])],
                         ids=["reversed_range_len", "reversed_array_zip", "backward_recurrence"])
def test_reversed_loops_grad(fn, args):
    check_grad(fn, *args)


# -- a for loop over an array sees writes into it (Python's iterator holds the array) ----------

def loop_over_written_argument(x):
    s = 0.0
    for v in x:
        x[-1] += 1.0
        s = s * 0.5 + v
    return s


def loop_over_reversed_written(x):
    s = 0.0
    for v in reversed(x):
        x[0] += 1.0
        s = s * 0.5 + v
    return s


def enumerate_over_written_local(x):
    y = x * 2.0
    s = 0.0
    for i, v in enumerate(y):
        if i + 1 < y.shape[0]:
            y[i + 1] += v          # a prefix sum through the iterator
        s += v
    return s, y


def rows_of_written_matrix(A):
    B = A.copy()
    out = np.zeros(B.shape[1])
    for row in B:
        B[-1] += row               # the last row grows before it is reached
        out += row
    return out


WRITTEN = [(loop_over_written_argument, (np.arange(4.0),)),
           (loop_over_reversed_written, (np.arange(4.0),)),
           (enumerate_over_written_local, (np.arange(1.0, 6.0),)),
           (rows_of_written_matrix, (np.arange(12.0).reshape(4, 3),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", WRITTEN, ids=[f.__name__ for f, _ in WRITTEN])
def test_loop_over_written_array(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def _sum_of_enumerate_prefix(x):
    s, y = enumerate_over_written_local(x * 1.0)
    return s + np.sum(np.sin(y))


def _sum_of_rows(A):
    return np.sum(rows_of_written_matrix(A) ** 2)


@pytest.mark.parametrize("fn,args", [(_sum_of_enumerate_prefix, (np.linspace(0.1, 1.0, 5),)),
                                     (_sum_of_rows, (np.linspace(-1.0, 1.0, 12).reshape(4, 3),))])
def test_loop_over_written_array_grad(fn, args):
    check_grad(fn, *args)


# -- a view made before a loop follows writes into its base inside the loop --------------------

def view_of_local_written_in_loop(x):
    x = x.copy()
    y = x[1:]
    s = 0.0
    for k in range(3):
        x[1] += 1.0
        s += y[0]
    return s


def view_of_argument_written_in_loop(x):
    y = x[1:]
    s = 0.0
    for k in range(3):
        x[1] += 1.0
        s += y[0]
    return s


def reversed_view_written_in_loop(x):
    x = x.copy()
    y = x[::-1]
    s = 0.0
    for k in range(3):
        x[0] += x[2]
        s += y[-1] * y[1]
    return s


def row_view_written_in_while(A):
    B = A.copy()
    r = B[1]
    k = 0
    while k < 3:
        B[1, 0] += B[0, 1]
        B[1] *= 0.5
        k += 1
    return r * 1.0, B


VIEWS = [view_of_local_written_in_loop, view_of_argument_written_in_loop,
         reversed_view_written_in_loop, row_view_written_in_while]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", VIEWS, ids=[f.__name__ for f in VIEWS])
def test_view_follows_base_written_in_loop(fn, backend):
    x = np.arange(1.0, 7.0).reshape(2, 3) if fn is row_view_written_in_while else \
        np.arange(1.0, 5.0)
    check_jit(fn, x, backend=backend)


def _view_loss(x):
    return reversed_view_written_in_loop(x)


def _row_view_loss(A):
    r, B = row_view_written_in_while(A)
    return np.sum(r * r) + np.sum(B)


def test_view_follows_base_written_in_loop_grad():
    check_grad(_view_loss, np.array([0.5, 1.5, -0.25, 2.0]))
    check_grad(_row_view_loss, np.arange(1.0, 7.0).reshape(2, 3) * 0.3)


# -- a negative literal as an operand: (-1) ** k was lowered as -1 ** k = -(1 ** k) -----------

def alternating_signs(a):
    out = np.zeros(a.shape[0], dtype=np.int64)
    f = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = (-1) ** (a[i] % 2) * a[i]
        f[i] = (-2.0) ** a[i] - 2.0 ** a[i]
    return out, f, (-3) ** a[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_literal_base(backend):
    check_jit(alternating_signs, np.array([1, 2, 3, 4, 7]), backend=backend)


# -- lists appended in loops: unrolled where the trip count is known, refused otherwise --------

def append_in_zip(xs, ys):
    pts = []
    for x, y in zip(xs, ys):
        pts.append((x, y))
    total = 0.0
    for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
        total += (x1 - x0) ** 2 + y1 * y0
    return total


def append_in_enumerate(xs):
    out = []
    for k, x in enumerate(xs, start=1):
        out.append(k * x)
    return np.array(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_append_in_zip_and_enumerate(backend):
    xs, ys = np.arange(1.0, 5.0) ** 2, np.array([0.3, -0.2, 0.5, 1.0])
    check_jit(append_in_zip, xs, ys, backend=backend)
    check_jit(append_in_enumerate, xs, backend=backend)


def test_append_in_zip_grad():
    # the list used to keep only its last item: a zero gradient, silently
    check_grad(append_in_zip, np.arange(1.0, 5.0) ** 2, np.array([0.3, -0.2, 0.5, 1.0]))


def tuples_in_while(x):
    out = []
    i = 0
    while i < x.shape[0] and x[i] > 0.0:
        out.append((x[i], i))
        i += 1
    return len(out)


def arrays_under_data_if(x):
    out = []
    for v in x:
        if v > 0.5:
            out.append(x * v)
    return len(out)


def test_list_of_tuples_with_run_time_count_is_refused():
    # a list of numbers or of arrays grows at run time (RunList, below); a list of tuples does not
    from transpile.errors import TranspileError
    with pytest.raises(TranspileError, match="list 'out'.*only lists of numbers or of arrays"):
        jit(tuples_in_while, wait=True)(np.array([0.4, 0.9, 0.2, 1.5]))


def test_list_of_arrays_under_data_if_compiles():
    x = np.array([0.4, 0.9, 0.2, 1.5])
    assert jit(arrays_under_data_if, wait=True)(x) == arrays_under_data_if(x) == 2


# -- builtins and math functions users reach for ---------------------------------------------

def builtins_mix(x, t, a):
    s = 0
    n = a[0]
    while n > 0:
        n, d = divmod(n, 10)
        s += d
    return (any(v > t for v in x), all(v > -1.0 for v in x), any(x > 5.0), all(x > -1.0),
            s, divmod(7.5, -2.0), divmod(-7, 2), pow(2, 10), pow(x[1], 2))


def math_more(x):
    return (math.copysign(2.0, x[0]) * math.degrees(x[1]) + math.radians(x[2])
            + math.copysign(x[3], -1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtins_and_math(backend):
    check_jit(builtins_mix, np.arange(4.0), 2.5, np.array([1234, 5]), backend=backend)
    check_jit(math_more, np.array([-1.0, 2.0, 3.0, 8.0]), backend=backend)


def test_math_more_grad():
    check_grad(math_more, np.array([-1.0, 2.0, 3.0, 8.0]))


def python_types_as_dtypes(x):
    m = np.zeros(x.shape[0], dtype=bool)
    k = np.full(3, -1, dtype=int)
    f = np.ones(2, dtype=float)
    c = np.zeros(2, dtype=complex)
    m[1] = True
    return m, k, f, c, x.astype(int), (x > 1).astype(float)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_types_as_dtypes(backend):
    got = check_jit(python_types_as_dtypes, np.arange(4.0), backend=backend)
    want = python_types_as_dtypes(np.arange(4.0))
    assert [g.dtype for g in got] == [w.dtype for w in want]


def rebind_number_argument(s0, n):
    total = 0.0
    for p in range(n):
        s = s0
        for k in range(3):
            s *= 1.5
        total += s
    return total


def test_number_argument_rebound_compiles():
    check_jit(rebind_number_argument, 100.0, 3)


# -- elements of arrays written in loops (hand-written sorts and queues) ---------------------

def partition_select(x, k):
    a = x.copy()
    lo, hi = 0, len(a) - 1
    while lo < hi:
        pivot = a[hi]
        i = lo
        for j in range(lo, hi):
            if a[j] < pivot:
                a[i], a[j] = a[j], a[i]
                i += 1
        a[i], a[hi] = a[hi], a[i]
        if i == k:
            break
        elif i < k:
            lo = i + 1
        else:
            hi = i - 1
    return a[k], a


def insertion_sorted(x):
    a = x.copy()
    for i in range(1, len(a)):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def bfs_levels(adj, src):
    n = adj.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head, tail = 0, 1
    queue[0] = src
    dist[src] = 0
    while head < tail:
        u = queue[head]
        head += 1
        for v in range(n):
            if adj[u, v] and dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist


@pytest.mark.parametrize("backend", BACKENDS)
def test_elements_of_arrays_written_in_loops(backend):
    x = np.random.default_rng(5).standard_normal(11)
    check_jit(partition_select, x, 5, backend=backend)
    check_jit(insertion_sorted, x, backend=backend)
    a = np.random.default_rng(6).random((9, 9)) < 0.3
    check_jit(bfs_levels, a | a.T, 0, backend=backend)


def _insertion_loss(x):
    return np.sum(insertion_sorted(x) * np.arange(x.shape[0]))


def test_insertion_sort_grad():
    check_grad(_insertion_loss, np.random.default_rng(7).standard_normal(7))


# -- return from inside loops: nested loops, tuples, arrays; raise after the loop -------------

def first_pair_close(x, target):
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            if abs(x[i] + x[j] - target) < 0.05:
                return i, j
    return -1, -1


def secant(c, x0, x1):
    f = lambda x: c[0] * x ** 3 + c[1] * x - c[2]      # noqa: E731
    f0, f1 = f(x0), f(x1)
    for it in range(100):
        if f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        if abs(x2 - x1) < 1e-12:
            return x2, it + 1
        x0, f0 = x1, f1
        x1, f1 = x2, f(x2)
    raise RuntimeError(f"secant did not converge after {100} iterations")


def first_big_row(X, t):
    for i in range(X.shape[0]):
        k = 0
        while k < X.shape[1]:
            if X[i, k] > t:
                return X[i] * 2.0
            if X[i, k] < -t:
                return -X[i]
            k += 1
    return np.zeros(X.shape[1])


def _helper_search(x, t):
    for k, v in enumerate(x):
        if v > t:
            return k, v * 2.0
    return -1, 0.0


def inlined_search(x):
    k, v = _helper_search(x, 0.5)
    k2, v2 = _helper_search(x[::-1], 0.9)
    return k + k2, v + v2


RETURNS = [(first_pair_close, (np.round(np.random.default_rng(1).random(12) * 4.0, 1), 5.3)),
           (first_pair_close, (np.round(np.random.default_rng(1).random(12) * 4.0, 1), 50.0)),
           (secant, (np.array([1.0, 1.5, 2.3]), 0.0, 1.0)),
           (first_big_row, (np.random.default_rng(2).standard_normal((5, 3)), 1.5)),
           (first_big_row, (np.random.default_rng(3).standard_normal((5, 3)), 1.2)),
           (first_big_row, (np.random.default_rng(2).standard_normal((5, 3)), 9.0)),
           (inlined_search, (np.random.default_rng(4).random(6),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", RETURNS, ids=[f"{f.__name__}{i}"
                                                  for i, (f, _) in enumerate(RETURNS)])
def test_return_from_inside_loops(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def test_raise_after_loop_raises():
    with pytest.raises(RuntimeError, match="did not converge"):
        jit(secant, wait=True)(np.array([1.0, 0.0, 0.0]), 3.0, 3.0 + 1e-300)


def _secant_root(c):
    return secant(c, 0.0, 1.0)[0]


def _first_big_row_loss(X):
    return np.sum(first_big_row(X, 1.2) ** 2)


def test_return_from_inside_loops_grad():
    check_grad(_secant_root, np.array([1.0, 1.5, 2.3]))
    check_grad(_first_big_row_loss, np.random.default_rng(3).standard_normal((5, 3)))


# -- the loop variable after a break keeps the item of the iteration that broke ---------------
# (the remaining iterations run with the body skipped: the variable used to move on to the last
# item, silently)

def index_after_break(x):
    for i in range(len(x)):
        if x[i] > 0.5:
            break
    return i


def item_after_break(x):
    for v in x:
        if v > 0.5:
            break
    return v


def enumerate_after_break(x):
    for k, v in enumerate(x, start=1):
        if v > 0.5:
            break
    return k, v * 2.0


def zip_after_break(a, b):
    total = 0.0
    for u, w in zip(a, b):
        total += u * w
        if total > 1.0:
            break
    return u, w, total


def for_else_found(X, thresh):
    for i, row in enumerate(X):
        if row.sum() > thresh:
            found = i
            break
    else:
        found = -1
    return found, (X[found] * 2.0 if found >= 0 else np.zeros(X.shape[1]))


BREAKS = [(index_after_break, (np.array([0.1, 0.7, 0.2, 0.9]),)),
          (item_after_break, (np.array([0.1, 0.7, 0.2, 0.9]),)),
          (enumerate_after_break, (np.array([0.1, 0.2, 0.7, 0.9]),)),
          (zip_after_break, (np.array([0.5, 0.9, 1.2, 0.3]), np.array([1.0, 0.8, 0.2, 2.0]))),
          (for_else_found, (np.random.default_rng(2).random((6, 3)), 2.2)),
          (for_else_found, (np.random.default_rng(2).random((6, 3)), 9.0))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", BREAKS, ids=[f"{f.__name__}{i}"
                                                 for i, (f, _) in enumerate(BREAKS)])
def test_loop_variable_after_break(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def _item_after_break_loss(x):
    return item_after_break(x) ** 2 + zip_after_break(x, x[::-1])[2]


def test_loop_variable_after_break_grad():
    check_grad(_item_after_break_loss, np.array([0.1, 0.7, 0.2, 0.9]))


# -- lists that grow by a number of items known only at run time (RunLists) ------------------

def kept_values(x):
    out = []
    for v in x:
        if v > 0.5:
            out.append(v * 2.0)
    return np.array(out), len(out)


def local_peaks(x):
    idx = []
    vals = []
    for i in range(1, len(x) - 1):
        if x[i] > x[i - 1] and x[i] >= x[i + 1]:
            idx.append(i)
            vals.append(x[i])
    return np.array(idx, dtype=np.int64), np.array(vals), sum(vals)


def primes_below(n):
    out = []
    for k in range(2, n):
        for d in range(2, int(math.sqrt(k)) + 1):
            if k % d == 0:
                break
        else:
            out.append(k)
    return np.array(out), len(out), out[-1]


def positive_prefix(x):
    out = []
    i = 0
    while i < len(x) and x[i] > 0.0:
        out.append(x[i])
        i += 1
    return sum(out), len(out), (out[-1] if out else -1.0)


def window_maxima(x, k):
    dq = []
    out = []
    for i in range(len(x)):
        while dq and x[dq[-1]] <= x[i]:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - k:
            dq.pop(0)
        if i >= k - 1:
            out.append(x[dq[0]])
    return np.array(out)


def to_csr(A, tol):
    data, indices, indptr = [], [], [0]
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if abs(A[i, j]) > tol:
                data.append(A[i, j])
                indices.append(j)
        indptr.append(len(data))
    return np.array(data), np.array(indices), np.array(indptr)


def reversed_sorted_popped(x):
    out = []
    for v in x:
        if v > 0.0:
            out.append(v)
    first = out.pop(0) if out else 0.0
    out.reverse()
    rev = np.array(out)
    out.sort()
    s = np.array(out)
    out.clear()
    return first, rev, s, len(out)


def filtered_comprehension(X):
    norms = [math.sqrt(sum(v * v for v in row)) for row in X]
    big = [i for i, nrm in enumerate(norms) if nrm > 1.0]
    return np.array(norms), len(big), np.array(big, dtype=np.int64)


def ints_then_floats(x):
    out = [0]
    for v in x:
        if v > 0.0:
            out.append(v)
    return np.array(out)


RUNLISTS = [(kept_values, (np.random.default_rng(1).random(20),)),
            (kept_values, (np.zeros(5),)),
            (local_peaks, (np.random.default_rng(2).standard_normal(30),)),
            (primes_below, (40,)),
            (positive_prefix, (np.abs(np.random.default_rng(3).standard_normal(9)),)),
            (positive_prefix, (np.array([0.5, 0.2, -1.0, 3.0]),)),
            (window_maxima, (np.random.default_rng(4).standard_normal(15), 3)),
            (to_csr, (np.random.default_rng(5).standard_normal((12, 13)), 0.8)),
            (reversed_sorted_popped, (np.random.default_rng(6).standard_normal(11),)),
            (filtered_comprehension, (np.random.default_rng(7).standard_normal((6, 3)),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", RUNLISTS, ids=[f"{f.__name__}{i}"
                                                   for i, (f, _) in enumerate(RUNLISTS)])
def test_lists_with_run_time_lengths(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def _kept_loss(x):
    out, n = kept_values(x)
    return np.sum(out ** 3) + n


def _peaks_loss(x):
    return np.sum(local_peaks(x)[1] ** 2)


def test_lists_with_run_time_lengths_grad():
    check_grad(_kept_loss, np.random.default_rng(1).random(12))
    check_grad(_peaks_loss, np.random.default_rng(2).standard_normal(15))


def index_past_count(x, k):
    out = []
    for v in x:
        if v > 0.0:
            out.append(v)
    return out[k]


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_index_past_its_count_raises(backend):
    x = np.array([1.0, -1.0, 2.0, -3.0, 4.0, -5.0, 6.0, -7.0, 8.0, -9.0])
    f = jit(index_past_count, backend=backend, wait=True)
    assert f(x, -1) == 8.0 and f(x, 2) == 4.0
    with pytest.raises(IndexError):
        f(x, 5)
    with pytest.raises(IndexError):
        f(x, -6)


def float_after_int_list(x):
    out = []
    for v in x:
        if v > 0.0:
            out.append(1)
    out.append(2.5)
    return np.array(out)


def test_a_value_that_does_not_fit_the_list_is_refused():
    # np.array of such a list has a type that depends on the items it holds: refused
    from transpile.errors import TranspileError
    with pytest.raises(TranspileError, match="list 'out' of int64 items"):
        jit(float_after_int_list, wait=True)(np.array([1.0, -2.0, 3.0]))
    with pytest.raises(TranspileError, match="list 'out'.*several types"):
        jit(ints_then_floats, wait=True)(np.array([1.0, -2.0, 3.0]))


# -- a loop variable whose shape changes in the loop: its shape is not folded ----------------

def grow_while_short(x):
    buf = x[:1]
    for i in range(4):
        if buf.shape[0] < 3:
            buf = np.concatenate((buf, x[:1]))
    return buf.sum(), len(buf)


def doubling_buffer(x):
    buf = np.zeros(0, dtype=np.int64)
    cnt = 0
    s = 0.0
    for i in range(len(x)):
        if cnt == buf.shape[0]:
            new = np.zeros(2 * cnt + 1, dtype=np.int64)
            new[:cnt] = buf
            buf = new
        buf[cnt] = i
        cnt += 1
        s += x[buf[cnt - 1]]
    return s, np.copy(buf[:cnt])


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_variable_changing_shape(backend):
    check_jit(doubling_buffer, np.arange(1.0, 8.0), backend=backend)
    check_jit(grow_while_short, np.arange(1.0, 8.0), backend="numpy")


def test_loop_variable_changing_shape_by_concatenate():
    # its shape changes by np.concatenate of known shapes: Numba has no lowering for that (the
    # NumPy version runs, with a warning); the numbers were 5 items, not 3, when len(buf) was
    # read as its shape on entry (silently)
    import warnings
    from transpile.errors import TranspileWarning
    x = np.arange(1.0, 8.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        assert jit(grow_while_short, wait=True)(x) == grow_while_short(x)


# -- sorted(key=...), x.tolist(), sum/any/all of generators (a loop, not one term per item) ---

def ranks_by_sorted_key(x):
    order = sorted(range(len(x)), key=lambda i: x[i])
    ranks = np.empty(len(x), dtype=np.int64)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks, order[0]


def pairs_sorted_descending(x):
    pairs = [(x[i], i) for i in range(len(x))]
    s = sorted(pairs, key=lambda p: p[0], reverse=True)
    return s[0][1], s[-1][0], sorted([x[0], x[1], x[2]], key=abs)


def generator_reductions(x, t):
    v = 5.0
    has_big = any(v > t for v in x)
    all_finite = all(math.isfinite(v) for v in x)
    n_small = sum(1 for v in x.tolist() if abs(v) < 0.5)
    s = sum(v * v for v in x)
    odd = sum((x[i] for i in range(len(x)) if i % 2 == 1), 10.0)
    return has_big, all_finite, n_small, s + v, odd, sum(k * w for k, w in enumerate(x, 1))


GENERATORS = [(ranks_by_sorted_key, (np.array([0.5, -1.2, 0.5, 2.0, -0.1, 0.5, 1.1]),)),
              (pairs_sorted_descending, (np.array([0.5, -1.2, 0.5, 2.0, -0.1]),)),
              (generator_reductions, (np.random.default_rng(9).standard_normal(40), 1.0)),
              (generator_reductions, (np.random.default_rng(9).standard_normal(40), 9.0))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,args", GENERATORS, ids=[f"{f.__name__}{i}"
                                                     for i, (f, _) in enumerate(GENERATORS)])
def test_sorted_tolist_generators(fn, args, backend):
    check_jit(fn, *args, backend=backend)


def _generator_loss(x):
    r = generator_reductions(x, 1.0)
    return r[3] + r[4] + r[5]


def test_generator_reductions_grad():
    check_grad(_generator_loss, np.random.default_rng(10).standard_normal(12))


def test_generator_names_do_not_leak():
    def f(x):
        v = 5.0
        s = sum(v * v for v in x)
        return s + v
    assert jit(f, wait=True)(np.arange(3.0)) == 10.0


def rounding(x, k):
    return (round(x[0], 2), round(x[1]), round(x[2] * 10.0, k), round(x[3]), round(-x[3]),
            round(k * 1.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_round(backend):
    # round(x, n) of a NumPy number is np.round(x, n); round(x) the nearest int, ties to even
    check_jit(rounding, np.array([1.23456, 2.5, -0.0371, 3.5]), 1, backend=backend)
    check_jit(rounding, np.array([-7.125, -2.5, 0.55, 0.5]), 0, backend=backend)


def appended_lists(t, x):
    zeros, rows, sums = [], [], []
    for i in range(t.shape[0]):
        if t[i] == 0:
            zeros.append(t[i])
            rows.append(x[i] * 2.0)
        sums.append(float(np.sum(x[: i + 1])))
    return zeros, (rows, sums), len(zeros)


def test_a_list_built_by_append_is_returned_as_a_list():
    """jit returned the stacked array of an appended list: `r + [9]` then added 9 to every
    item instead of appending it (hunt). The caller gets a list of the items, as Python."""
    t = np.array([0, 3, 0, 1, 0])
    x = np.arange(15.0).reshape(5, 3)
    want = appended_lists(t, x)
    for j in (jit(appended_lists), jit(appended_lists, wait=True)):
        for tt in (t, np.array([1, 2])):            # (none appended: empty lists)
            want = appended_lists(tt, x)
            got = j(tt, x)
            assert type(got[0]) is list and type(got[1][0]) is list and type(got[1][1]) is list
            assert got[0] == want[0] and got[2] == want[2]
            assert got[0] + [9] == want[0] + [9]
            assert len(got[1][0]) == len(want[1][0])
            for g, w in zip(got[1][0], want[1][0]):
                np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(got[1][1], want[1][1])
