"""Issue 22, "jit on code other people write": NumPy's indexing forms that other people's
kernels use compile under jit with NumPy's numbers and dtypes, and differentiate under grad and
jit(grad) without a NumPy segment.

* advanced indexing with two or more integer arrays (broadcast together, beside integers and
  slices), reads and writes, with NumPy's rules for repeated indices (the last write kept,
  `+=` buffered), negative indices and IndexError past the end;
* boolean-mask writes of arrays (`r[ok] = e[ok]`, `x[mask] = y`, `x[mask] += 1`, rows);
* np.argsort / np.sort along any axis (equal values: NumPy's own order, by running NumPy);
* np.zeros_like / ones_like / full_like / empty_like with a dtype (bool, int, float too);
* arrays whose length comes from a scalar computed at run time (np.arange(-r, r + 1)): an
  element read or a reduction of them is a scalar, so a loop accumulating them compiles.

A TranspileWarning (a NumPy segment or a fallback) is an error here unless a test expects it;
every jit call waits for the compiled tier and checks it ran.
"""
import copy
import warnings

import numpy as np
import pytest

from fd_helpers import numgrad
from transpile import grad, jit, vmap
from transpile.errors import TranspileWarning

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def compiled(f, *args):
    """jit(f)(*args) on the compiled tier (a fallback to NumPy raised as an error)."""
    j = jit(f, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        out = j(*args)
    assert j.last_tier == "compiled"
    return out


def same(got, want):
    """Equal structure, shape and dtype; exact values (indexing copies numbers, NaN = NaN)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    if want is None:
        assert got is None
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_array_equal(g, w)


def check(f, *args):
    """f under jit equals f in NumPy: result and every argument after the call."""
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    got = compiled(f, *mine)
    want = f(*theirs)
    same(got, want)
    for a, b in zip(mine, theirs):
        if isinstance(b, np.ndarray):
            same(a, b)
    return got


def fd(f, args, k):
    """Central finite differences of f along argument k (the other arguments as they are)."""
    def along(z):
        a = list(args)
        a[k] = z
        return f(*a)
    return numgrad(along, np.asarray(args[k], dtype=np.float64))


def check_grad(f, args, wrt=(0,)):
    """grad and jit(grad) of f with respect to `wrt` equal finite differences; jit(grad) ran
    compiled, with no NumPy segment."""
    want = [fd(f, args, k) for k in wrt]
    g = grad(f, argnums=tuple(wrt))
    got = g(*copy.deepcopy(args))
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=1e-6, atol=1e-7)
    jg = jit(g, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jg(*copy.deepcopy(args))
    assert jg.last_tier == "compiled"
    for a, w in zip(got, want):
        np.testing.assert_allclose(a, w, rtol=1e-6, atol=1e-7)


def rng(seed=0):
    return np.random.default_rng(seed)


# ---- reads with several integer arrays ----------------------------------------------------------

def pick_labels(logits, labels):
    return logits[np.arange(logits.shape[0]), labels]


def pick_pairs(A, rows, cols):
    return A[rows, cols]


def pick_outer(A, i, j):
    return A[i[:, None], j[None, :]]


def pick_rows_slice(A, idx):
    return A[idx, 1:3]


def pick_apart(B, idx):
    return B[1, :, idx]          # the integer and the array apart: the array's axis goes first


def pick_around_slice(B, r, c):
    return B[r, :, c]


def pick_constant_lists(A):
    return A[[0, 2, -1], [1, 1, 0]]


def pick_2d_index(y, idx):
    return y[idx]


def pick_2d_and_1d(A, idx2, c):
    return A[idx2, c]


def pick_last_axes(B, r, c):
    return B[:, r, c]


def pick_ellipsis(B, r, c):
    return B[..., r, c]


READS = [
    ("labels", pick_labels, lambda r: (r.standard_normal((6, 4)), r.integers(0, 4, 6))),
    ("pairs", pick_pairs, lambda r: (r.standard_normal((5, 6)), r.integers(-5, 5, 8),
                                     r.integers(-6, 6, 8))),
    ("int pairs", pick_pairs, lambda r: (r.integers(-9, 9, (5, 6)), r.integers(-5, 5, 8),
                                         r.integers(-6, 6, 8))),
    ("bool pairs", pick_pairs, lambda r: (r.random((5, 6)) > 0.5, r.integers(0, 5, 8),
                                          r.integers(0, 6, 8))),
    ("outer", pick_outer, lambda r: (r.standard_normal((5, 6)), r.integers(-5, 5, 3),
                                     r.integers(-6, 6, 4))),
    ("rows and a slice", pick_rows_slice, lambda r: (r.standard_normal((5, 6)),
                                                     r.integers(-5, 5, 7))),
    ("apart", pick_apart, lambda r: (r.standard_normal((3, 4, 6)), r.integers(-6, 6, 5))),
    ("around a slice", pick_around_slice, lambda r: (r.standard_normal((4, 3, 6)),
                                                     r.integers(0, 4, 5), r.integers(0, 6, 5))),
    ("constant lists", pick_constant_lists, lambda r: (r.standard_normal((4, 3)),)),
    ("2-d index", pick_2d_index, lambda r: (r.standard_normal(7), r.integers(-7, 7, (3, 4)))),
    ("2-d index of rows", pick_2d_index, lambda r: (r.standard_normal((7, 2)),
                                                    r.integers(0, 7, (3, 4)))),
    ("2-d and 1-d", pick_2d_and_1d, lambda r: (r.standard_normal((5, 6)),
                                               r.integers(0, 5, (3, 4)), r.integers(0, 6, 4))),
    ("ellipsis", pick_ellipsis, lambda r: (r.standard_normal((2, 4, 5)), r.integers(-4, 4, 3),
                                           r.integers(-5, 5, 3))),
    ("last axes", pick_last_axes, lambda r: (r.integers(0, 99, (2, 5, 6)).astype(np.int32),
                                             r.integers(0, 5, 4), r.integers(-6, 0, 4))),
]


@pytest.mark.parametrize("f, make", [pytest.param(f, m, id=i) for i, f, m in READS])
def test_reads_with_index_arrays_compile_with_numpys_numbers(f, make):
    check(f, *make(rng(1)))


def test_reads_over_random_inputs():
    for seed in range(4):
        r = rng(10 + seed)
        n, m = r.integers(2, 7, 2)
        A = r.standard_normal((n, m))
        k = int(r.integers(1, 9))
        rows, cols = r.integers(-n, n, k), r.integers(-m, m, k)
        check(pick_pairs, A, rows, cols)
        check(pick_outer, A, rows[:3], cols)
        check(pick_rows_slice, np.hstack([A, A]), rows)


def test_read_past_the_end_raises_index_error_as_numpy():
    A = np.arange(12.0).reshape(3, 4)
    j = jit(pick_pairs, wait=True)
    same(j(A, np.array([0, 2]), np.array([1, -4])), A[[0, 2], [1, -4]])
    for rows, cols in ((np.array([0, 3]), np.array([0, 0])), (np.array([0, -4]), np.array([0, 0])),
                       (np.array([0, 1]), np.array([0, 4]))):
        with pytest.raises(IndexError):
            A[rows, cols]
        with pytest.raises(IndexError, match="out of bounds"):
            j(A, rows, cols)


# ---- writes with several integer arrays ---------------------------------------------------------

def onehot(labels, k):
    out = np.zeros((labels.shape[0], k))
    out[np.arange(labels.shape[0]), labels] = 1.0
    return out


def set_pairs(M, r, c, v):
    M = M.copy()
    M[r, c] = v
    return M


def add_pairs(M, r, c, v):
    M = M.copy()
    M[r, c] += v
    return M


def scale_pairs(M, r, c, v):
    M = M.copy()
    M[r, c] *= v
    return M


def set_column_of_rows(y, idx, v):
    y = y.copy()
    y[idx, 1] = v
    return y


def set_outer(M, r, c, v):
    M = M.copy()
    M[r[:, None], c] = v
    return M


def set_rows_slice(M, r, v):
    M = M.copy()
    M[r, 1:3] = v
    return M


def set_around_slice(B, r, c, v):
    B = B.copy()
    B[r, :, c] = v
    return B


def set_argument(M, r, c, v):
    M[r, c] = v


def set_ellipsis(B, r, c, v):
    B = B.copy()
    B[..., r, c] = v
    return B


def test_onehot_compiles():
    labels = np.array([0, 2, 1, 4, 2, 3])
    check(onehot, labels, 5)


def test_repeated_indices_keep_the_last_write_and_add_once():
    M = np.zeros((3, 4))
    r = np.array([0, 1, 0, 2, 0])
    c = np.array([1, 2, 1, 3, -3])          # (0, 1) three times: -3 is column 1
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    got = check(set_pairs, M, r, c, v)
    assert got[0, 1] == 5.0                  # NumPy's last write, not 1.0 or the sum
    got = check(add_pairs, M + 10.0, r, c, v)
    assert got[0, 1] == 15.0                 # buffered: M[0, 1] + the last value, once
    check(scale_pairs, M + 2.0, r, c, v)


WRITES = [
    ("scalar", set_pairs, lambda r: (r.standard_normal((4, 5)), r.integers(-4, 4, 9),
                                     r.integers(-5, 5, 9), 2.5)),
    ("values", set_pairs, lambda r: (r.standard_normal((4, 5)), r.integers(-4, 4, 9),
                                     r.integers(-5, 5, 9), r.standard_normal(9))),
    ("one value", set_pairs, lambda r: (r.standard_normal((4, 5)), r.integers(0, 4, 9),
                                        r.integers(0, 5, 9), r.standard_normal(1))),
    ("floats into ints", set_pairs, lambda r: (r.integers(0, 9, (4, 5)), r.integers(0, 4, 9),
                                               r.integers(0, 5, 9), r.standard_normal(9) * 5)),
    ("add", add_pairs, lambda r: (r.standard_normal((4, 5)), r.integers(-4, 4, 9),
                                  r.integers(-5, 5, 9), r.standard_normal(9))),
    ("int add", add_pairs, lambda r: (r.integers(0, 9, (4, 5)), r.integers(0, 4, 9),
                                      r.integers(0, 5, 9), r.integers(-3, 3, 9))),
    ("column of rows", set_column_of_rows, lambda r: (r.standard_normal((5, 3)),
                                                      r.integers(-5, 5, 6), r.standard_normal(6))),
    ("outer", set_outer, lambda r: (r.standard_normal((4, 5)), r.integers(0, 4, 3),
                                    r.integers(0, 5, 4), r.standard_normal((3, 4)))),
    ("outer, a row", set_outer, lambda r: (r.standard_normal((4, 5)), r.integers(0, 4, 3),
                                           r.integers(0, 5, 4), r.standard_normal(4))),
    ("rows and a slice", set_rows_slice, lambda r: (r.standard_normal((5, 4)),
                                                    r.integers(0, 5, 6),
                                                    r.standard_normal((6, 2)))),
    ("rows and a slice, a column", set_rows_slice, lambda r: (r.standard_normal((5, 4)),
                                                              r.integers(0, 5, 6),
                                                              r.standard_normal((6, 1)))),
    ("around a slice", set_around_slice, lambda r: (r.standard_normal((4, 3, 5)),
                                                    r.integers(0, 4, 6), r.integers(0, 5, 6),
                                                    r.standard_normal((6, 3)))),
    ("ellipsis", set_ellipsis, lambda r: (r.standard_normal((2, 4, 5)), r.integers(0, 4, 3),
                                          r.integers(0, 5, 3), r.standard_normal((2, 3)))),
    ("argument", set_argument, lambda r: (r.standard_normal((4, 5)), r.integers(0, 4, 9),
                                          r.integers(0, 5, 9), r.standard_normal(9))),
]


@pytest.mark.parametrize("f, make", [pytest.param(f, m, id=i) for i, f, m in WRITES])
def test_writes_with_index_arrays_compile_with_numpys_numbers(f, make):
    for seed in range(3):
        check(f, *make(rng(20 + seed)))


def test_write_past_the_end_raises_and_leaves_the_argument():
    j = jit(set_argument, wait=True)
    M = np.zeros((3, 3))
    j(M, np.array([0, 1]), np.array([0, 1]), np.ones(2))
    assert j.last_tier == "compiled"
    M = np.zeros((3, 3))
    with pytest.raises(IndexError):
        j(M, np.array([0, 1, 7]), np.array([0, 0, 0]), np.ones(3))
    same(M, np.zeros((3, 3)))
    with pytest.raises(IndexError):
        j(M, np.array([0, -4]), np.array([0, 0]), np.ones(2))
    same(M, np.zeros((3, 3)))


def test_repeated_writes_through_arrays_numpy_takes_in_memory_order():
    """NumPy writes M[r, c] = v in an order taken from the arrays' memory layout (C order for
    C-ordered arrays, another for F-ordered or reversed ones). An element written twice with
    different values then depends on that order: that call runs NumPy (a warning), never
    another value."""
    I = np.array([[0, 1], [0, 2]])
    J = np.array([[1, 1], [1, 0]])           # (0, 1) at [0, 0] and [1, 0]
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    M = np.zeros((3, 3))
    check(set_pairs, M, I, J, V)
    for i, j, v in ((np.asfortranarray(I), np.asfortranarray(J), np.asfortranarray(V)),
                    (I[::-1], J[::-1], V[::-1]), (I.T, J.T, V.T)):
        want = set_pairs(M, i, j, v)
        jf = jit(set_pairs, wait=True)
        with pytest.warns(TranspileWarning, match="memory layout"):
            got = jf(M, i, j, v)
        same(got, want)
    # the same value at every repeated element: any order gives it, so the call compiles
    Vs = np.array([[7.0, 2.0], [7.0, 4.0]])
    check(set_pairs, M, np.asfortranarray(I), np.asfortranarray(J), np.asfortranarray(Vs))
    r = np.array([2, 0, 1, 0])[::-1]
    check(set_pairs, M, r, r, np.array([5.0, 6.0, 5.0, 8.0]))


def write_own_row(M, r, c):
    M = M.copy()
    M[r, c] = M[0, :3]
    return M


def write_own_tail(x, m):
    x = x.copy()
    x[m] = x[:int(m.sum())][::-1]
    return x


def test_a_value_that_is_a_view_of_the_array_written():
    """NumPy reads such a value through its own buffering (a copy for index arrays, in part
    for masks): that call runs NumPy, with a warning, and gives NumPy's numbers."""
    M = np.arange(16.0).reshape(4, 4)
    x = np.arange(6.0)
    for f, args in ((write_own_row, (M, np.array([0, 0, 1]), np.array([1, 2, 0]))),
                    (write_own_tail, (x, np.array([1, 1, 0, 1, 0, 1], bool)))):
        j = jit(f, wait=True)
        with pytest.warns(TranspileWarning, match="view of"):
            got = j(*args)
        same(got, f(*args))


