"""jit's speed work of issue 22 on foreign kernels, checked against NumPy:

* arguments written in place where nothing can raise after the first write (optimize/no_raise.py),
  and still through copies where something can (a call that raises leaves them as they were);
* np.roll along an axis, np.sort along a short axis that is not the last, 1-d np.cumsum, and
  boolean-mask writes, in their Numba forms;
* fresh arrays of 4 MiB or more backed by huge pages (large_pages), same numbers.

PYTEST_DONT_REWRITE: a function under test holds an `assert`, which pytest would rewrite.
"""
import re
import warnings

import numpy as np
import pytest

from transpile import jit
from transpile.errors import TranspileError, TranspileWarning


def _jit(f):
    j = jit(f)

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)     # a fallback fails the test
            return j(*args)
    run.jitted = j
    return run


def _copies(a):
    return tuple(x.copy() if isinstance(x, np.ndarray) else x for x in a)


def _same(got, want, exact=False):
    """Ints and bools exactly; floats to the last bits (fused loops may contract a*b+c to
    one rounding), or exactly where nothing is computed (moved, sorted)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if exact or want.dtype.kind not in "fc":
        assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


# ------------------------------------------------------------------ writes into arguments -----


def fill(x, v):
    x[...] = v * 2.0 + 1.0


def clamp(x, lo, hi):
    x[x < lo] = lo
    x[x > hi] = hi


def diffuse(u, tmp, steps):
    for n in range(steps):
        tmp[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[:-2, 1:-1])
        u[:, :] = tmp[:, :]
        tmp[:, :] = 0.0


def scale_rows(a, s):
    a[1:] *= s
    a[0] = a[0] + 1
    return a.sum()


def shift_add(x):
    x[1:] = x[:-1] + 1.0          # the loop reads the array it writes (shifted): not stored into


def double_self(x, y):
    x[...] = x * 2.0 + 1.0        # the same element read and written
    y[2:5] = np.sin(x[:3]) * y[1:4]


def broadcast_row(x, row):
    x[:, :] = np.sin(row) + 1.0   # a (n,) loop written into every row of x: not stored into


def float_into_int(x, y):
    x[1:] = y[1:] * 2.5           # NumPy casts the float values into x's integers


def leapfrog(pos, vel, dt):
    vel *= 0.99                   # each argument's final value written by the loop into it
    pos += vel * dt


def rank_one_update(A, u, v, x):
    A += np.outer(u, v)           # A's new value read afterwards (it is A's own buffer now)
    x += A @ u
    return A.sum()


def reverse_into_self(x):
    x[...] = x[::-1] * 2.0        # a reversed view of x read while x is written: not into x


def update_and_return(x, y):
    x += y * 2.0
    return x                      # NumPy returns the argument itself


def cumulate_rows(x):
    for i in range(1, x.shape[0]):  # a loop variable inside the axis: the write cannot raise
        x[i] = x[i] + x[i - 1] * 0.5
    return np.count_nonzero(x > 0.0), np.argmax(x), x.max()


def put_then_count(x, idx, fill):
    np.put(x, idx, fill)          # every index checked before the first write
    return np.count_nonzero(x != fill) / x.size


def _rng(k):
    return np.random.default_rng(k)


CASES = [
    (fill, lambda: (np.zeros((7, 3)), _rng(1).standard_normal((7, 3)))),
    (clamp, lambda: (_rng(2).standard_normal((6, 4)), -0.5, 0.5)),
    (clamp, lambda: (_rng(3).standard_normal((2, 3, 5)), -0.2, 0.3)),
    (clamp, lambda: (_rng(4).integers(-9, 9, 11), -3, 4)),
    (diffuse, lambda: (_rng(5).random((6, 5)), np.zeros((6, 5)), 3)),
    (scale_rows, lambda: (_rng(6).standard_normal((4, 3)), 1.5)),
    (shift_add, lambda: (_rng(13).standard_normal(9),)),
    (broadcast_row, lambda: (np.zeros((4, 5)), _rng(19).standard_normal(5))),
    (float_into_int, lambda: (np.zeros(7, np.int64), _rng(20).standard_normal(7) * 9)),
    (double_self, lambda: (_rng(14).standard_normal(6), _rng(15).standard_normal(8))),
    (leapfrog, lambda: (_rng(25).standard_normal((6, 3)), _rng(26).standard_normal((6, 3)), 0.1)),
    (rank_one_update, lambda: (_rng(27).standard_normal((5, 5)), _rng(28).standard_normal(5),
                               _rng(29).standard_normal(5), np.zeros(5))),
    (reverse_into_self, lambda: (_rng(31).standard_normal(7),)),
    (update_and_return, lambda: (_rng(32).standard_normal((3, 4)), _rng(33).standard_normal(4))),
    (cumulate_rows, lambda: (_rng(21).standard_normal((5, 3)),)),
    (put_then_count, lambda: (_rng(22).standard_normal((6, 3)), np.array([0, 4, -1, 4]), 0.0)),
    (put_then_count, lambda: (_rng(23).standard_normal(30), np.arange(-30, 30, 7), 2.0)),
]


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_argument_writes_in_place_equal_numpy(f, make):
    want_args = make()
    want = f(*want_args)
    got_args = make()
    got = _jit(f)(*got_args)
    if want is None:
        assert got is None
    else:
        _same(got, want)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            _same(g, w)
    # a second call on the results (the in-place code runs again on written arrays)
    f(*want_args)
    _jit(f)(*got_args)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            _same(g, w)


@pytest.mark.parametrize("f, make", CASES[:3] + CASES[4:5] + CASES[-3:],
                         ids=["fill", "clamp", "clamp3", "diffuse", "cumulate_rows", "put_counted",
                              "put_loop"])
def test_nothing_can_raise_so_arguments_are_not_copied(f, make):
    j = _jit(f)
    j(*make())
    src = j.jitted.source
    assert ".copy()" not in src, src
    # and no write back of an argument into itself at the end
    assert "[...] = " not in src.split("return")[-2].splitlines()[-1] or f is fill


def write_then_index(x, i):
    x[0] = x[0] + 1.0
    x[1:] = x[1:] * 2.0
    return x[i]


def write_then_assert(x, n):
    x[:] = x * 3.0
    assert n > 0, "n must be positive"
    return x.sum()


@pytest.mark.parametrize("f, good, bad, error", [
    (write_then_index, 2, 9, IndexError),
    (write_then_assert, 1, 0, AssertionError),
])
def test_a_statement_that_can_raise_after_a_write_keeps_the_copy(f, good, bad, error):
    x0 = np.arange(1.0, 5.0)
    j = _jit(f)
    x = x0.copy()
    with pytest.raises(error):
        j(x, bad)
    assert x.tolist() == x0.tolist()               # the failed call wrote nothing
    x, y = x0.copy(), x0.copy()
    assert j(x, good) == f(y, good)
    _same(x, y)                                    # the call that returns writes as NumPy


@pytest.mark.parametrize("f, make", [c for c in CASES if c[0] in (leapfrog, rank_one_update,
                                                                  update_and_return)],
                         ids=["leapfrog", "rank_one_update", "update_and_return"])
def test_a_loop_computing_an_arguments_final_value_writes_into_it(f, make):
    """`pos += vel * dt`: the fused loop writes into pos itself, with no fresh array and no
    copy back at the end."""
    j = _jit(f)
    j(*make())
    src = j.jitted.source
    assert ".copy()" not in src and "[...] = " not in src, src
    main = src.split("def ")[-1]
    written = {leapfrog: ["pos", "vel"], rank_one_update: ["A", "x"], update_and_return: ["x"]}
    for a in written[f]:        # the loop's output is the argument itself
        assert re.search(rf"^\s*{a}_\d+ = {a}$", main, re.M), (a, src)


def test_put_with_a_bad_index_raises_before_writing_in_place():
    """np.put checks every index before its first write, so the argument is written in place
    and a bad index (anywhere in the list) leaves it as it was."""
    j = _jit(put_then_count)
    x0 = _rng(24).standard_normal((4, 3))
    for bad in (np.array([0, 5, 12]), np.array([1, 2, 3, -13]), np.arange(20)):
        x = x0.copy()
        with pytest.raises(IndexError):
            j(x, bad, 0.0)
        assert np.array_equal(x, x0)
    assert ".copy()" not in j.jitted.source


def driven_field(steps, u, source):
    """An fdtd-style update: u's first row driven by source[t] on step t."""
    for t in range(steps):
        u[0, :] = source[t]
        u[1:, :] += 0.5 * (u[:-1, :] - u[1:, :])


