"""Values whose length depends on the data, under jit (issue 22): boolean-mask selections,
np.nonzero / np.argwhere / np.flatnonzero, slices with run-time bounds (sliding windows,
triangular solves reading y[:i]). They compile without a statement run in NumPy (a fallback
is an error here), the lowered code reads their lengths at run time, and the numbers are
NumPy's on data giving other lengths; grad and jit(grad) are checked against finite
differences."""
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit, show
from transpile.errors import TranspileWarning


def compiled(f, *args):
    """jit(f)(*args) with any fallback to NumPy raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return jit(f)(*args)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def rng(seed):
    return np.random.default_rng(seed)


# ---- boolean-mask selections -------------------------------------------------------------------

def clipped_mean(x, lo, hi):
    keep = (x > lo) & (x < hi)
    sel = x[keep]
    return np.sum(sel) / len(sel), sel


def test_mask_selection_and_its_length():
    f = jit(clipped_mean)
    for seed, n in ((0, 50), (1, 50), (2, 73)):       # other counts, another size
        x = rng(seed).standard_normal(n)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            same(f(x, -0.5, 1.0), clipped_mean(x, -0.5, 1.0))


def test_mask_selection_lowered_with_a_run_time_length():
    x = rng(3).standard_normal(20)
    text = show(jit(clipped_mean), x, -0.5, 1.0)
    assert "[keep]" in text and "len(sel)" in text
    assert "runs in NumPy" not in text


def mask_of_a_matrix(A):
    big = A[np.abs(A) > 1.0]
    return big * 2.0 + 1.0, big.size


def test_mask_of_a_matrix_selects_in_numpy_order():
    A = rng(4).standard_normal((6, 5))
    same(compiled(mask_of_a_matrix, A), mask_of_a_matrix(A))


def test_nothing_selected():
    x = -np.abs(rng(5).standard_normal(10)) - 1.0
    same(compiled(mask_of_a_matrix, x), mask_of_a_matrix(x))


def masked_energy(x, y):
    d = x - y
    m = np.abs(d) < 1.0
    return np.sum(d[m] ** 2) + 0.5 * np.sum(x ** 2)


def test_mask_selection_grad_and_jit_grad_against_finite_differences():
    x, y = rng(6).standard_normal(30), rng(7).standard_normal(30)
    want = numerical_grad(masked_energy, [x, y])
    np.testing.assert_allclose(grad(masked_energy)(x, y), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(compiled(grad(masked_energy), x, y), want, rtol=1e-6, atol=1e-6)


def test_a_mask_of_another_shape_is_numpys_error():
    def f(x, m):
        return np.sum(x[m])
    x = np.arange(6.0)
    with pytest.raises(IndexError), pytest.warns(TranspileWarning, match="NumPy version"):
        jit(f)(x, np.ones(5, bool))      # (no code for a mask NumPy refuses: NumPy's error)
    same(jit(f)(x, x > 2.0), f(x, x > 2.0))


# ---- np.nonzero / np.where(c) / np.argwhere / np.flatnonzero --------------------------------------

def peaks(x):
    """Indices of local maxima, visited in a loop."""
    up = (x[1:-1] > x[:-2]) & (x[1:-1] > x[2:])
    idx = np.nonzero(up)[0] + 1
    total = 0.0
    for k in range(len(idx)):
        total += x[idx[k]]
    return idx, total


def test_nonzero_indices_read_in_a_loop():
    f = jit(peaks)
    for seed, n in ((8, 40), (9, 40), (10, 17)):
        x = rng(seed).standard_normal(n)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            same(f(x), peaks(x))


def coords(A, t):
    rc = np.argwhere(A > t)
    flat = np.flatnonzero(A.ravel() > t)
    return rc, flat, A.ravel()[flat]


def test_argwhere_and_flatnonzero():
    A = rng(11).standard_normal((5, 7))
    same(compiled(coords, A, 0.3), coords(A, 0.3))


def where_sum(x, y):
    idx = np.where(x > y)
    return np.sum(x[idx] - y[idx]) if len(idx[0]) > 0 else 0.0


def test_where_tuple_gathers():
    x, y = rng(12).standard_normal(25), rng(13).standard_normal(25)
    same(compiled(where_sum, x, y), where_sum(x, y))


# ---- slices with run-time bounds ------------------------------------------------------------------

def forward_substitution(L, b):
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        y[i] = (b[i] - np.dot(L[i, :i], y[:i])) / L[i, i]
    return y


def back_substitution(U, b):
    n = b.shape[0]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def _triangular(seed, n):
    M = rng(seed).standard_normal((n, n))
    return np.tril(M) + n * np.eye(n), rng(seed + 1).standard_normal(n)


def test_forward_substitution_reads_y_up_to_i():
    L, b = _triangular(14, 9)
    got = compiled(forward_substitution, L, b)
    same(got, forward_substitution(L, b))
    np.testing.assert_allclose(L @ got, b, rtol=1e-12)
    L2, b2 = _triangular(16, 13)
    same(compiled(forward_substitution, L2, b2), forward_substitution(L2, b2))


def test_back_substitution_reads_x_after_i():
    L, b = _triangular(18, 8)
    U = L.T.copy()
    same(compiled(back_substitution, U, b), back_substitution(U, b))


def forward_substitution_loss(L, b):
    return np.sum(forward_substitution(L, b) ** 2)


def test_forward_substitution_grad_against_finite_differences():
    L, b = _triangular(20, 6)
    want_b = numerical_grad(forward_substitution_loss, [L, b], argnum=1)
    np.testing.assert_allclose(compiled(grad(forward_substitution_loss, argnums=1), L, b),
                               want_b, rtol=1e-6, atol=1e-7)
    want_L = numerical_grad(forward_substitution_loss, [L, b])
    got_L = compiled(grad(forward_substitution_loss), L, b)
    np.testing.assert_allclose(np.tril(got_L), np.tril(want_L), rtol=1e-6, atol=1e-7)


def moving_max(x, w):
    """A sliding window whose bounds are clipped at the ends (lengths vary)."""
    n = x.shape[0]
    out = np.empty(n)
    for i in range(n):
        lo = max(0, i - w)
        hi = min(n, i + w + 1)
        out[i] = np.max(x[lo:hi])
    return out


def test_sliding_window_with_clipped_bounds():
    x = rng(22).standard_normal(30)
    same(compiled(moving_max, x, 3), moving_max(x, 3))


def trailing_mean(x, w):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        seg = x[max(0, i - w + 1):i + 1]
        out[i] = np.sum(seg) / seg.shape[0]
    return out


def trailing_mean_loss(x):
    return np.sum(trailing_mean(x, 4) ** 2)


def test_trailing_window_jit_and_grad():
    x = rng(23).standard_normal(15)
    same(compiled(trailing_mean, x, 4), trailing_mean(x, 4))
    want = numerical_grad(trailing_mean_loss, [x])
    np.testing.assert_allclose(compiled(grad(trailing_mean_loss), x), want, rtol=1e-6,
                               atol=1e-7)


# ---- np.ndindex: an index that is a tuple ----------------------------------------------------------

def ndindex_fill(A):
    out = np.empty_like(A)
    for idx in np.ndindex(A.shape):
        i, j = idx
        out[idx] = A[idx] * (i + 1) - j
    return out


def ndindex_loss(A):
    return np.sum(ndindex_fill(A) ** 2)


def test_ndindex_tuple_index_jit_and_jit_grad():
    A = rng(24).standard_normal((4, 3))
    same(compiled(ndindex_fill, A), ndindex_fill(A))
    want = numerical_grad(ndindex_loss, [A])
    np.testing.assert_allclose(compiled(grad(ndindex_loss), A), want, rtol=1e-6, atol=1e-6)


# ---- one variable holding slices of different lengths ---------------------------------------------

def best_prefix(x):
    """The prefix with the largest sum: `best` holds slices of several lengths."""
    best = x[:1]
    for i in range(2, x.shape[0] + 1):
        seg = x[:i]
        if np.sum(seg) > np.sum(best):
            best = seg
    return best * 1.0, len(best)


def test_a_variable_holding_slices_of_several_lengths_is_one_type():
    for seed in (25, 26, 27):
        x = rng(seed).standard_normal(12)
        same(compiled(best_prefix, x), best_prefix(x))


def growing_segments(x):
    seg = x[:0]
    total = 0.0
    for i in range(x.shape[0]):
        seg = x[i // 2:i + 1]
        total += np.sum(seg * seg) / seg.shape[0]
    return total, seg


def test_a_loop_carried_window_of_changing_length():
    x = rng(28).standard_normal(11)
    same(compiled(growing_segments, x), growing_segments(x))


def length_read_before_the_rebinding(x):
    best = x[:1]
    total = 0
    for i in range(2, x.shape[0] + 1):
        total += best.shape[0] + len(best)
        if np.sum(x[:i]) > np.sum(best):
            best = x[:i]
    return total, best.size


def test_a_length_read_in_the_loop_before_the_rebinding():
    for seed in (29, 30):
        x = rng(seed).standard_normal(10)
        same(compiled(length_read_before_the_rebinding, x), length_read_before_the_rebinding(x))


# ---- what the compiled code does not handle runs the NumPy version, never a wrong number ---------

def mask_times(x, y, t):
    return x[x > t] * y[y > t]


def test_lengths_that_differ_broadcast_or_raise_as_in_numpy():
    f = jit(mask_times, wait=True)
    x, y = np.array([0.5, 2.0, 3.0, -1.0]), np.array([4.0, 5.0, -2.0, 0.0])
    same(compiled(mask_times, x, y, 1.0), mask_times(x, y, 1.0))       # 2 and 3 selected
    y1 = np.array([4.0, -5.0, -2.0, -7.0])                              # one selected
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        same(f(x, y1, 1.0), mask_times(x, y1, 1.0))                     # NumPy broadcasts
        assert f.last_tier == "compiled"
        with pytest.raises(ValueError, match="could not be broadcast"):
            f(x, np.array([4.0, 5.0, 6.0, -7.0]), 1.0)                  # 2 against 3


def loop_over_flatnonzero(x):
    s = 0.0
    for k in np.flatnonzero(x > 0):
        s += x[k] * k
    return s


def square_where_large(x):
    idx = np.nonzero(x > 0.2)[0]
    out = np.zeros_like(x)
    out[idx] = x[idx] ** 2
    return out, np.mean(x[idx])


def rows_and_columns(A):
    r, c = np.nonzero(A > 0.5)
    return A[r, c].sum(), r * 10 + c


@pytest.mark.parametrize("f, shape", [(loop_over_flatnonzero, (12,)),
                                      (square_where_large, (12,)),
                                      (rows_and_columns, (3, 4))])
def test_nonzero_styles(f, shape):
    for seed in (31, 32):
        x = rng(seed).standard_normal(shape)
        same(compiled(f, x), f(x))


def square_where_large_loss(x):
    out, m = square_where_large(x)
    return np.sum(out * x) + m


def test_a_write_at_nonzero_indices_grad():
    x = rng(33).standard_normal(10)
    want = numerical_grad(square_where_large_loss, [x])
    np.testing.assert_allclose(grad(square_where_large_loss)(x), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(compiled(grad(square_where_large_loss), x), want, rtol=1e-6,
                               atol=1e-7)


def nonzero_of_numbers(counts, x):
    idx = np.flatnonzero(counts)
    return idx, np.argwhere(counts - 1.5)[:, 0], x[np.nonzero(counts)[0]]


def test_nonzero_of_numbers_counts_what_is_not_zero():
    counts = np.array([0, 3, 0, 0, 1, 7, 0, 2])
    x = rng(34).standard_normal(8)
    same(compiled(nonzero_of_numbers, counts, x), nonzero_of_numbers(counts, x))
