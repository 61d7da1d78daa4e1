"""Rows for functions other people's kernels call (transpile/primitives/numpy/ufunc_methods.py,
histograms.py, flat_indices.py, array_logic.py, nan_reductions.py, builtin_numbers.py and
friends): builtins complex() and round(), ufunc methods (accumulate, outer, reduce, at),
np.histogram, np.diff's prepend/append, np.unravel_index / np.ravel_multi_index, np.isin,
the nan-reductions, np.allclose / np.array_equal, np.float_power, np.inner and np.vdot.

Each compiles under jit (no NumPy fallback: a TranspileWarning fails the test) and gives
NumPy's numbers and dtypes (integers exactly); grad and jit(grad) agree with central
differences where the function is differentiable; vmap agrees with a loop where natural.
"""
import numpy as np
import pytest

from transpile import TranspileError, grad, jit, vmap

from fd import numerical_grad

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")

RNG = np.random.default_rng(22)


def compiled(f, *args):
    """f under jit, checked to run compiled; returns (jit result, plain result)."""
    j = jit(f, wait=True)
    got = j(*args)
    assert j.last_tier == "compiled"
    return got, f(*args)


def same(got, want, exact=True):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) or isinstance(w, np.ndarray) or (
            isinstance(g, np.generic) and isinstance(w, np.generic)), (type(g), type(w))
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def check_grad(loss, args, argnum=0, tol=1e-6):
    want = numerical_grad(loss, args, argnum)
    g1 = grad(loss, argnums=argnum)(*args)
    jg = jit(grad(loss, argnums=argnum), wait=True)
    g2 = jg(*args)
    assert jg.last_tier == "compiled"
    np.testing.assert_allclose(g1, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(g2, want, rtol=tol, atol=tol)


# ---- complex(a, b) -------------------------------------------------------------------------------

def mandel_row(xs, y, maxit):
    out = np.zeros(xs.shape[0], dtype=np.int64)
    for i in range(xs.shape[0]):
        c = complex(xs[i], y)
        z = 0j
        n = 0
        while abs(z) <= 2 and n < maxit:
            z = z * z + c
            n += 1
        out[i] = n
    return out


def complex_loss(a, b):
    z = complex(a, b)
    w = z * z + complex(b, 0.5) * z
    return abs(w) + w.real * w.imag


def test_complex_builds_a_complex_scalar():
    xs = np.linspace(-2.0, 1.0, 40)
    same(*compiled(mandel_row, xs, 0.3, 60))
    got, want = compiled(complex_loss, 0.3, -0.7)
    assert type(got) is type(want) and abs(got - want) < 1e-12
    for argnum in (0, 1):
        check_grad(complex_loss, [0.3, -0.7], argnum)


# ---- round(x), round(x, n) -------------------------------------------------------------------------

def rounds(x, p):
    return (round(x[0]), round(x[1]), round(x[2]), round(x[3]), round(x[4], 2),
            round(x[5], -1), round(p), round(p, 2), round(x[6], 0))


def test_round_builtin_half_to_even_and_types():
    x = np.array([0.5, 1.5, 2.5, -2.5, 2.675, 25.0, 1.25])
    got, want = compiled(rounds, x, 2.675)        # a Python float: Python's decimal rounding
    same(got, want)
    assert [type(v) for v in got] == [type(v) for v in want]
    assert got[0] == 0 and got[2] == 2 and got[7] == 2.67 and got[4] == want[4]
    x32 = x.astype(np.float32)
    same(*compiled(rounds, x32, 0.125))


def round_first(x):
    return round(x[0])


def test_round_to_int_raises_where_no_int64_holds_it():
    for v, error in ((np.nan, ValueError), (np.inf, OverflowError)):
        with pytest.raises(error):
            round_first(np.array([v]))
        with pytest.raises(error):
            jit(round_first, wait=True)(np.array([v]))
    assert round_first(np.array([1e300])) > 2 ** 900        # Python: a big int
    with pytest.raises(OverflowError, match="2\\*\\*63"):
        jit(round_first, wait=True)(np.array([1e300]))


def test_round_of_ints_and_under_vmap():
    def f(k, x):
        return round(k) + round(x[0] * 10.0)
    same(*compiled(f, 7, np.array([0.35])))
    xs = np.array([0.5, 1.5, 2.4, -0.5])
    got = vmap(lambda v: round(v * 3.0))(xs)
    np.testing.assert_array_equal(got, [round(v * 3.0) for v in xs])


# ---- ufunc.accumulate -------------------------------------------------------------------------------

def accumulates(x, X):
    return (np.maximum.accumulate(x), np.minimum.accumulate(x), np.add.accumulate(x),
            np.multiply.accumulate(x), np.maximum.accumulate(X, axis=1),
            np.minimum.accumulate(X), np.add.accumulate(X, axis=1),
            np.multiply.accumulate(X, axis=0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8"])
def test_accumulate_matches_numpy(dtype):
    if dtype.startswith("int"):
        x = RNG.integers(-9, 9, 7).astype(dtype)
        X = RNG.integers(-5, 5, (3, 4)).astype(dtype)
    else:
        x = RNG.normal(size=7).astype(dtype)
        X = RNG.normal(size=(3, 4)).astype(dtype)
    same(*compiled(accumulates, x, X), exact=dtype != "float32")


def test_maximum_accumulate_propagates_nan():
    x = np.array([1.0, np.nan, 3.0, 0.5])
    same(*compiled(lambda v: (np.maximum.accumulate(v), np.minimum.accumulate(v)), x))


def acc_loss(x, w):
    return np.sum(w * np.maximum.accumulate(x)) + np.sum(np.minimum.accumulate(x * x) ** 2) + \
        np.sum(np.multiply.accumulate(x * 0.5 + 2.0) * w) + np.sum(np.add.accumulate(x) ** 2)


def acc_loss_axis(X):
    return np.sum(np.maximum.accumulate(X, axis=1) * np.arange(1.0, 5.0)) + \
        np.sum(np.minimum.accumulate(X, axis=0) ** 3)


def test_accumulate_gradients_match_differences():
    x = (RNG.permutation(7) - 3.0) * 0.37 + 0.01
    check_grad(acc_loss, [x, RNG.normal(size=7)])
    X = ((RNG.permutation(12) - 6.0) * 0.29 + 0.02).reshape(3, 4)
    check_grad(acc_loss_axis, [X])


def test_accumulate_under_vmap():
    X = RNG.normal(size=(4, 6))
    got = vmap(lambda v: np.maximum.accumulate(v) + np.add.accumulate(v))(X)
    want = np.stack([np.maximum.accumulate(v) + np.add.accumulate(v) for v in X])
    np.testing.assert_allclose(got, want)


# ---- ufunc.outer and ufunc.reduce ---------------------------------------------------------------

def outers(a, b, M):
    return (np.add.outer(a, b), np.multiply.outer(a, b), np.subtract.outer(a, b),
            np.maximum.outer(a, b), np.add.outer(M, b), np.add.reduce(M), np.add.reduce(M, axis=1),
            np.maximum.reduce(M, axis=1), np.multiply.reduce(a), np.minimum.reduce(M))


def test_outer_and_reduce_match_numpy():
    a, b, M = RNG.normal(size=3), RNG.normal(size=4), RNG.normal(size=(2, 3))
    same(*compiled(outers, a, b, M), exact=False)
    ai, bi, Mi = (RNG.integers(-5, 5, s).astype(np.int32) for s in ((3,), (4,), (2, 3)))
    same(*compiled(outers, ai, bi, Mi))


def outer_loss(a, b):
    return np.sum(np.sin(np.add.outer(a, b)) * np.multiply.outer(a, b)) + \
        np.sum(np.subtract.outer(a, b) ** 2) + np.sum(np.add.reduce(np.multiply.outer(a, a)))


def test_outer_gradients_match_differences():
    a, b = RNG.normal(size=3), RNG.normal(size=4)
    check_grad(outer_loss, [a, b], 0)
    check_grad(outer_loss, [a, b], 1)


# ---- ufunc.at -------------------------------------------------------------------------------------

def scatter(A, rows, cols, v, idx):
    np.add.at(A, (rows, cols), v)
    hi = np.zeros(5)
    np.maximum.at(hi, idx, v)
    lo = np.full(5, 10.0)
    np.minimum.at(lo, idx, v)
    return hi, lo


def test_ufunc_at_with_index_tuples_and_extrema():
    rows, cols, idx = np.array([0, 2, 0, 1]), np.array([1, 3, 1, 0]), np.array([1, 4, 1, 0])
    v = np.array([1.5, -2.0, 3.25, 0.5])
    A1, A2 = np.zeros((3, 4)), np.zeros((3, 4))
    j = jit(scatter, wait=True)
    got = j(A1, rows, cols, v, idx)
    assert j.last_tier == "compiled"
    want = scatter(A2, rows, cols, v, idx)
    same(got, want)
    np.testing.assert_array_equal(A1, A2)      # the argument written as NumPy writes it
    assert A1[0, 1] == 4.75                      # repeated index: both added


ROWS, COLS = np.array([0, 2, 0, 1]), np.array([1, 3, 1, 0])


def scatter_loss(v):
    A = np.zeros((3, 4))
    np.add.at(A, (ROWS, COLS), v * v)
    return np.sum(A * np.arange(12.0).reshape(3, 4))


def test_add_at_tuple_gradient():
    check_grad(scatter_loss, [RNG.normal(size=4)])


# ---- np.histogram -----------------------------------------------------------------------------------

def hists(x, edges):
    h1, e1 = np.histogram(x, bins=5)
    h2, e2 = np.histogram(x, bins=4, range=(0.0, 1.0))
    h3, e3 = np.histogram(x, bins=edges)
    h4, e4 = np.histogram(x)
    return h1, e1, h2, e2, h3, e3, h4, e4


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_histogram_matches_numpy(dtype):
    if dtype == "int64":
        x = RNG.integers(0, 2, 40)
        edges = np.array([0.0, 0.5, 1.0])
    else:
        # values on the edges: 0.25, 0.5 (inner edges), 1.0 (the closed end of the last bin)
        x = np.concatenate([RNG.random(60), [0.0, 0.25, 0.5, 1.0, 0.2, 0.8]]).astype(dtype)
        edges = np.array([0.0, 0.2, 0.5, 0.8, 1.0])
    got, want = compiled(hists, x, edges)
    same(got, want)
    assert got[0].dtype == np.int64


def test_histogram_edges_and_errors():
    x = np.array([1.0, 1.0, 1.0])          # one value: NumPy widens the range by 0.5
    same(*compiled(lambda v: np.histogram(v, bins=3), x))
    y = np.array([0.1, np.nan, 0.7])
    same(*compiled(lambda v: np.histogram(v, bins=2, range=(0.0, 1.0)), y))  # NaN not counted
    with pytest.raises(ValueError, match="not finite"):
        jit(lambda v: np.histogram(v, bins=2), wait=True)(y)
    with pytest.raises(ValueError, match="monotonically"):
        jit(lambda v, e: np.histogram(v, bins=e), wait=True)(x, np.array([0.0, 2.0, 1.0]))


# ---- np.diff(prepend=, append=) -----------------------------------------------------------------------

def diffs(x, p, X):
    return (np.diff(x, prepend=0.0), np.diff(x, append=x[-1:]), np.diff(x, 2, prepend=p,
            append=3.0), np.diff(X, axis=0, prepend=X[:1]), np.diff(X, prepend=1.5))


def test_diff_prepend_append_match_numpy():
    x, p, X = RNG.normal(size=5), RNG.normal(size=2), RNG.normal(size=(3, 4))
    same(*compiled(diffs, x, p, X))
    xi = RNG.integers(-9, 9, 5)
    same(*compiled(lambda v: np.diff(v, prepend=0), xi))


def diff_loss(x, p):
    d = np.diff(x, prepend=p, append=2.0)
    return np.sum(d ** 3) + np.sum(np.diff(x * x, prepend=0.5) * np.arange(5.0))


def test_diff_prepend_gradients():
    x, p = RNG.normal(size=5), RNG.normal(size=2)
    check_grad(diff_loss, [x, p], 0)
    check_grad(diff_loss, [x, p], 1)


# ---- np.unravel_index, np.ravel_multi_index --------------------------------------------------------

def indices(X, flat):
    i, j = np.unravel_index(np.argmax(X), X.shape)
    r, c = np.unravel_index(flat, X.shape)
    return (i, j, r, c, np.ravel_multi_index((r, c), X.shape),
            np.ravel_multi_index((1, 2), (3, 4)), np.unravel_index(7, (2, 2, 3)))


def test_unravel_and_ravel_multi_index():
    X = RNG.normal(size=(3, 4))
    got, want = compiled(indices, X, np.array([0, 5, 11, 6]))
    same(got[:5], want[:5])
    # (all-constant calls are folded while generating code: the same numbers, as Python ints)
    assert got[5] == want[5] and tuple(got[6]) == tuple(want[6])
    with pytest.raises(ValueError, match="out of bounds"):
        jit(indices, wait=True)(X, np.array([0, 12]))
    with pytest.raises(ValueError, match="invalid entry"):
        jit(lambda r, c: np.ravel_multi_index((r, c), (3, 4)), wait=True)(np.array([1, 3]),
                                                                       np.array([0, 0]))


# ---- np.triu_indices, np.tril_indices -------------------------------------------------------------

def lj_energy(pos, eps, sigma):
    """Lennard-Jones energy over the pairs of the upper triangle."""
    i, j = np.triu_indices(pos.shape[0], k=1)
    d = pos[i] - pos[j]
    r2 = np.sum(d * d, axis=1)
    s6 = (sigma * sigma / r2) ** 3
    return np.sum(4 * eps * (s6 * s6 - s6))


def triangles(X, n):
    r, c = np.tril_indices(n, -1, n + 1)
    a = np.triu_indices(4)
    u = np.triu_indices(n, 2, 3)
    return X[r, c], a[0], a[1], u[0], u[1], np.tril_indices(3, k=1)[1]


def test_triu_and_tril_indices():
    X = RNG.normal(size=(6, 7))
    for n in (6, 4, 1):
        same(*compiled(triangles, X, n))
    pos = RNG.random((7, 3)) * 3
    got, want = compiled(lj_energy, pos, 1.0, 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    check_grad(lj_energy, [pos, 1.0, 0.5], 0)
    P = RNG.random((3, 7, 3)) * 3
    np.testing.assert_allclose(vmap(lj_energy, in_axes=(0, None, None))(P, 1.0, 0.5),
                               [lj_energy(p, 1.0, 0.5) for p in P], rtol=1e-13)


# ---- np.isin ---------------------------------------------------------------------------------------

def isins(a, b, F, t):
    return np.isin(a, b), np.isin(a, b, invert=True), np.sum(np.isin(a, b)), np.isin(F, t)


def test_isin_matches_numpy():
    a = RNG.integers(0, 10, 20)
    F = np.array([[0.5, np.nan], [1.0, 2.0]])
    same(*compiled(isins, a, np.array([1, 3, 5, 3]), F, np.array([np.nan, 1.0, 7.0])))


# ---- nan-reductions ----------------------------------------------------------------------------------

def nans(x):
    return (np.nanmean(x), np.nanstd(x), np.nanvar(x), np.nanmax(x), np.nanmin(x),
            np.nanargmax(x), np.nanargmin(x), np.nanprod(x), np.nancumsum(x), np.nansum(x))


def nans_axis(X):
    return (np.nanmean(X, axis=1), np.nanmax(X, axis=0, keepdims=True), np.nanmin(X, axis=-1),
            np.nanstd(X, axis=0, ddof=1), np.nanvar(X, axis=1), np.nansum(X, axis=0),
            np.nanprod(X, axis=1), np.nanargmax(X, axis=1), np.nanargmin(X, axis=0),
            np.nanmean(X, keepdims=True))


def test_nan_reductions_match_numpy():
    x = RNG.normal(size=9)
    x[[1, 4]] = np.nan
    same(*compiled(nans, x), exact=False)
    X = RNG.normal(size=(3, 4))
    X[0, 1] = X[2, 2] = np.nan
    same(*compiled(nans_axis, X), exact=False)


@pytest.mark.parametrize("fn", ["nanmean", "nanstd", "nanvar", "nanmax", "nanmin", "nanprod",
                                "nancumsum"])
def test_nan_reduction_gradients(fn):
    f = getattr(np, fn)

    def loss(x):
        y = np.where(x > 0.6, np.nan, x)
        return np.sum(f(y) * 1.5)
    x = (RNG.permutation(8) - 4.0) * 0.31 + 0.05
    check_grad(loss, [x])


def nanmean_axis_loss(m):
    return np.sum(np.nanmean(m, axis=1) ** 2)


def nanstd_axis_loss(m):
    return np.sum(np.nanstd(m, axis=0, ddof=1) ** 2)


def nanmax_axis_loss(m):
    return np.sum(np.nanmax(m, axis=1, keepdims=True) ** 2)


def test_nan_reductions_along_an_axis_grad_and_vmap():
    X = RNG.normal(size=(3, 4))
    X[0, 1] = np.nan
    for loss in (nanmean_axis_loss, nanstd_axis_loss, nanmax_axis_loss):
        want = numerical_grad(loss, [X])
        np.testing.assert_allclose(grad(loss)(X), want, rtol=1e-6, atol=1e-6)
    got = vmap(lambda v: np.nanmean(v) + np.nanmax(v))(X)
    np.testing.assert_allclose(got, [np.nanmean(v) + np.nanmax(v) for v in X])


# ---- np.allclose, np.array_equal --------------------------------------------------------------------

def closes(a, b, c):
    return (np.allclose(a, b), np.allclose(a, a + 1.0), np.allclose(a, b, atol=0.0, rtol=0.0),
            np.array_equal(a, b), np.array_equal(a, a), np.array_equal(a, c),
            np.allclose(c, np.nan, equal_nan=True), np.array_equal(c, c, equal_nan=True))


def test_allclose_and_array_equal():
    a = RNG.normal(size=5)
    got, want = compiled(closes, a, a + 1e-10, np.array([np.nan, 1.0]))
    assert got == want
    assert all(type(g) is type(w) for g, w in zip(got, want))


# ---- np.float_power, np.inner, np.vdot ---------------------------------------------------------------

def products(x, y, A, B, k):
    return (np.float_power(x, y), np.float_power(x, 2), np.inner(x, y), np.inner(A, B),
            np.inner(A, y), np.inner(x, B), np.vdot(A, B), np.inner(k, k), np.vdot(k, k))


def test_float_power_inner_vdot():
    x, y = RNG.random(4) + 0.5, RNG.normal(size=4)
    A, B = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    same(*compiled(products, x, y, A, B, np.arange(5)), exact=False)
    got, want = compiled(lambda u, v: np.float_power(u, v), x.astype(np.float32),
                         y.astype(np.float32))
    assert got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-15)


def product_loss(x, y, A):
    return np.sum(np.float_power(x, y)) + np.sum(np.inner(A, x) ** 2) + np.vdot(A, A) * np.inner(x, y)


def test_product_gradients():
    x, y, A = RNG.random(4) + 0.5, RNG.normal(size=4), RNG.normal(size=(3, 4))
    for argnum in (0, 1, 2):
        check_grad(product_loss, [x, y, A], argnum)


# ---- np.trapezoid (read from transpile/frontend/numpy_sources.py), np.ascontiguousarray --------

def trapezoids(y, x, Y):
    return (np.trapezoid(y, x), np.trapezoid(y), np.trapezoid(y, dx=0.5),
            np.trapezoid(Y, axis=0), np.trapezoid(Y, x[:4], axis=1),
            np.trapezoid(Y, Y * 2, axis=0), np.trapezoid(np.arange(5)))


def test_trapezoid_matches_numpy_and_differentiates():
    y, x, Y = RNG.random(10), np.sort(RNG.random(10)), RNG.random((3, 4))
    got, want = compiled(trapezoids, y, x, Y)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-13)
    check_grad(lambda y, x: np.trapezoid(y * y, x), [y, x], 0)
    check_grad(lambda y, x: np.trapezoid(y * y, x), [y, x], 1)

    def star_loss(*a):          # x reaches np.trapezoid through *args: `x is None` is known
        return np.trapezoid(np.sin(a[0]), a[1])
    check_grad(star_loss, [y, x], 0)


def contiguous(X):
    Y = np.ascontiguousarray(X[:, ::2])
    return Y.sum(axis=0), np.ascontiguousarray(X) * 2.0, Y.copy()


def test_ascontiguousarray_compiles_and_differentiates():
    X = RNG.random((3, 4))
    same(*compiled(contiguous, X))
    check_grad(lambda X: np.sum(contiguous(X)[0] ** 2) + np.sum(contiguous(X)[1] ** 3), [X], 0)


def cross_torque(r, F):
    t = np.cross(r, F)
    return np.sum(t * t) + np.sum(np.linalg.norm(t, axis=1))


def test_jit_grad_of_cross_compiles():
    """(the 3-entry check of np.cross's derivative was a segment break under jit)"""
    r, F = RNG.random((4, 3)), RNG.random((4, 3))
    check_grad(cross_torque, [r, F], 0)
    check_grad(cross_torque, [r, F], 1)


def apply_fn(fn, x):
    return np.sum(fn(x) * x)


def test_functions_given_as_arguments_are_static():
    """A function passed as an argument (or as a default, `lambda v, f=f: ...`) is known to
    the generated code; another function is another specialization."""
    x = RNG.random(5)
    j = jit(apply_fn, wait=True)
    assert j(np.sin, x) == pytest.approx(apply_fn(np.sin, x), rel=1e-14)
    assert j(np.cos, x) == pytest.approx(apply_fn(np.cos, x), rel=1e-14)
    assert j(np.tanh, x) == pytest.approx(apply_fn(np.tanh, x), rel=1e-14)
    np.testing.assert_allclose(grad(apply_fn, argnums=1)(np.sin, x), np.sin(x) + x * np.cos(x),
                               rtol=1e-14)

    def scaled(v, s):
        return v * s
    loss = lambda v, f=scaled: np.sum(f(v, 2.0) ** 2)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(x), 8.0 * x, rtol=1e-14)


# ---- np.digitize, np.lexsort (our source), x.item(), `with np.errstate(...)` --------------------

def bins_and_keys(x, b, X):
    return (np.digitize(x, b), np.digitize(x, b, right=True), np.digitize(x, b[::-1]),
            np.digitize(x, b[::-1], right=True), np.lexsort((X[:, 1], X[:, 0])),
            np.lexsort([X[:, 0]]), X[np.lexsort((X[:, 0], X[:, 1], X[:, 2]))])


def test_digitize_and_lexsort_match_numpy_ties_included():
    x = np.round(RNG.random(12), 1)
    X = np.round(RNG.random((9, 3)), 1)
    same(*compiled(bins_and_keys, x, np.array([0.2, 0.5, 0.5, 0.8]), X))
    with pytest.raises(ValueError, match="monotonically"):
        jit(bins_and_keys, wait=True)(x, np.array([0.2, 0.1, 0.5]), X)


def items(x, i):
    s = x.sum().item()
    return s * 2.0, x[0].item() + 1.0, i[0].item() * 3, (x > 0)[1].item(), x[:1].item()


def test_item_gives_python_numbers():
    x, i = np.array([0.5, -1.0, 2.0]), np.array([4, 5])
    got, want = compiled(items, x, i)
    assert got == want and [type(g) for g in got] == [type(w) for w in want]
    check_grad(lambda x: items(x, i)[0] * x[1].item() ** 2, [x], 0)


def safe_ratio(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a / b
    r[~np.isfinite(r)] = 0.0
    return r


def test_errstate_blocks_that_change_no_value_compile():
    a, b = np.array([1.0, 0.0, -2.0, 3.0]), np.array([2.0, 0.0, 0.0, 1.0])
    with np.errstate(all="ignore"):
        same(*compiled(safe_ratio, a, b))

    def raising(a):
        with np.errstate(all="raise"):
            return a / 0
    with pytest.raises(TranspileError, match="errstate.*'raise'.* is not supported"):
        jit(raising, wait=True)(a)


# ---- np.tensordot and its derivative: np.dot of the operands made 2-D -----------------------------

def tensordots(A, B, C, D):
    return (np.tensordot(A, B), np.tensordot(A, B, axes=([1, 2], [0, 1])),
            np.tensordot(C, D, axes=([1], [1])), np.tensordot(C, D, axes=(1, 1)),
            np.tensordot(C, D, axes=0), np.tensordot(C, D, axes=2),
            np.tensordot(A, B, axes=([-1], [1])), np.tensordot(C[0], D[0], axes=1))


def test_tensordot_compiles_with_its_derivative():
    A, B = RNG.random((3, 4, 5)), RNG.random((4, 5, 2))
    C, D = RNG.random((3, 4)), RNG.random((3, 4))
    got, want = compiled(tensordots, A, B, C, D)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-13)
    loss = lambda A, B, C, D: sum(np.sum(np.sin(t)) for t in tensordots(A, B, C, D))
    for k in range(4):
        check_grad(loss, [A, B, C, D], k)


# ---- np.gradient with a uniform spacing: its stencil (and the stencil's transpose) compiled -------

def gradients(f1, F, h):
    return (np.gradient(f1), np.gradient(f1, 0.1), np.gradient(f1, h, edge_order=2),
            np.gradient(F, axis=1), np.gradient(F, 0.5, axis=0, edge_order=2),
            np.gradient(np.arange(5)), np.gradient(F.astype(np.float32), axis=-1),
            np.gradient(f1[:2]))


def test_gradient_compiles_with_its_derivative():
    f1, F = RNG.random(7), RNG.random((4, 5))
    got, want = compiled(gradients, f1, F, 0.3)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6 if g.dtype == np.float32 else 1e-13)
    loss = lambda f1, F: sum(np.sum(np.sin(t)) for t in gradients(f1, F, 0.3)[:6])
    check_grad(loss, [f1, F], 0)
    check_grad(loss, [f1, F], 1)