def driven_ahead(steps, u, source):
    for t in range(1, steps):
        u[:, 0] = source[t - 1] + source[t + 1]
        u[:, 1:] -= 0.25 * u[:, :-1]


def stops_early(steps, u, source):
    for t in range(steps):
        if source[t] < 0.0:         # leaves before reading past the end
            break
        u += source[t]


def test_loop_reads_checked_once_so_arguments_are_written_in_place():
    """`source[t]` over range(steps): steps is checked against source's length once before
    the loop, so nothing in the loop can raise and u is written in place; steps past the end
    raises NumPy's IndexError at the user's line and leaves u as it was."""
    r = _rng(30)
    for f, good, bad in ((driven_field, 4, 5), (driven_ahead, 3, 4)):
        j = _jit(f)
        u0, source = r.standard_normal((5, 6)), r.standard_normal(4)
        x, y = u0.copy(), u0.copy()
        j(good, x, source)
        f(good, y, source)
        _same(x, y)
        assert ".copy()" not in j.jitted.source, j.jitted.source
        x = u0.copy()
        with pytest.raises(IndexError, match="out of bounds") as info:
            j(bad, x, source)
        assert "test_inplace_arguments.py" in str(info.value)
        assert np.array_equal(x, u0)


def read_then_stop(steps, u, source):
    for t in range(steps):
        v = source[t]               # read at the top, then the break
        if v < 0.0:
            break
        u += v