def test_writes_over_random_inputs():
    for seed in range(4):
        r = rng(30 + seed)
        n, m = r.integers(2, 6, 2)
        M = r.standard_normal((n, m))
        k = int(r.integers(1, 12))
        rows, cols = r.integers(-n, n, k), r.integers(-m, m, k)
        v = r.standard_normal(k)
        check(set_pairs, M, rows, cols, v)
        check(add_pairs, M, rows, cols, v)
        check(set_column_of_rows, M if m > 1 else np.hstack([M, M]), rows, v)


# ---- gradients ----------------------------------------------------------------------------------

def xent(logits, labels):
    n = logits.shape[0]
    lse = np.log(np.sum(np.exp(logits), axis=1))
    return np.mean(lse - logits[np.arange(n), labels])


def cross_entropy(logits, labels):
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return np.mean(lse - logits[np.arange(len(labels)), labels])


def outer_loss(A, i, j):
    return np.sum(np.sin(A[i[:, None], j[None, :]]))


def rows_slice_loss(A, idx):
    return np.sum(A[idx, 1:3] ** 3)


def apart_loss(B, r, c):
    return np.sum(B[r, :, c] * B[r, 1, c][:, None])


def gather_2d_loss(W, bags):
    return np.sum(W[bags].mean(axis=1) ** 2)


