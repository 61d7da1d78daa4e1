"""NumPy functions a new user reached for in their first kernels (issue 22): np.pad in every
mode that copies elements, np.median / np.percentile / np.quantile of every element,
np.trace, np.diag / np.diagflat / np.triu / np.tril, np.argmin / np.argmax along an axis, and
rows picked by a boolean vector (X[m]) with reductions along an axis. Each compiles under jit
with no statement run in NumPy (a fallback is an error here) and gives NumPy's numbers; the
differentiable ones are checked under grad and jit(grad) against central finite differences.
"""
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from foreign_kernels import kmeans_step
from transpile import grad, jit, show
from transpile.errors import TranspileWarning


def compiled(f, *args):
    """f(*args) with any fallback to NumPy raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return f(*args)


def same(got, want, exact=False):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, exact)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def rng(seed):
    return np.random.default_rng(seed)


def check_grad(loss, *args):
    want = numerical_grad(loss, list(args))[0] if len(args) > 1 else numerical_grad(loss, args)
    np.testing.assert_allclose(grad(loss)(*args), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(compiled(jit(grad(loss)), *args), want, rtol=1e-6, atol=1e-7)


# ---- np.pad -------------------------------------------------------------------------------

PAD_CASES = [((4,), 1), ((4,), 7), ((3, 5), ((0, 2), (3, 1))), ((3, 5), 4), ((2, 1, 3), 2),
             ((1,), 3)]


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("shape, width", PAD_CASES)
def test_pad_compiles_with_numpys_values(mode, shape, width):
    def f(x):
        return np.pad(x, width, mode=mode)
    x = rng(len(shape)).normal(size=shape)
    same(compiled(jit(f), x), f(x), exact=True)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("shape, width", [((4,), 6), ((3, 5), ((0, 2), (3, 1))), ((2, 2), 3)])
def test_pad_gradient_in_every_copying_mode(mode, shape, width):
    """The border copies elements of x: their cotangents go back to those elements (the
    gradient used to be the inner block's only, silently wrong for edge/wrap/reflect/symmetric)."""
    def loss(x):
        p = np.pad(x, width, mode=mode)
        return np.sum(p ** 2 * np.cos(np.arange(p.size)).reshape(p.shape))
    check_grad(loss, rng(3).normal(size=shape))


def test_pad_gradient_of_a_computing_mode_is_refused_not_wrong():
    def loss(x):
        return np.sum(np.pad(x, 2, mode="linear_ramp") ** 2)
    with pytest.raises(NotImplementedError, match="linear_ramp"):
        grad(loss)(np.arange(4.0))


def test_image_blur_on_an_edge_padded_image():
    def blur(img):
        p = np.pad(img, 1, mode="edge")
        return (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] + p[1:-1, 1:-1]) / 5.0
    img = rng(4).normal(size=(6, 7))
    same(compiled(jit(blur), img), blur(img))
    check_grad(lambda im: np.sum(blur(im) ** 3), img)


# ---- order statistics, trace ---------------------------------------------------------------