def returns_inside(steps, u, source):
    for t in range(steps):
        u += source[t]
        if t == 2:
            return u.sum()
    return -1.0


@pytest.mark.parametrize("f", [stops_early, read_then_stop, returns_inside])
def test_a_loop_that_may_leave_before_a_bad_read_is_not_checked_ahead(f):
    j = _jit(f)
    source = np.array([0.5, 0.25, -1.0])
    x, y = np.ones(3), np.ones(3)
    got = j(10, x, source)          # NumPy leaves before reading past the end: no IndexError
    assert got == f(10, y, source)
    _same(x, y)


def raise_before_writes(x, i):
    v = x[i] * 1.0                                 # can raise: before any write
    x[...] = x * 2.0
    return v


def test_raising_before_the_first_write_still_writes_in_place():
    j = _jit(raise_before_writes)
    x = np.arange(4.0)
    assert j(x, 3) == 3.0 and x.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert ".copy()" not in j.jitted.source
    with pytest.raises(IndexError):
        j(x, 7)
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0]


# ------------------------------------------------------------------ Numba forms -------------


@pytest.mark.parametrize("shape, shift, axis", [
    ((5, 7), 1, 0), ((5, 7), -1, 0), ((5, 7), 3, 1), ((5, 7), -9, 1), ((4, 3, 6), 2, -1),
    ((4, 3, 6), 5, 1), ((6,), 4, 0),
])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_roll_along_an_axis_equals_numpy(shape, shift, axis, dtype):
    def f(u):
        return np.roll(u, shift, axis=axis) + 2 * u

    x = (_rng(7).standard_normal(shape) * 10).astype(dtype)
    _same(_jit(f)(x), f(x))