def set_pairs_loss(A, r, c, v):
    M = A * 1.0
    M[r, c] = v
    return np.sum(M ** 2 * A)


def add_pairs_loss(A, r, c, v):
    M = A * 1.0
    M[r, c] += v * A[0, 0]
    return np.sum(np.sin(M))


def column_of_rows_loss(y, idx, v):
    z = y * 2.0
    z[idx, 1] = v
    return np.sum(z ** 2 * y)


def outer_write_loss(A, r, c, v):
    M = A * 1.0
    M[r[:, None], c] = v
    return np.sum(M ** 3)


def gather_in_loop_loss(A, r, c):
    t = 0.0
    for k in range(3):
        t = t + np.sum(A[r, c] * (k + 1.0))
    return t


def test_grad_of_reads_with_index_arrays():
    r = rng(40)
    logits, labels = r.standard_normal((6, 4)), np.array([0, 3, 1, 1, 2, 3])
    check_grad(xent, (logits, labels))
    check_grad(cross_entropy, (logits, labels))
    A = r.standard_normal((5, 6))
    check_grad(outer_loss, (A, np.array([0, 4, 2, 0]), np.array([1, -1, 3])))
    check_grad(rows_slice_loss, (A, np.array([0, 4, 2, 2, -1])))
    check_grad(apart_loss, (r.standard_normal((4, 3, 6)), np.array([0, 3, 1, 3]),
                            np.array([1, 5, 5, -1])))
    check_grad(gather_2d_loss, (r.standard_normal((6, 3)), np.array([[0, 1, 1], [5, 0, -1]])))
    check_grad(gather_in_loop_loss, (A, np.array([0, 4, 2, 2]), np.array([1, -1, 3, 3])))


