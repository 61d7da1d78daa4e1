"""Values of run-time length (x[:k], A[i:, i:] with k, i loop variables) flowing through array
operations under jit (issue 22, Polybench/npbench-style kernels): flips, transposes, products of
vectors and matrices, np.outer, elementwise rows that broadcast a run-time-length operand
against a fixed one, reductions along an axis, joins, new axes, reshapes, slice writes with
run-time bounds (plain and `+=`), and stacks of matrix products (matmul of 3-D arrays).

Each function compiles with no statement run in NumPy (a TranspileWarning is an error here),
gives NumPy's numbers and dtypes (exactly for integers), leaves its arguments as NumPy does, and
raises NumPy's error where the operands do not fit. Gradients under grad and jit(grad) are
checked against central finite differences.
"""
import warnings

import numpy as np
import pytest

from fd_helpers import numgrad
from transpile import grad, jit
from transpile.errors import TranspileWarning

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def rng(seed):
    return np.random.default_rng(seed)


def same(got, want):
    if want is None:
        assert got is None
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    if w.dtype.kind in "biu":
        assert np.array_equal(g, w)
    else:
        tol = 1e-10 if w.dtype.itemsize >= 8 else 1e-5      # (float32: BLAS's order)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 1e-2)


def check(f, *args):
    """jit(f) on copies of args: NumPy's result and argument writes, from compiled code."""
    want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    want = f(*want_args)
    j = jit(f, wait=True)
    for _ in range(2):
        got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got = j(*got_args)
        assert j.last_tier == "compiled"
        same(got, want)
        for g, w in zip(got_args, want_args):
            if isinstance(w, np.ndarray):
                same(g, w)
    return j


def check_grad(loss, args, wrt=0):
    def along(z):
        a = list(args)
        a[wrt] = z
        return loss(*a)
    want = numgrad(along, args[wrt])
    g = grad(loss, argnums=wrt)
    np.testing.assert_allclose(g(*args), want, rtol=1e-5, atol=1e-6)
    jg = jit(g, wait=True)
    np.testing.assert_allclose(jg(*args), want, rtol=1e-5, atol=1e-6)
    assert jg.last_tier == "compiled"


# ---------------------------------------------------------------- flips and transposes ------

def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def durbin_loss(r):
    return np.sum(durbin(r) ** 2)


def reversed_prefixes(x):
    out = np.zeros((x.shape[0], x.shape[0]), dtype=x.dtype)
    for k in range(x.shape[0] + 1):
        out[k - 1, :k] = x[:k][::-1] + np.flipud(x[:k])
    return out


def flip_2d_blocks(A):
    s = np.zeros(A.shape[1])
    for i in range(1, A.shape[0]):
        s[:i] += np.sum(np.flip(A[:i, :i], axis=0) * np.fliplr(A[:i, :i]), axis=0)
    return s


def transposed_blocks(A):
    s = np.zeros(A.shape[0])
    for i in range(1, A.shape[0]):
        B = A[:i, :i].T
        s[:i] = np.sum(B * A[:i, :i], axis=1) + np.transpose(A[i:, :i]).sum(axis=1)
    return s


def test_durbin_flips_compile():
    r = rng(1).random(7) * 0.3
    check(durbin, r)
    check(durbin, rng(2).random(12) * 0.2)       # another length, the same code


def test_durbin_grad():
    check_grad(durbin_loss, (rng(3).random(6) * 0.3,))


def test_reversed_prefixes_keep_int_and_float_dtypes():
    check(reversed_prefixes, rng(4).random(6))
    check(reversed_prefixes, rng(4).integers(-9, 9, 6))
    check(reversed_prefixes, rng(4).random(5).astype(np.float32))


def flips_loss(A):
    return np.sum(flip_2d_blocks(A) ** 2) + np.sum(np.sin(transposed_blocks(A)))


def test_flips_along_axes_and_transposes():
    A = rng(5).random((6, 6))
    check(flip_2d_blocks, A)
    check(transposed_blocks, A)
    check_grad(flips_loss, (A,))


# ---------------------------------------------------------------- products ---------------------

def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def covariance_loss(data):
    return np.sum(np.sin(covariance(data.shape[1], float(data.shape[0]), data.copy())))


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def block_products(A, x):
    """matrix @ vector, vector @ matrix, matrix @ matrix, np.dot, all of run-time sizes."""
    n = A.shape[0]
    y = np.zeros(n)
    C = np.zeros((n, n))
    for i in range(1, n):
        y[i:] += A[i:, i:] @ x[i:]
        y[:i] -= x[:i] @ A[:i, :i] + np.dot(0.5, x[:i])
        C[:i, :i] += np.dot(A[:i, :i], A[:i, :i].T) + A[:i, i:] @ A[i:, :i]
    return y, C


