"""Issue 22: jit(grad) compiles the adjoint helpers that its rules call (rt.expand_last,
np.average's weights laid along an axis and back, Cholesky's rt.phi / rt.sym /
rt.tri_read_t / rt.check_real_linalg, rt.abs_factor of a complex value) and complex constants in
fused loops. Each is checked against central finite differences in float64 with any fallback
to NumPy raised as an error (a TranspileWarning here fails the test)."""
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit, vmap
from transpile.errors import TranspileWarning


def _strict(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return fn(*args)


def check(loss, args, argnum=0, rtol=1e-6, atol=1e-7):
    want = numerical_grad(loss, [a.copy() if isinstance(a, np.ndarray) else a for a in args],
                          argnum)
    got = _strict(jit(grad(loss, argnums=argnum)), *args)
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _spd(n, seed):
    r = np.random.default_rng(seed)
    m = r.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


# ---- rt.expand_last (the cotangent of np.linalg.det) -------------------------------------------

def det_loss(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x ** 2) + np.linalg.det(A)


def test_det_and_solve():
    r = np.random.default_rng(1)
    check(det_loss, [r.standard_normal((3, 3)) + 3 * np.eye(3), r.standard_normal(3)])


def slogdet_loss(A):
    sign, logdet = np.linalg.slogdet(A)
    return logdet * 2.0 + np.sum(np.linalg.inv(A))


def test_slogdet():
    check(slogdet_loss, [_spd(4, 2)])


# ---- np.average's weights along an axis -------------------------------------------------------

def average_cols(X, w):
    return np.sum(np.average(X, axis=0, weights=w) ** 2)


def average_rows(X, w):
    return np.sum(np.sin(np.average(X, axis=1, weights=w)))


def average_last(X, w):
    return np.sum(np.average(X, axis=-1, weights=w) ** 3)


@pytest.mark.parametrize("loss, xshape, wshape", [
    (average_cols, (5, 3), (5,)), (average_rows, (4, 6), (6,)),
    (average_last, (3, 2, 4), (4,))])
@pytest.mark.parametrize("argnum", [0, 1])
def test_average_with_weights_along_axes(loss, xshape, wshape, argnum):
    r = np.random.default_rng(3)
    check(loss, [r.standard_normal(xshape), r.random(wshape) + 0.2], argnum)


# ---- Cholesky: rt.phi, rt.sym, rt.tri_read_t, rt.check_real_linalg -----------------------------

def cholesky_loss(A, b):
    L = np.linalg.cholesky(A)
    return np.sum(L ** 2) + np.sum(np.linalg.solve(L, b) * b)


def test_cholesky():
    check(cholesky_loss, [_spd(4, 4), np.arange(4.0) - 1.5])


# ---- complex values inside, real parameters ---------------------------------------------------

def complex_loss(theta, r):
    z = r * np.exp(1j * theta)
    w = z * z + 1.0
    return np.sum(w.real * w.imag) + np.abs(w).sum()


@pytest.mark.parametrize("argnum", [0, 1])
def test_complex_intermediates_real_gradient(argnum):
    r = np.random.default_rng(6)
    check(complex_loss, [r.random(5) * 6.0, r.random(5) + 0.5], argnum)


def complex_scalar_factor(x):
    return np.sum(np.abs(x * (2.0 - 1.5j)) + np.real(np.exp(0.5j * x)))


def test_complex_constant_and_abs_of_a_complex_value():
    check(complex_scalar_factor, [np.linspace(-1.0, 2.0, 7)])


def test_complex_constant_under_plain_jit():
    x = np.linspace(-1.0, 2.0, 7)
    got = _strict(jit(lambda_free), x)
    want = lambda_free(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def lambda_free(x):
    return np.exp(1j * x) * (0.5 - 2j) + x


# ---- rt.written_part: the cotangent of a write through an integer array -----------------------

def write_repeated(x):
    t = x * 1.0
    it = np.array([1, -3, 2, 1])         # element 1 twice: NumPy keeps the last value written
    t[it] = np.sin(x[:4]) * 2.0
    return np.sum(t * t)


def add_repeated(x):
    t = x * 1.0
    it = np.array([0, 2, -4])            # 0 and -4 name one element: += adds once
    t[it] += x[:3] * x[1:]
    return np.sum(np.sin(t))


def write_rows(x):
    A = np.outer(x, x) * 1.0
    A[np.array([2, 0, 2])] = np.cos(A[:3]) * 2.0
    return np.sum(A * A)


def write_columns(x):
    A = np.outer(x, x) * 1.0
    A[1:3, np.array([2, 0, 2])] = np.cos(A[:2, :3]) * 2.0     # column 2 twice
    return np.sum(A * A)


@pytest.mark.parametrize("loss", [write_repeated, add_repeated, write_rows, write_columns])
def test_write_through_an_integer_array(loss):
    check(loss, [np.array([0.34, -1.38, 0.82, 1.30])])


@pytest.mark.parametrize("loss", [write_repeated, add_repeated, write_rows, write_columns])
def test_write_through_an_integer_array_under_vmap(loss):
    x = np.array([0.34, -1.38, 0.82, 1.30])
    X = np.stack([x, 0.5 * x - 0.1, x + 0.3])
    want = np.stack([numerical_grad(loss, [row.copy()]) for row in X])
    got = _strict(jit(vmap(grad(loss))), X.copy())
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# ---- np.fill_diagonal as a statement ----------------------------------------------------------

def fill_then_sum(x):
    A = np.outer(x, x) + 1.0
    np.fill_diagonal(A, x[0] * 2.0)
    return np.sum(np.sin(A))


def fill_tall(x):
    B = np.stack([x, x * 2.0, x - 1.0, x * x])      # 4 x 3: the first 3 rows get their element
    np.fill_diagonal(B, 0.0)
    return B


def test_fill_diagonal_under_jit():
    x = np.array([0.3, -1.2, 0.7])
    for f in (fill_then_sum, fill_tall):
        want = f(x.copy())
        got = _strict(jit(f), x.copy())
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_fill_diagonal_gradient():
    check(fill_then_sum, [np.array([0.3, -1.2, 0.7])])


def test_fill_diagonal_under_vmap():
    X = np.array([[0.3, -1.2, 0.7], [1.0, 0.5, -0.25]])
    want = np.stack([fill_tall(row) for row in X])
    np.testing.assert_allclose(_strict(jit(vmap(fill_tall)), X.copy()), want, rtol=1e-13,
                               atol=1e-13)


def fill_3d(x):
    C = np.zeros((3, 3, 3)) + x
    np.fill_diagonal(C, 1.0)
    return C


def test_fill_diagonal_of_a_3d_array_is_refused_not_wrong():
    with pytest.raises(AssertionError, match="only a 2-D array"):
        jit(fill_3d)(np.array([0.3, -1.2, 0.7]))


# ---- a real value computed from complex ones, fed back into complex arithmetic ----------------

def real_part_fed_back(x):
    z = np.exp(1j * x)
    t = z.real * 1.0                     # real, but its cotangent from 1j * t is complex
    w = np.exp(1j * t)
    return np.sum(w.real)


def abs_fed_back(x):
    z = (x + 2.0) * np.exp(1j * x)
    t = z.real * z.imag + np.abs(z * (0.5 - 1j))
    w = (x + 2.0) * np.exp(1j * t)
    return np.sum(w.real * w.imag)


@pytest.mark.parametrize("loss", [real_part_fed_back, abs_fed_back])
def test_complex_cotangent_of_a_real_value(loss):
    """.real / .imag / np.abs pass back only the real part of their cotangent (grad once
    gave the wrong numbers here, eager and jit alike)."""
    x = np.array([0.3, -0.4, 0.8, 0.1])
    want = numerical_grad(loss, [x.copy()])
    np.testing.assert_allclose(grad(loss)(x.copy()), want, rtol=1e-6, atol=1e-7)
    check(loss, [x])