def test_grad_of_writes_with_index_arrays_repeats_included():
    r = rng(41)
    A = r.standard_normal((5, 6))
    rows, cols = np.array([0, 4, 2, 2, -1]), np.array([1, -1, 3, 3, 0])    # (2, 3) twice
    v = r.standard_normal(5)
    check_grad(set_pairs_loss, (A, rows, cols, v), wrt=(0, 3))
    check_grad(add_pairs_loss, (A, rows, cols, v), wrt=(0, 3))
    check_grad(column_of_rows_loss, (A, np.array([0, 3, 0, -1]), r.standard_normal(4)),
               wrt=(0, 2))
    check_grad(outer_write_loss, (A, np.array([1, 1]), np.array([0, 2, 0, 5]),
                                  r.standard_normal((2, 4))), wrt=(0, 3))


# ---- boolean-mask writes of arrays --------------------------------------------------------------

def quadratic_roots(a, b, c):
    disc = b * b - 4 * a * c
    r = np.full(a.shape, np.nan)
    ok = disc >= 0
    r[ok] = (-b[ok] + np.sqrt(disc[ok])) / (2 * a[ok])
    return r


def mask_set(x, mask, y):
    x = x.copy()
    x[mask] = y
    return x


def mask_add_one(x, mask):
    x = x.copy()
    x[mask] += 1.0
    return x