def outer_updates(x, w):
    out = np.zeros((x.shape[0], w.shape[0]))
    for i in range(1, x.shape[0] + 1):
        out[:i, :] += np.outer(x[:i], w) + np.outer(x[:i], w[::-1])
    return out


def int_products(A, x):
    s = np.zeros(A.shape[0], dtype=A.dtype)
    t = 0
    for i in range(A.shape[0]):
        s[i:] += A[i:, :i] @ x[:i]
        t += x[:i] @ x[:i]
    return s, t


def test_covariance_and_correlation_compile():
    data = rng(6).random((10, 5))
    check(covariance, 5, 10.0, data)
    check(correlation, 5, 10.0, data)
    check(covariance, 3, 7.0, rng(7).random((7, 3)))


def test_covariance_grad():
    check_grad(covariance_loss, (rng(8).random((6, 4)),))


def block_products_loss(A, x):
    y, C = block_products(A, x)
    return np.sum(np.sin(C)) + np.sum(y ** 2)


def test_products_of_run_time_sizes():
    A, x = rng(9).random((6, 6)), rng(10).random(6)
    check(block_products, A, x)
    check_grad(block_products_loss, (A, x), 0)
    check_grad(block_products_loss, (A, x), 1)


def outer_updates_loss(x, w):
    return np.sum(outer_updates(x, w) ** 2)


def test_outer_of_run_time_length():
    x, w = rng(11).random(5), rng(12).random(4)
    check(outer_updates, x, w)
    check_grad(outer_updates_loss, (x, w), 0)
    check_grad(outer_updates_loss, (x, w), 1)


def test_integer_products_are_exact():
    A = rng(13).integers(-50, 50, (6, 6))
    check(int_products, A, rng(14).integers(-50, 50, 6))


# in these, k runs up to n: the operands fit while 2 * k <= len(x), and NumPy raises after

def dot_mismatch(x, n):
    s = 0.0
    for k in range(1, n):
        s += x[:k] @ x[k:2 * k]
    return s


def matvec_mismatch(A, n):
    s = np.zeros(A.shape[0])
    for k in range(1, n):
        s[:k] += A[:k, :k] @ A[0, k:2 * k]
    return s


@pytest.mark.parametrize("f, x", [(dot_mismatch, np.arange(6.0)),
                                  (matvec_mismatch, np.arange(36.0).reshape(6, 6))])
def test_products_that_do_not_fit_raise_numpys_error(f, x):
    j = jit(f, wait=True)
    same(j(x, 4), f(x, 4))
    with pytest.raises(ValueError) as want:
        f(x, 5)
    with pytest.raises(ValueError) as got:
        j(x, 5)
    assert str(want.value) in str(got.value)


# ---------------------------------------------------------------- broadcasting ------------------

def rows_minus_fixed(A, y):
    out = A.copy()
    for i in range(1, A.shape[0]):
        out[:i, :] = A[:i, :] - y
        out[i:, :] *= 0.5 + y[::-1]
    return out


def column_times_row(x, y):
    out = np.zeros((x.shape[0], y.shape[0]))
    for i in range(1, x.shape[0] + 1):
        out[:i, :] = x[:i, None] * y[None, :] + x[:i].reshape(-1, 1)
    return out


def length_one_broadcasts(x, y):
    s = 0.0
    for k in range(1, x.shape[0]):
        s += np.sum(x[k - 1:k] * y[:k]) + np.sum(x[:1] + y[k:])
    return s


def blocks_and_vectors(A, v):
    out = np.zeros_like(A)
    for i in range(1, A.shape[0]):
        out[:i, :i] = A[:i, :i] * v[:i] + v[:i, None]
    return out


def broadcasts_loss(A, y):
    return np.sum(rows_minus_fixed(A, y) ** 2) + np.sum(np.sin(column_times_row(A[:, 0], y)))


def blocks_and_vectors_loss(A, v):
    return np.sum(blocks_and_vectors(A, v) ** 2)


def test_broadcasting_a_run_time_length():
    A, y = rng(15).random((5, 4)), rng(16).random(4)
    check(rows_minus_fixed, A, y)
    check(column_times_row, rng(17).random(5), y)
    check(length_one_broadcasts, rng(18).random(6), rng(19).random(6))
    check(blocks_and_vectors, rng(20).random((5, 5)), rng(21).random(5))
    check_grad(broadcasts_loss, (A, y), 0)
    check_grad(broadcasts_loss, (A, y), 1)
    check_grad(length_one_broadcasts, (rng(18).random(6), rng(19).random(6)), 1)
    check_grad(blocks_and_vectors_loss, (rng(20).random((5, 5)), rng(21).random(5)), 0)
    check_grad(blocks_and_vectors_loss, (rng(20).random((5, 5)), rng(21).random(5)), 1)