def rolls_in_one_loop(u, v):
    a = np.roll(u * 2.0, 1, axis=0) + v             # rolls an array made in the loop itself
    b = np.roll(v, 13, axis=1) - np.roll(v, 0, axis=0) + np.roll(u, -2, axis=-1)
    return a * b, np.roll(a, 3, axis=1).sum(axis=1)


def test_rolls_fused_into_loops_equal_numpy():
    r = _rng(12)
    for shape in [(5, 7), (4, 4), (9, 3)]:
        u, v = r.standard_normal(shape), r.standard_normal(shape)
        for g, w in zip(_jit(rolls_in_one_loop)(u, v), rolls_in_one_loop(u, v)):
            _same(g, w)


@pytest.mark.parametrize("shape, axis", [((9, 4, 5), 0), ((4, 9, 5), 1), ((3, 6), 0),
                                         ((16, 3), 0), ((17, 3), 0)])
@pytest.mark.parametrize("kind", ["float", "nan", "int", "ties"])
def test_sort_along_a_short_axis_equals_numpy(shape, axis, kind):
    def f(st):
        return np.sort(st, axis=axis)

    r = _rng(8)
    x = r.standard_normal(shape)
    if kind == "nan":
        x[r.random(shape) < 0.3] = np.nan
        x[r.random(shape) < 0.1] = -np.inf
    elif kind == "int":
        x = r.integers(-5, 5, shape)
    elif kind == "ties":
        x = np.round(x)
    _same(_jit(f)(x), f(x), exact=True)