# ---- np.polyfit (our source, through np.linalg.lstsq), np.polyval (Horner) ---------------------

def poly_fits(x, y, Y):
    return np.polyfit(x, y, 2), np.polyfit(x, Y, 1), np.polyval(np.polyfit(x, y, 3), x), \
        np.polyval(np.array([2, -1, 3]), np.arange(4)), np.polyval(y[:3], 0.5)


def test_polyfit_and_polyval_compile_with_their_derivatives():
    x, y, Y = np.linspace(0, 1, 8), RNG.random(8), RNG.random((8, 2))
    got, want = compiled(poly_fits, x, y, Y)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-10)
    check_grad(lambda y: np.sum(np.polyfit(x, y, 2) ** 2), [y], 0)
    check_grad(lambda p, x: np.sum(np.sin(np.polyval(p, x))), [y[:4], x], 0)
    check_grad(lambda p, x: np.sum(np.sin(np.polyval(p, x))), [y[:4], x], 1)


# ---- np.block (our source: two levels of lists) ---------------------------------------------------

def blocks(A, v):
    Z = np.zeros_like(A)
    return (np.block([[A, Z], [Z, A]]), np.block([v, v * 2]), np.block([[A], [A * 2]]),
            np.block([[A, np.ones((2, 1))]]), np.block([[1.0, 2.0], [3.0, 4.0]]),
            np.block([1, 2.5, v[0]]), np.block([[1, 2], [3, 4]]))