def mismatched_lengths(x, n):
    s = 0.0
    for k in range(1, n):
        s += np.sum(x[:k] * x[k:2 * k])
    return s


def test_lengths_that_do_not_broadcast_raise_numpys_error():
    j = jit(mismatched_lengths, wait=True)
    x = np.arange(8.0)
    same(j(x, 5), mismatched_lengths(x, 5))
    with pytest.raises(ValueError, match="could not be broadcast"):
        mismatched_lengths(x, 6)
    with pytest.raises(ValueError, match="could not be broadcast"):
        j(x, 6)


# ---------------------------------------------------------------- reductions along an axis ------

def reductions_along(A):
    out = np.zeros((4, A.shape[1]))
    for i in range(1, A.shape[0] + 1):
        out[0] += np.sum(A[:i], axis=0)
        out[1] += np.max(A[:i, :], axis=0) - np.min(A[:i], axis=0)
        out[2] += A[:i].mean(axis=0) + np.prod(A[:i] * 0.5 + 0.75, axis=0)
        out[3, :i] += np.max(A[:i, :i], axis=1) + np.sum(A[:i, :i], axis=-1, keepdims=True)[:, 0]
    return out


def int_reductions(A):
    out = np.zeros((3, A.shape[1]), dtype=A.dtype)
    for i in range(1, A.shape[0] + 1):
        out[0] += A[:i].sum(axis=0)
        out[1] = np.maximum(out[1], np.max(A[:i], axis=0))
        out[2, :i] += np.min(A[:i, :i], axis=1)
    return out


def reductions_loss(A):
    return np.sum(reductions_along(A) ** 2)


def test_reductions_along_an_axis():
    A = rng(22).random((5, 5))
    check(reductions_along, A)
    check(int_reductions, rng(23).integers(-100, 100, (5, 5)))
    check_grad(reductions_loss, (A,))


def max_of_empty(A, start):
    s = np.zeros(A.shape[1])
    for k in range(start, A.shape[0]):
        s += np.max(A[:k], axis=0)
    return s


def test_max_of_an_empty_part_raises_numpys_error():
    j = jit(max_of_empty, wait=True)
    A = np.arange(12.0).reshape(4, 3)
    same(j(A, 1), max_of_empty(A, 1))
    with pytest.raises(ValueError, match="zero-size array"):
        j(A, 0)


# ---------------------------------------------------------------- joins --------------------------

def joins(x):
    out = 0.0
    for i in range(1, x.shape[0]):
        z = np.concatenate((x[:i], 2.0 * x[i:]))
        s = np.stack((x[:i], x[:i] ** 2), axis=1)
        h = np.hstack((x[i:], x[:i]))
        v = np.vstack((x[:i], x[:i] + 1.0))
        out += np.sum(z * x) + np.sum(s[:, 1] * s[:, 0]) + np.sum(h * x[::-1]) + np.sum(v ** 2)
    return out