def mask_scale(x, mask, c):
    x = x.copy()
    x[mask] *= c
    return x


def mask_rows(X, y):
    X = X.copy()
    X[X[:, 0] > 0] = y
    return X


def mask_argument(x, mask, y):
    x[mask] = y


def test_mask_writes_of_arrays_compile():
    r = rng(50)
    check(quadratic_roots, r.random(9) + 0.5, r.standard_normal(9) * 3, r.random(9))
    for x in (r.standard_normal(9), r.standard_normal((4, 5))):
        mask = x > 0.2
        check(mask_set, x, mask, r.standard_normal(int(mask.sum())))
        check(mask_set, x, mask, r.standard_normal(1))
        check(mask_set, x, mask, 4.0)
        check(mask_add_one, x, mask)
        check(mask_scale, x, mask, 2.5)
        check(mask_argument, x, mask, r.standard_normal(int(mask.sum())))
    xi = r.integers(-5, 5, 8)
    check(mask_set, xi, xi > 0, r.standard_normal(int((xi > 0).sum())) * 4)    # truncated
    X = r.standard_normal((5, 3))
    m = X[:, 0] > 0
    check(mask_rows, X, r.standard_normal((int(m.sum()), 3)))
    check(mask_rows, X, r.standard_normal(3))


def test_mask_write_of_the_wrong_count_raises_as_numpy():
    x = np.arange(6.0)
    mask = x > 2
    with pytest.raises(ValueError):
        mask_set(x, mask, np.ones(4))
    j = jit(mask_set, wait=True)
    j(x, mask, np.ones(3))
    with pytest.raises(ValueError, match="cannot assign 4 input values"):
        j(x, mask, np.ones(4))


