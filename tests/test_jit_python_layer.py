"""The Python-language layer on code written the way other people write it (issue 22): each
construct runs under jit (compiled and, with backend='numpy', the NumPy version of the generated
code) and must give what Python gives; where it is differentiable, grad and jit(grad) must match
central finite differences.

The bugs these tests pin down gave other numbers silently (enumerate's start ignored, a loop
over an array not seeing writes into it, a view made before a loop not following writes into its
base inside the loop) or refused plain Python.
"""
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