def test_median_of_shifts_equals_numpy():
    def median3(img):
        h, w = img.shape
        shifts = []
        for di in range(3):
            for dj in range(3):
                shifts.append(img[di:h - 2 + di, dj:w - 2 + dj])
        return np.sort(np.stack(shifts), axis=0)[4]

    x = _rng(9).random((12, 9))
    _same(_jit(median3)(x), median3(x), exact=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("n", [1, 10, 600_000])
def test_cumsum_of_a_vector_equals_numpy(dtype, n):
    def f(x, k):
        c = np.cumsum(x)
        out = c[k - 1:].copy()
        out[1:] = c[k:] - c[:-k]
        return out, np.cumprod(x[:5])

    x = (_rng(10).standard_normal(n) * 5).astype(dtype)
    k = 1 if n < 3 else 3
    got, want = _jit(f)(x, k), f(x, k)
    _same(got[0], want[0])
    _same(got[1], want[1])


# ------------------------------------------------------------------ huge pages --------------


def bitwise(a, b):
    c = (a & b) | (a ^ b)
    d = ~a & 0xFF
    return c, d, (a << 2) >> 1, np.sqrt(a * 1.0)


def test_large_fresh_results_equal_numpy_and_use_huge_pages():
    r = _rng(11)
    a, b = r.integers(0, 1 << 20, 1_000_000), r.integers(0, 1 << 20, 1_000_000)
    j = _jit(bitwise)
    for g, w in zip(j(a, b), bitwise(a, b)):
        _same(g, w)
    assert "large_pages(" in j.jitted.source
    small = _jit(bitwise)
    for g, w in zip(small(a[:10], b[:10]), bitwise(a[:10], b[:10])):
        _same(g, w)


@pytest.mark.parametrize("shape, axis", [((7, 3), 0), ((7, 3), 1), ((4, 5, 6), 1), ((4, 5, 6), -1)])
def test_cumsum_and_cumprod_along_an_axis_equal_numpy(shape, axis):
    def f(x):
        return np.cumsum(x, axis=axis), np.cumprod(x, axis=axis)

    x = _rng(16).standard_normal(shape)
    for g, w in zip(_jit(f)(x), f(x)):
        _same(g, w)
    xi = _rng(17).integers(-3, 4, shape)
    for g, w in zip(_jit(f)(xi), f(xi)):
        _same(g, w)


def reverse_into(x, y):
    y[...] = x[::-1] * 2.0


def diffuse_1d(u, tmp, steps):
    for n in range(steps):
        tmp[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[:] = tmp[:]


def test_arguments_that_share_memory_run_the_function_itself():
    """The same array (or overlapping views) passed twice to a function that writes into its
    arguments: transformed code treats each argument as its own array (its NumPy version too),
    so such a call runs the plain function (NumPy's numbers) with a warning; a transform of it
    is refused. Apart, the arguments are written in place as before."""
    j = jit(reverse_into)
    a, b = np.arange(6.0), np.arange(6.0)
    reverse_into(a, a)
    with pytest.warns(TranspileWarning, match="share memory"):
        j(b, b)
    _same(b, a)
    a, b = np.arange(10.0), np.arange(10.0)
    reverse_into(a[2:], a[:8])
    j(b[2:], b[:8])                  # (warned once per function)
    _same(b, a)
    x, z = np.arange(10.0), np.zeros(10)          # apart: in place, compiled
    _jit(reverse_into)(x, z)
    _same(z, np.arange(10.0)[::-1] * 2.0)
    u = _rng(18).random(12)
    w = u.copy()
    diffuse_1d(u, u, 3)
    with pytest.warns(TranspileWarning, match="share memory"):
        jit(diffuse_1d)(w, w, 3)
    _same(w, u)

    def shift(u, v):           # the functional NumPy version gives other numbers here
        u[1:] = v[:-1] * 2.0
        u[0] = v[-1]
    a, b = np.arange(6.0), np.arange(6.0)
    shift(a, a)
    for backend in ("cpu", "numpy"):
        c = np.arange(6.0)
        with pytest.warns(TranspileWarning, match="share memory"):
            jit(shift, backend=backend)(c, c)
        _same(c, a)

    def loss(u, v):
        shift(u, v)
        return np.sum(u * v)
    from transpile import grad
    c = np.arange(6.0)
    with pytest.raises(TranspileError, match="share memory"):
        grad(loss)(c, c)
    with pytest.raises(TranspileError, match="share memory"):
        jit(grad(loss))(c, c)


# ---- an argument's final value written into it: views and aliases of it read nearby ----------

def standardize_columns(x):
    x -= x.mean(axis=0)
    x /= x.std(axis=0)


def add_transpose(A):
    A += A.T                      # NumPy reads A.T before writing (overlap detection)


def keep_old_then_update(x, y):
    v = x * 2
    x += y
    return v, x.sum()


def alias_then_update(x):
    t = x                         # t is x: it sees the update
    x += 1.0
    return t * 2


def update_each_other(x, y):
    x += y
    y += x


def reversed_in_a_loop(x, n):
    for i in range(n):
        x += x[::-1] * 0.5


def scale_then_shift(x):
    x *= 2.0
    x[1:] = x[:-1]
    return x


ALIASING = [
    (standardize_columns, lambda: (_rng(40).standard_normal((50, 3)),)),
    (add_transpose, lambda: (_rng(41).standard_normal((6, 6)),)),
    (keep_old_then_update, lambda: (_rng(42).standard_normal((4, 5)), _rng(43).standard_normal(5))),
    (alias_then_update, lambda: (_rng(44).standard_normal(5),)),
    (update_each_other, lambda: (_rng(45).standard_normal(7), _rng(46).standard_normal(7))),
    (reversed_in_a_loop, lambda: (_rng(47).standard_normal(8), 3)),
    (scale_then_shift, lambda: (_rng(48).standard_normal(8),)),
]


@pytest.mark.parametrize("f, make", ALIASING, ids=[c[0].__name__ for c in ALIASING])
def test_final_values_with_views_and_aliases_equal_numpy(f, make):
    want_args, got_args = make(), make()
    want = f(*want_args)
    got = _jit(f)(*got_args)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            _same(g, w)
    if want is not None:
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            _same(g, w)