def mask_expr_loss(x, y):
    z = x * 1.0
    z[x > 0] = y[x > 0] ** 2
    return np.sum(z * x)


def mask_add_loss(x):
    z = x * 2.0
    z[x > 0] += 1.0
    return np.sum(z ** 2)


def mask_scale_loss(x, c):
    z = x * 1.0
    z[x > 0.2] *= c
    return np.sum(z ** 3)


def mask_rows_loss(X, y):
    Z = X * 1.0
    Z[X[:, 0] > 0] = y
    return np.sum(Z ** 2 * X)


def mask_values_loss(x, v):
    z = x * 1.0
    z[x > 0] = v
    return np.sum(z ** 2)


def roots_loss(a, b, c):
    r = quadratic_roots(a, b, c)
    return np.sum(np.where(np.isnan(r), 0.0, r) ** 2)


def test_grad_of_mask_writes():
    r = rng(51)
    x = r.standard_normal(8)
    check_grad(mask_expr_loss, (x, r.standard_normal(8)), wrt=(0, 1))
    check_grad(mask_add_loss, (x,))
    check_grad(mask_scale_loss, (x, 1.7), wrt=(0, 1))
    check_grad(mask_rows_loss, (r.standard_normal((5, 3)), r.standard_normal(3)), wrt=(0, 1))
    check_grad(mask_values_loss, (x, r.standard_normal(int((x > 0).sum()))), wrt=(0, 1))
    check_grad(roots_loss, (r.random(7) + 0.5, r.standard_normal(7) * 3, r.random(7)),
               wrt=(0, 1, 2))


# ---- sorting along an axis ----------------------------------------------------------------------

def knn_predict(Xtr, ytr, Xte, k):
    d = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(axis=2)
    idx = np.argsort(d, axis=1)[:, :k]
    return ytr[idx].mean(axis=1)


def sorts(d):
    return (np.argsort(d, axis=1), np.argsort(d, axis=0), np.argsort(d, axis=-1),
            np.argsort(d, axis=None), np.sort(d, axis=1), np.sort(d, axis=0))


def test_argsort_and_sort_along_an_axis():
    r = rng(60)
    check(sorts, r.standard_normal((5, 4)))
    check(sorts, r.standard_normal((3, 4, 5)))
    check(lambda x: np.argsort(x), r.standard_normal(40))


def test_knn_predict_compiles_whole():
    for seed in range(3):
        r = rng(61 + seed)
        Xtr, ytr = r.standard_normal((12, 3)), r.standard_normal(12)
        Xte = r.standard_normal((4, 3))
        got = compiled(knn_predict, Xtr, ytr, Xte, 3)
        np.testing.assert_allclose(got, knn_predict(Xtr, ytr, Xte, 3), rtol=1e-13, atol=0)


def test_argsort_of_equal_values_gives_numpys_indices():
    """Equal values are ordered by NumPy's own algorithm (Numba's quicksort orders them
    otherwise): the compiled code calls NumPy's argsort for them and gives NumPy's indices,
    with no fallback."""
    x = np.array([3, 1, 2, 1, 3, 0, 1, 2, 3, 3, 1, 0, 2, 2, 1, 3, 0, 1])
    want = np.argsort(x)
    for f, a in ((lambda v: np.argsort(v), x), (lambda v: np.argsort(v, axis=0),
                                                 x.reshape(6, 3).astype(float)),
                 (lambda v: np.argsort(v), np.array([1.0, np.nan, 0.0, np.nan]))):
        j = jit(f, wait=True)
        got = compiled(f, a)
        same(got, f(a))
    same(jit(lambda v: np.argsort(v), backend="numpy")(x), want)