def test_block_matches_numpy_and_differentiates():
    A, v = RNG.random((2, 2)), RNG.random(3)
    got, want = compiled(blocks, A, v)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    check_grad(lambda A: np.sum(np.sin(np.block([[A, A.T], [A * 2, A]]))), [A], 0)


# ---- np.ndarray(shape, dtype): a buffer as np.empty makes it (npbench's vadv) --------------------

def tridiagonal_sweep(a, d):
    n = d.shape[0]
    c = np.ndarray((n, d.shape[1]), dtype=d.dtype)     # every row written before it is read
    e = np.ndarray(d.shape, d.dtype)
    c[0] = a / 2.0
    e[0] = d[0] / 2.0
    for k in range(1, n):
        m = 1.0 / (2.0 - a * c[k - 1])
        c[k] = a * m
        e[k] = (d[k] + a * e[k - 1]) * m
    return e


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ndarray_constructor_is_an_empty_buffer(dtype):
    """np.ndarray((n, m), dtype=...) had no rule (NoRuleError)."""
    d = RNG.random((5, 3)).astype(dtype)
    got, want = compiled(tridiagonal_sweep, 0.5, d)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)
    if dtype == np.float64:
        want = numerical_grad(lambda x: np.sum(tridiagonal_sweep(0.5, x) ** 2), [d.copy()])
        np.testing.assert_allclose(grad(lambda x: np.sum(tridiagonal_sweep(0.5, x) ** 2))(d),
                                   want, rtol=1e-6, atol=1e-8)