def test_median_percentile_quantile_of_every_element():
    def stats(x):
        q1, q3 = np.percentile(x, [25, 75])
        return np.median(x), q3 - q1, np.quantile(x, 0.3), np.percentile(x, 90.0)
    for x in (rng(5).normal(size=33), rng(6).normal(size=(4, 6))):
        same(compiled(jit(stats), x), stats(x))
    x = rng(7).normal(size=20).astype(np.float32)      # NumPy interpolates in float32
    for got, want in zip(compiled(jit(stats), x), stats(x)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    check_grad(lambda x: np.median(x) * np.quantile(x, 0.3), rng(8).normal(size=9))


def test_median_of_integers_is_a_float():
    def f(x):
        return np.median(x)
    x = rng(9).integers(0, 10, size=12)
    same(compiled(jit(f), x), f(x))


def test_trace_with_an_offset():
    def f(M, u, v):
        M += np.outer(u, v)
        return M.trace() + np.trace(M, 1)
    r = rng(10)
    M, u, v = r.normal(size=(4, 4)), r.normal(size=4), r.normal(size=4)
    M1, M2 = M.copy(), M.copy()
    same(compiled(jit(f), M1, u, v), f(M2, u, v))
    same(M1, M2)
    Mi = r.integers(-5, 5, size=(3, 3)).astype(np.int32)
    same(compiled(jit(lambda a: np.trace(a)), Mi), np.trace(Mi))


# ---- diagonals, triangles, argmin along an axis ---------------------------------------------

def test_diag_diagflat_triu_tril_and_their_gradients():
    def band(A):
        d1 = np.diag(A, 1)
        U = np.triu(A, 1)
        L = np.tril(A, -1)
        return np.sum(d1 ** 3) + 2.0 * np.sum(np.diag(A)) + np.sum(U * U) - np.sum(L * A)

    def jacobi(A, b):
        x = np.zeros_like(b)
        D = np.diag(A)
        R = A - np.diagflat(D)
        for _ in range(20):
            x = (b - R @ x) / D
        return x
    r = rng(11)
    for shape in ((4, 4), (3, 6), (5, 2)):          # rectangular too
        A = r.normal(size=shape)
        same(compiled(jit(band), A), band(A))
        check_grad(band, A)
    A, b = np.eye(5) * 10 + r.normal(size=(5, 5)), r.normal(size=5)
    same(compiled(jit(jacobi), A, b), jacobi(A, b))
    check_grad(lambda A: np.sum(jacobi(A, b) ** 2), A)
    check_grad(lambda v: np.sum(np.diagflat(v, 1) * A), r.normal(size=4))


def test_argmin_argmax_along_an_axis():
    def f(X):
        return np.argmin(X, axis=1), X.argmax(axis=0), np.argmax(X, axis=-1)
    X = rng(12).normal(size=(7, 4))
    same(compiled(jit(f), X), f(X))


# ---- rows picked by a boolean vector --------------------------------------------------------

def test_rows_picked_by_a_mask_with_means_along_an_axis():
    r = rng(13)
    X = r.normal(size=(40, 2))
    C = np.array([[0.0, 0.0], [1.0, 1.0], [50.0, 50.0]])      # the last centre gets no rows
    same(compiled(jit(kmeans_step), X, C), kmeans_step(X, C))
    X2 = r.normal(size=(13, 2))            # another length of the selection, same code
    same(compiled(jit(kmeans_step), X2, C), kmeans_step(X2, C))


def test_rows_picked_by_a_mask_gradient():
    def energy(X):
        m = X[:, 0] > 0.0
        sel = X[m]
        return np.sum(sel ** 2) + 0.5 * np.sum(np.tanh(sel[:, 1])) + np.sum(sel.sum(axis=0) ** 2)
    X = rng(14).normal(size=(12, 3))
    same(compiled(jit(energy), X), energy(X))
    check_grad(energy, X)


def test_a_row_mask_of_another_length_is_numpys_error():
    def f(X, m):
        return np.sum(X[m], axis=0)
    X = np.arange(12.0).reshape(4, 3)
    with pytest.raises(IndexError), pytest.warns(TranspileWarning, match="NumPy version"):
        jit(f)(X, np.ones(3, bool))      # (no code for a mask NumPy refuses: NumPy's error)


def test_mean_of_picked_rows_gradient():
    def centre_energy(X):
        m = X[:, 1] < 0.3
        c = X[m].mean(axis=0)
        return np.sum(c ** 2) + np.sum(np.max(X, axis=0))
    check_grad(centre_energy, rng(15).normal(size=(11, 3)))


# ---- np.einsum ---------------------------------------------------------------------------

def ein_matmul(A, B):
    return np.einsum("ij,jk->ik", A, B)


def ein_bilinear(A, x, y):
    return np.einsum("ij,i,j->", A, x, y)


def ein_batched(T, B):
    return np.einsum("bij,jk->bik", T, B)


def ein_rowdot(A, C):
    return np.einsum("ij,ij->i", A, C)


def ein_implicit(A, B):
    return np.einsum("ij,jk", A, B)


def ein_diagonal(S):
    return np.einsum("ii->i", S), np.einsum("ii", S), np.einsum("ij->ji", S)


def test_einsum_compiles_as_loops_with_numpys_numbers():
    r = rng(16)
    A, B, C = r.normal(size=(3, 4)), r.normal(size=(4, 5)), r.normal(size=(3, 4))
    x, y, S, T = r.normal(size=3), r.normal(size=4), r.normal(size=(4, 4)), r.normal(size=(2, 3, 4))
    for f, args in [(ein_matmul, (A, B)), (ein_bilinear, (A, x, y)), (ein_batched, (T, B)),
                    (ein_rowdot, (A, C)), (ein_implicit, (A, B)), (ein_diagonal, (S,))]:
        got, want = compiled(jit(f), *args), f(*args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        else:
            assert np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    Ai = r.integers(-3, 3, size=(3, 4))
    same(compiled(jit(ein_matmul), Ai, Ai.T.copy()), ein_matmul(Ai, Ai.T.copy()))


def test_einsum_gradients_compile():
    r = rng(17)
    A, x, y = r.normal(size=(3, 4)), r.normal(size=3), r.normal(size=4)
    check_grad(lambda A: np.sin(ein_bilinear(A, x, y)) + np.sum(ein_matmul(A, A.T) ** 2), A)
    check_grad(lambda T: np.sum(np.tanh(ein_batched(T, A.T))), r.normal(size=(2, 3, 4)))


# ---- arrays sized by a length known at run time ----------------------------------------------

def unique_counts(labels):
    u = np.unique(labels)
    counts = np.zeros(len(u), dtype=np.int64)
    for i in range(len(u)):
        counts[i] = np.sum(labels == u[i])
    return u, counts


def padded_ones(x):
    n = int(np.sum(x > 0))
    out = np.ones((n, 2))
    for i in range(n):
        out[i, 1] = i * 0.5
    return out, np.full(n, 3.0)


def test_arrays_sized_by_a_run_time_length():
    r = rng(18)
    for labels in (r.integers(0, 5, size=30), r.integers(-2, 9, size=7)):
        same(compiled(jit(unique_counts), labels), unique_counts(labels))
    for x in (r.normal(size=9), r.normal(size=4), -np.ones(3)):
        same(compiled(jit(padded_ones), x), padded_ones(x))


# ---- a tuple of numbers written into a row ---------------------------------------------------

def lorenz(state, dt, steps):
    x, y, z = state
    traj = np.zeros((steps, 3))
    for k in range(steps):
        dx = 10.0 * (y - x)
        dy = x * (28.0 - z) - y
        dz = x * y - 8.0 / 3.0 * z
        x, y, z = x + dt * dx, y + dt * dy, z + dt * dz
        traj[k] = (x, y, z)
    return traj


def test_a_tuple_written_into_a_row_under_every_transform():
    """traj[k] = (x, y, z) crashed jit (AttributeError in the lowering) and gave grad a wrong
    gradient (the tuple's cotangent was not the row's)."""
    s = np.array([1.0, 1.2, 0.9])
    same(compiled(jit(lorenz), s, 0.01, 20), lorenz(s, 0.01, 20))
    check_grad(lambda s: np.sum(lorenz(s, 0.01, 20) ** 2), s)

    def one_row(s):
        x, y, z = s
        out = np.zeros((3, 3))
        out[1] = (x, y * y, 2)
        out[2, :] = [z, x, y]
        return np.sum(out ** 2)
    check_grad(one_row, s)
    from transpile import vmap
    S = np.stack([s, s * 0.5, s + 1.0])
    np.testing.assert_allclose(vmap(one_row)(S), [one_row(r) for r in S], rtol=1e-12)


# ---- convolve / correlate / interp / cross / norm(ord) / searchsorted / meshgrid -------------

def signal_stats(x, w, xq, xp):
    smooth = np.convolve(x, w, mode="valid")
    full = np.convolve(x, w)
    same_ = np.convolve(x, w, "same")
    corr = np.correlate(x, w, "valid")
    curve = np.interp(xq, xp, x[:xp.shape[0]])
    return smooth, full, same_, corr, curve, np.interp(0.5, xp, x[:xp.shape[0]])


def geometry(a, b, A):
    return (np.cross(a, b), np.cross(a[0], b[0]), np.linalg.norm(A), np.linalg.norm(A, 1),
            np.linalg.norm(A, np.inf), np.linalg.norm(a[0], 1), np.linalg.norm(A, "fro"),
            np.linalg.norm(a[1], -np.inf))


def bins_and_grid(edges, x, n):
    xs = np.linspace(-1.0, 1.0, n)
    X, Y = np.meshgrid(xs, xs[:3])
    return (np.searchsorted(edges, x), np.searchsorted(edges, x, side="right"),
            np.searchsorted(edges, 0.1), np.exp(-(X ** 2 + Y ** 2)))


def test_signal_geometry_bins_compile():
    r = rng(19)
    x, w = r.normal(size=20), np.array([0.25, 0.5, 0.25])
    xq, xp = np.linspace(-1.0, 6.0, 15), np.arange(6.0)
    same(compiled(jit(signal_stats), x, w, xq, xp), signal_stats(x, w, xq, xp))
    a, b, A = r.normal(size=(4, 3)), r.normal(size=(4, 3)), r.normal(size=(3, 5))
    same(compiled(jit(geometry), a, b, A), geometry(a, b, A))
    edges = np.linspace(-2.0, 2.0, 7)
    xb = r.normal(size=10)
    same(compiled(jit(bins_and_grid), edges, xb, 6), bins_and_grid(edges, xb, 6))


def test_signal_and_norm_gradients():
    r = rng(20)
    w, xp = np.array([0.25, 0.5, 0.25]), np.arange(6.0)
    check_grad(lambda x: np.sum(np.sin(np.convolve(x, w, "valid"))) +
               np.sum(np.correlate(x, w) ** 2), r.normal(size=12))
    check_grad(lambda fp: np.sum(np.interp(np.linspace(0.0, 5.0, 9), xp, fp) ** 2),
               r.normal(size=6))
    check_grad(lambda A: np.linalg.norm(A) * np.linalg.norm(A[0]), r.normal(size=(3, 5)))

    def crossed(A):   # (under jit(grad) the adjoints of np.cross and of norm(ord=1) still run
        # a helper in NumPy: checked eagerly here)
        return np.sum(np.cross(A[:, :3], A[:, 1:4]) ** 2) + np.linalg.norm(A[0], 1)
    A = r.normal(size=(3, 5))
    np.testing.assert_allclose(grad(crossed)(A), numerical_grad(crossed, [A]), rtol=1e-6)


def weighted_bins(idx, w):
    counts = np.bincount(idx)
    sums = np.bincount(idx, weights=w, minlength=6)
    return counts, sums, sums[:counts.shape[0]] / np.maximum(counts, 1)


def test_bincount_compiles_and_differentiates_in_the_weights():
    r = rng(21)
    for n in (12, 5):
        idx, w = r.integers(0, 4, size=n), r.normal(size=n)
        same(compiled(jit(weighted_bins), idx, w), weighted_bins(idx, w))
    idx = np.array([0, 2, 2, 5, 1, 2])

    def loss(w):
        return np.sum(np.bincount(idx, weights=w) ** 2) + np.sum(np.sin(np.bincount(idx, w, 8)))
    check_grad(loss, r.normal(size=6))


# ---- np.isclose, methods .clip / .round, np.flip --------------------------------------------

def closeness(x, y):
    return (np.isclose(x, y), np.isclose(x, 0.0, atol=0.5).sum(),
            np.isclose(x, y, rtol=0.1, equal_nan=True))


def test_isclose_as_numpy_with_infinities_and_nans():
    x = np.array([1.0, np.inf, np.nan, 0.3, -np.inf, 2.0, 1e-9])
    y = np.array([1.0 + 1e-9, np.inf, np.nan, 0.31, np.inf, 2.3, 0.0])
    same(compiled(jit(closeness), x, y), closeness(x, y))
    xi = np.arange(5)
    same(compiled(jit(lambda a: np.isclose(a, 2)), xi), np.isclose(xi, 2))


def chained(x):
    return (x.clip(-1, 1).round(2).sum(axis=(0, 1)), np.flip(x), np.flip(x, 1), np.fliplr(x),
            np.flipud(x), np.hstack((x[0], np.flip(x[0]))))


def test_clip_round_methods_and_flips():
    x = rng(22).normal(size=(3, 4)) * 2
    same(compiled(jit(chained), x), chained(x))
    check_grad(lambda x: np.sum(np.flip(x, 0) * np.arange(12.0).reshape(3, 4)) +
               np.sum(x.clip(-1, 1) ** 2), x)


# ---- np.add.at and friends -----------------------------------------------------------------

def scatter_add(idx, vals, M):
    out = np.zeros(5)
    np.add.at(out, idx, vals)
    rows = np.zeros((4, 3))
    np.add.at(rows, idx % 4, M)          # rows of M added to the rows idx names
    np.subtract.at(rows, np.array([0, 0]), 0.5)
    np.multiply.at(out, [1, 1], 2.0)
    return out, rows


def test_ufunc_at_accumulates_repeated_indices():
    r = rng(23)
    idx, vals, M = np.array([0, 2, 2, 4, 2, 1]), r.normal(size=6), r.normal(size=(6, 3))
    same(compiled(jit(scatter_add), idx, vals, M), scatter_add(idx, vals, M))
    check_grad(lambda v: np.sum(np.sin(scatter_add(idx, v, M)[0])), vals)
    check_grad(lambda M: np.sum(scatter_add(idx, vals, M)[1] ** 3), M)
    from transpile import vmap
    V = r.normal(size=(3, 6))
    np.testing.assert_allclose(vmap(lambda v: scatter_add(idx, v, M)[0])(V),
                               np.stack([scatter_add(idx, v, M)[0] for v in V]), rtol=1e-12)


def test_ufunc_at_other_forms_are_refused_by_name():
    """(np.maximum.at / np.minimum.at and a tuple of index vectors compile:
    tests/test_jit_new_rows.py)"""
    def f(a):
        np.power.at(a, [0, 1], 2.0)
        return a

    def g(a):
        np.add.at(a, np.array([[0], [1]]), 1.0)
        return a
    with pytest.raises(Exception, match="np.power.at"):
        jit(f)(np.zeros(3))
    # (a 2-D index array: the assert the rewrite adds fails with the function's name; the
    # index it reads first compiles: no fallback)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        with pytest.raises(AssertionError, match="np.add.at"):
            jit(g)(np.zeros((2, 2)))


def test_sort_gradient_compiles():
    def weighted_order(x):
        s = np.sort(x)
        return np.sum(s * np.linspace(1.0, 2.0, x.shape[0])) + np.median(x) ** 2
    check_grad(weighted_order, rng(24).normal(size=7))


# ---- an element read, then its array written -------------------------------------------------

def element_then_write(x, i):
    v = x[i]
    x[...] = x * 2.0
    return v


def swap_with_temp(a):
    a = a.copy()
    for j in range(a.shape[0] - 1):
        if a[j] > a[j + 1]:
            tmp = a[j]
            a[j] = a[j + 1]
            a[j + 1] = tmp
    return a


def element_and_row(x):
    M = np.outer(x, x)
    e = M[1, 1]
    r = M[1]
    M[1, 1] = 7.0 * x[0]
    return e * r + x         # e is the old element (a copy), r the row (a view: sees 7 x0)


def test_an_element_read_keeps_its_value_after_a_write():
    """x[i] of a vector is a number NumPy copied; it was re-read after the array was written
    (silently wrong under jit, backend='numpy' and grad); a row view still follows writes."""
    for backend in ("cpu", "numpy"):
        x = np.arange(4.0)
        x_np = x.copy()
        want = element_then_write(x_np, 2)
        got = compiled(jit(element_then_write, backend=backend), x, 2)
        same(got, want)
        same(x, x_np)
    a = rng(25).normal(size=8)
    same(compiled(jit(swap_with_temp), a), swap_with_temp(a))
    x = rng(26).normal(size=3)
    same(compiled(jit(element_and_row), x), element_and_row(x))
    check_grad(lambda x: np.sum(element_and_row(x) ** 2) + np.sum(swap_with_temp(x) * x), x)


def triangles(A, B):
    return (np.triu(A, 1), np.tril(A, -1), np.triu(A), np.tril(A, 2), np.triu(A, -3),
            np.tril(A, 9), np.triu(B, 1), np.tril(B))


@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (1, 1), (0, 3), (6, 6)])
def test_triu_and_tril_compile_to_one_pass_with_numpys_values(shape):
    """np.triu / np.tril of a matrix are runtime/backends/numba_arrays.py's triangle (Numba's
    own took 16 ms on 1000 x 1200, NumPy 0.9 ms): values and dtypes as NumPy's."""
    r = np.random.default_rng(sum(shape))
    A, B = r.standard_normal(shape), r.random(shape) > 0.5
    j = jit(triangles, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = j(A, B)
    for g, w in zip(got, triangles(A, B)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert "triangle(" in j.source


# ---- keywords other people pass: argsort kind=, argmax keepdims=, np.take_along_axis ----------

def stable_ranks(x):
    order = np.argsort(x, kind="stable")
    r = np.empty_like(order)
    r[order] = np.arange(x.shape[0])
    return r


def column_orders(X):
    return np.argsort(X, axis=0, kind="mergesort")


def weighted_sorted(x):
    return np.sum(np.sort(x, kind="stable") * np.arange(x.shape[0]))


def best_of_each_row(X):
    i = np.argmax(X, axis=1, keepdims=True)
    return np.take_along_axis(X, i, axis=1)


def picks_squared(X, idx):
    return np.sum(np.take_along_axis(X, idx, axis=1) ** 2)


def picks_down_columns(X, idx):
    return np.sum(np.take_along_axis(X, idx, axis=0) * np.arange(1.0, 4.0))


_TIES = np.array([3.0, 1.0, 3.0, 1.0, 2.0, 2.0, 3.0, 1.0])


@pytest.mark.parametrize("f, args", [
    (stable_ranks, (_TIES,)),
    (stable_ranks, (np.round(np.random.default_rng(1).random(1000) * 5),)),   # NumPy's sort
    (column_orders, (np.round(np.random.default_rng(0).random((300, 3)) * 3),)),
    (weighted_sorted, (_TIES,)),
    (best_of_each_row, (np.random.default_rng(2).random((5, 4)),)),
])
def test_sort_keywords_and_keepdims_compile(f, args):
    same(compiled(jit(f), *args), f(*args), exact=True)


@pytest.mark.parametrize("f, idx", [
    (picks_squared, np.array([[0, 0, 2], [1, 1, 1], [2, 0, -1], [0, 2, 2]])),   # repeats
    (picks_squared, np.array([[0], [2], [2], [1]])),
    (picks_down_columns, np.array([[0, 3, 3], [3, 3, 0]])),
])
def test_take_along_axis_compiles_and_adds_the_cotangents_of_repeated_indices(f, idx):
    X = np.random.default_rng(3).random((4, 3))
    same(compiled(jit(f), X, idx), f(X, idx))
    want = numerical_grad(lambda a: f(a, idx), [X.copy()])
    np.testing.assert_allclose(grad(f)(X, idx), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(compiled(jit(grad(f)), X, idx), want, rtol=1e-6, atol=1e-8)


def rows_with_a_nonpositive(X):
    return np.any(X <= 0, axis=1)


def masks_along_axes(X):
    return (X > 0.5).all(axis=-1), (X > 0.5).any(axis=0), np.count_nonzero(X > 0.5, axis=1), \
        np.all(X > 0.0, axis=0)


@pytest.mark.parametrize("f, X", [
    (rows_with_a_nonpositive, np.random.default_rng(0).random((5, 4)) - 0.1),
    (masks_along_axes, np.where(np.arange(20).reshape(5, 4) % 7 == 3, np.nan,
                                np.random.default_rng(1).random((5, 4)))),   # NaN is true
    (rows_with_a_nonpositive, np.random.default_rng(2).random((3, 4, 5)) - 0.1),
])
def test_any_all_count_nonzero_along_an_axis_compile(f, X):
    same(compiled(jit(f), X), f(X), exact=True)


def most_common(a):
    vals, counts = np.unique(a, return_counts=True)
    return vals[np.argmax(counts)]


def relabel(a):
    u, inv = np.unique(a, return_inverse=True)
    return inv, len(u)


@pytest.mark.parametrize("f", [most_common, relabel])
@pytest.mark.parametrize("a", [np.array([[3, 1, 3], [2, 3, 1]]), np.array([3, 1, 3, 2, 3, 1]),
                               np.array([1.0, np.nan, np.nan, 2.0, 1.0])])
def test_unique_with_counts_or_inverse_compiles(f, a):
    """np.unique(a, return_counts=True) / return_inverse=True (an error before): the positions
    are np.searchsorted in the unique values, the counts their np.bincount."""
    got, want = compiled(jit(f), a), f(a)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def _count_cases():
    r = np.random.default_rng(7)
    x = r.random((40, 3))
    x[0, 0] = 0.0
    x[3, 1] = 0.0
    xi = (x * 3).astype(np.int64)
    return [
        (lambda a, fill: np.count_nonzero(a != fill) / a.size, (x, 0.0)),
        (lambda m: np.count_nonzero(m), (x > 0.5,)),
        (lambda a: np.count_nonzero(a), (xi,)),
        (lambda a: np.count_nonzero(a), (x.astype(np.float32),)),
        (lambda a: np.count_nonzero(a), (x + 1j * (x > 0.7),)),
        (lambda a: np.count_nonzero(a, axis=0), (xi,)),
        (lambda a: np.count_nonzero(a[1:] - a[:-1]) + np.count_nonzero(a > 0.5), (x,)),
        (lambda a: np.count_nonzero(a), (np.zeros((0, 3)),)),
    ]


@pytest.mark.parametrize("case", range(8))
def test_count_nonzero_is_a_sum_fused_into_its_loop(case):
    """np.count_nonzero of a whole array is the sum of x != 0 (of a mask: the mask), folded
    into the loop that computes it: NumPy's count (an int64, exact), no boolean array made."""
    f, args = _count_cases()[case]
    got, want = compiled(jit(f), *args), f(*args)
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if case == 0:
        code = [ln for ln in show(jit(f), *args).splitlines() if not ln.strip().startswith("#")]
        assert not [ln for ln in code if "np.count_nonzero" in ln or "np.empty" in ln]


def centroid_update(X, C):
    """A k-means step as people write it: counts from np.bincount (a length read at run
    time), rows picked by `counts > 0`, divided by `counts[nz, None]`."""
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    lab = np.argmin(d, axis=1)
    newC = np.zeros_like(C)
    counts = np.bincount(lab, minlength=C.shape[0])
    np.add.at(newC, lab, X)
    nz = counts > 0
    newC[nz] /= counts[nz, None]
    newC[~nz] = C[~nz]
    return newC, lab, counts[nz, None, None]


@pytest.mark.parametrize("k", [3, 7])
def test_rows_picked_by_a_mask_of_run_time_length(k):
    r = np.random.default_rng(k)
    X, C = r.standard_normal((60, 2)), r.standard_normal((k, 2)) * 3
    C[0] = 50.0                                   # an empty cluster: ~nz picks it
    got = compiled(jit(centroid_update), X, C)
    want = centroid_update(X, C)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)


def mask_of_other_length(x, m):
    keep = np.bincount(m) > 0             # its length: max(m) + 1, read at run time
    x[keep] = 0.0
    return x


def test_a_mask_of_run_time_length_and_another_shape_raises_numpys_error():
    x = np.arange(4.0)
    np.testing.assert_array_equal(jit(mask_of_other_length)(x.copy(), np.array([0, 2, 3])),
                                  mask_of_other_length(x.copy(), np.array([0, 2, 3])))
    with pytest.raises(IndexError), pytest.warns(TranspileWarning, match="another shape"):
        jit(mask_of_other_length)(x.copy(), np.array([0, 5]))