def order_stats(x):
    s = np.sort(x)
    return s[-3:], np.argsort(x)[:4], np.sort(x.reshape(-1, 50), axis=0)[0], \
        np.argsort(x.reshape(-1, 50), axis=None)[-2:]


@pytest.mark.parametrize("n", [100, 300, 20000])
def test_sorts_of_large_arrays_are_numpys(n):
    """From NUMPY_SORT_MIN elements the compiled code calls NumPy's sort (Numba's quicksort
    was 5-12x slower): the same values and, with many ties, the same indices as NumPy."""
    r = rng(70)
    for x in (r.standard_normal(n), np.round(r.standard_normal(n), 1),
              r.integers(0, 5, n), r.standard_normal(n).astype(np.float32)):
        check(order_stats, x)


# ---- creation *_like with a dtype --------------------------------------------------------------

def likes(x):
    return (np.zeros_like(x, dtype=bool), np.ones_like(x, dtype=np.int64),
            np.full_like(x, 3, dtype=np.int32), np.zeros_like(x, dtype=float),
            np.ones_like(x, dtype=int), np.full_like(x, 2.5, dtype=np.float32),
            np.zeros(3, dtype=bool), x.astype(int))


def empties(x):
    m = np.zeros_like(x, dtype=bool)
    m[x > 0.5] = True
    e = np.empty_like(x)
    e[:] = np.where(m, x, -x)
    f = np.empty_like(x, dtype=np.float32)
    f[...] = 1.5
    return e, m, f


def test_like_creations_with_a_dtype():
    r = rng(70)
    check(likes, r.standard_normal((3, 4)) * 3)
    check(empties, r.random((3, 4)))


# ---- arrays sized by a scalar computed at run time ----------------------------------------------

def gaussian_blur(img, sigma):
    r = int(3 * sigma)
    xs = np.arange(-r, r + 1)
    k = np.exp(-xs ** 2 / (2 * sigma ** 2))
    k /= k.sum()
    out = np.zeros_like(img)
    H, W = img.shape
    for i in range(H):
        for j in range(W):
            acc = 0.0
            for t in range(-r, r + 1):
                jj = min(max(j + t, 0), W - 1)
                acc += k[t + r] * img[i, jj]
            out[i, j] = acc
    return out


def blur_loss(img, sigma):
    return np.sum(gaussian_blur(img, sigma) ** 2)


def taps(x, s):
    r = int(s)
    z = np.zeros(2 * r + 1)
    for i in range(2 * r + 1):
        z[i] = x[i % len(x)] * i
    w = np.linspace(0.0, 1.0, r + 2)
    t = 0.0
    for i in range(r + 2):
        t += w[i] * x[i % x.shape[0]]
    return (z.sum(), z.max(), z.argmax(), z[-1], z.mean(), t,
            len(np.arange(-r, r + 1)), np.dot(np.ones(r) / r, x[:r]))


def test_gaussian_blur_compiles_whole_for_every_sigma():
    img = rng(80).random((5, 6))
    j = jit(gaussian_blur, wait=True)
    for sigma in (0.8, 1.3, 0.2, 2.1):           # 2 * int(3 * sigma) + 1 taps: 5, 7, 1, 13
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            got = j(img, sigma)
        assert j.last_tier == "compiled"
        np.testing.assert_allclose(got, gaussian_blur(img, sigma), rtol=1e-13, atol=0)


def test_elements_and_reductions_of_run_time_lengths():
    x = np.arange(12.0) + 1
    j = jit(taps, wait=True)
    for s in (2.5, 4.2, 1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            got = j(x, s)
        assert j.last_tier == "compiled"
        want = taps(x, s)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-13)


def test_grad_of_gaussian_blur():
    check_grad(blur_loss, (rng(81).random((4, 5)), 0.9))


# ---- vmap of functions using these forms --------------------------------------------------------

def gather_rows(A, r2):
    return A[r2].sum(axis=-1)


def first_two(d):
    return np.argsort(d, axis=1)[:, :2]