def int_joins(x):
    out = np.zeros(2 * x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        z = np.concatenate((x[:i], x[i:] * 3, x[:i] - 1))
        out[:z.shape[0]] += z
    return out


def test_joins_of_run_time_lengths():
    x = rng(24).random(6)
    check(joins, x)
    check(int_joins, rng(25).integers(-20, 20, 5))
    check_grad(joins, (x,))


def concat_mismatch(A, n):
    s = 0.0
    for k in range(1, n):
        s += np.sum(np.concatenate((A[:k, :k], A[:k, k:2 * k]), axis=0))
    return s


def test_joins_that_do_not_fit_raise_numpys_error():
    j = jit(concat_mismatch, wait=True)
    A = np.arange(36.0).reshape(6, 6)
    same(j(A, 4), concat_mismatch(A, 4))
    with pytest.raises(ValueError) as want:
        concat_mismatch(A, 5)
    with pytest.raises(ValueError) as got:
        j(A, 5)
    assert str(want.value) in str(got.value)


# ---------------------------------------------------------------- slice writes ------------------

def triangle_writes(A, b):
    n = A.shape[0]
    for i in range(n):
        A[i, i:] -= b[i:] * 0.5
        A[i + 1:, i] = A[i, i + 1:] * 2.0
        A[i:n, i] += b[:n - i]
    return A


def lower_upper_chain(M, x):
    out = np.zeros((M, M), dtype=x.dtype)
    for i in range(M):
        out[i:M, i] = out[i, i:M] = x[i:M] * x[i]
    return out


def triangle_writes_loss(A, b):
    return np.sum(triangle_writes(A.copy(), b) ** 2)


def test_slice_writes_with_run_time_bounds():
    check(triangle_writes, rng(26).random((5, 5)), rng(27).random(5))
    check(lower_upper_chain, 5, rng(28).random(5))
    check(lower_upper_chain, 4, rng(29).integers(-5, 5, 4))
    check_grad(triangle_writes_loss, (rng(26).random((5, 5)), rng(27).random(5)), 0)
    check_grad(triangle_writes_loss, (rng(26).random((5, 5)), rng(27).random(5)), 1)


def write_mismatch(A, n):
    for k in range(1, n):
        A[:k, 0] = A[0, k:2 * k] + 1.0
    return A


def test_a_write_that_does_not_fit_raises_and_leaves_the_argument():
    j = jit(write_mismatch, wait=True)
    A = np.arange(36.0).reshape(6, 6)
    check(write_mismatch, A, 4)
    keep = A.copy()
    with pytest.raises(ValueError):
        write_mismatch(A.copy(), 5)
    with pytest.raises(ValueError):
        j(A, 5)
    same(A, keep)


# ---------------------------------------------------------------- stacks of matrix products -----

def doitgen(NR, NQ, NP, A, C4):
    for r in range(NR):
        A[r, :, :] = np.reshape(np.reshape(A[r], (NQ, 1, NP)) @ C4, (NQ, NP))


def doitgen_loss(A, C4):
    A = A.copy()
    doitgen(A.shape[0], A.shape[1], A.shape[2], A, C4)
    return np.sum(A ** 2)


def stacks(A, B, C):
    return A @ B, np.matmul(A, C), np.dot(A, B), A[:1] @ C, A @ B[:, 0]


def stacks_loss(A, B, C):
    P, Q, R, S, T = stacks(A, B, C)
    return np.sum(np.sin(P)) + np.sum(Q ** 2) + np.sum(R) + np.sum(S ** 2) + np.sum(T ** 2)


def test_doitgen_compiles():
    check(doitgen, 3, 4, 5, rng(30).random((3, 4, 5)), rng(31).random((5, 5)))
    check_grad(doitgen_loss, (rng(30).random((3, 4, 5)), rng(31).random((5, 5))), 0)
    check_grad(doitgen_loss, (rng(30).random((3, 4, 5)), rng(31).random((5, 5))), 1)


def test_stacks_of_matrix_products():
    A, B, C = rng(32).random((3, 4, 5)), rng(33).random((5, 2)), rng(34).random((3, 5, 2))
    check(stacks, A, B, C)
    check(stacks, A.astype(np.float32), B.astype(np.float32), C.astype(np.float32))
    for k in range(3):
        check_grad(stacks_loss, (A, B, C), k)


def batch_broadcast(A, B):
    return A @ B


def batch_broadcast_loss(A, B):
    return np.sum(batch_broadcast(A, B) ** 2)


def test_batch_axes_broadcast_as_numpy():
    check(batch_broadcast, rng(35).random((2, 1, 3, 4)), rng(36).random((5, 4, 2)))
    check_grad(batch_broadcast_loss, (rng(35).random((2, 1, 3, 4)), rng(36).random((5, 4, 2))), 0)
    check_grad(batch_broadcast_loss, (rng(35).random((2, 1, 3, 4)), rng(36).random((5, 4, 2))), 1)


def test_stacks_that_do_not_fit_raise_numpys_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)     # (refused while specializing)
        j = jit(batch_broadcast, wait=True)
        with pytest.raises(ValueError):
            j(np.ones((2, 3, 4)), np.ones((3, 5, 2)))


# -- np.cumsum of a value of run-time length ---------------------------------------------------
# (histogram equalization: np.cumsum(np.bincount(x, minlength=8))) ran in NumPy ("unknown
# result shape"); now Numba's own, in NumPy's result type (int64 for small ints and booleans)

def histogram_cdf(x):
    h = np.bincount(x, minlength=8)
    c = np.cumsum(h)
    return c, c / c[-1]


def cumsum_of_selected(x):
    m = x[x > 0.5]
    return np.cumsum(m, axis=0), np.cumsum(m > 0.7), np.cumsum(np.unique(np.round(x, 1)) * 2.0)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_cumsum_of_a_histogram(dtype):
    check(histogram_cdf, np.array([1, 3, 3, 7, 0, 9], dtype=dtype))
    check(histogram_cdf, np.array([2, 2], dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cumsum_of_a_selection(dtype):
    check(cumsum_of_selected, rng(3).random(20).astype(dtype))
    check(cumsum_of_selected, np.zeros(5, dtype))          # (nothing selected)