@pytest.mark.parametrize("f, make", [
    pytest.param(xent, lambda r: (r.standard_normal((3, 5, 4)), r.integers(0, 4, (3, 5))),
                 id="labels"),
    pytest.param(set_pairs, lambda r: (r.standard_normal((3, 4, 4)), r.integers(0, 4, (3, 3)),
                                       r.integers(0, 4, (3, 3)), r.standard_normal((3, 3))),
                 id="writes"),
    pytest.param(gather_rows, lambda r: (r.standard_normal((3, 5, 3)),
                                         r.integers(0, 5, (3, 2, 2))), id="2-d index"),
    pytest.param(first_two, lambda r: (r.standard_normal((3, 4, 5)),), id="argsort"),
])
def test_vmap_of_indexing_forms(f, make):
    args = make(rng(90))
    want = np.stack([f(*[a[b] for a in args]) for b in range(3)])
    np.testing.assert_allclose(vmap(f)(*args), want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(compiled(vmap(f), *args), want, rtol=1e-13, atol=0)


# ---- a list of run-time values as an index: x[[i, j]] (NumPy: the array np.asarray makes) -------

def rows_ij(A, i, j):
    return A[[i, j]]


def rows_ij_sum(A, i, j):
    return A[[i, j]].sum()


def rows_i_const(A, i, j):
    return A[[i, 2]]


def cols_ij(A, i, j):
    return A[:, [i % 3, j % 3]]


def rows_ij_col(A, i, j):
    return A[[i, j], 1]


def named_list_index(A, i, j):
    idx = [i, j]
    return A[idx]


def nested_list_index(A, i, j):
    return A[[[i], [j]]]


def take_ij(A, i, j):
    return np.take(A, [i, j], axis=0)


def swap_rows_fancy(A, i, j):
    A[[i, j]] = A[[j, i]]


def lu_partial_pivot(A):
    n = A.shape[0]
    piv = np.arange(n)
    for k in range(n - 1):
        p = k + np.argmax(np.abs(A[k:, k]))
        if p != k:
            A[[k, p]] = A[[p, k]]
            piv[[k, p]] = piv[[p, k]]
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return piv


LIST_INDEX_READS = [rows_ij, rows_ij_sum, rows_i_const, cols_ij, rows_ij_col, named_list_index,
                    nested_list_index, take_ij]


@pytest.mark.parametrize("f", LIST_INDEX_READS, ids=lambda f: f.__name__)
def test_vmap_of_list_index_of_batched_scalars(f):
    """vmap over i, j: each example gathers its own rows (the list was batched as a constant
    index, A[:, [i, j]]: every example gathered the rows of all examples, silently)."""
    A = np.arange(36.0).reshape(3, 4, 3)
    i, j = np.array([0, 1, 2]), np.array([3, 3, 0])
    want = np.stack([f(A[b], i[b], j[b]) for b in range(3)])
    for got in (vmap(f)(A, i, j), compiled(vmap(f), A, i, j)):
        assert np.shape(got) == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("f", [cols_ij, named_list_index], ids=lambda f: f.__name__)
def test_jit_list_index_of_arrays(f):
    """A[:, [i, j]] / A[[i, j]] of index arrays i, j: a (2, n) index array as in NumPy (jit
    lowered A[:] or a syntax error)."""
    A = np.arange(36.0).reshape(3, 4, 3)
    i, j = np.array([0, 1]), np.array([2, 2])
    want = f(A, i, j)
    got = compiled(f, A, i, j)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_vmap_of_fancy_row_swaps():
    """Row swaps by a list of batched indices (LU with partial pivoting), in place in the
    batched argument, as the loop over the examples does it."""
    A = np.arange(36.0).reshape(3, 4, 3)
    i, j = np.array([0, 1, 2]), np.array([3, 3, 0])
    want = A.copy()
    for b in range(3):
        swap_rows_fancy(want[b], i[b], j[b])
    for v in (vmap(swap_rows_fancy), jit(vmap(swap_rows_fancy), wait=True)):
        got = A.copy()
        v(got, i, j)
        np.testing.assert_array_equal(got, want)
    M = rng(7).random((3, 5, 5))
    want = M.copy()
    wpiv = np.stack([lu_partial_pivot(want[b]) for b in range(3)])
    for v in (vmap(lu_partial_pivot), jit(vmap(lu_partial_pivot), wait=True)):
        got = M.copy()
        np.testing.assert_array_equal(v(got), wpiv)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
