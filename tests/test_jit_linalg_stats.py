"""numpy.linalg factorizations and statistics under jit (issue 22, "jit on code other people
write"): np.linalg.eigh / eigvalsh (UPLO 'L' and 'U'), svd (values, vectors, full or reduced),
qr, pinv, lstsq (all four results, the residuals' length known only at run time),
matrix_rank, np.kron, np.rot90, np.split / np.array_split, np.ptp, np.cov, np.corrcoef,
np.median / np.percentile / np.quantile along axes, and np.put (a statement writing into its
argument).

Each compiles with Numba (the compiled tier is asserted; a fallback to NumPy, a
TranspileWarning, is an error here) and gives NumPy's numbers and dtypes on the same inputs.
Eigenvectors and singular vectors are defined up to sign: the compiled ones are compared with
NumPy's own (a flipped sign fails), never up to sign. Argument writes are compared with
NumPy's; gradients under grad and jit(grad) with central finite differences in float64.
"""
import copy
import importlib.util
import os
import tempfile
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit
from transpile.errors import TranspileWarning

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def rng(seed):
    return np.random.default_rng(seed)


def same(got, want, rtol=1e-12, exact=False, where="result"):
    """got equals want: structure, shape, dtype; exact for ints/bools (and where asked)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, rtol, exact, f"{where}[{i}]")
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (where, g.shape, w.shape)
    assert g.dtype == w.dtype, (where, g.dtype, w.dtype)
    if exact or w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=where)
    else:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=where)


def run(f, *args, rtol=1e-12, exact=False):
    """jit(f) (waiting for the compiled tier) twice on fresh copies of args, against f on
    copies: the results and the arguments after the call must be NumPy's."""
    j = jit(f, wait=True)
    for _ in range(2):
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        got = j(*mine)
        assert j.last_tier == "compiled"
        want = f(*theirs)
        same(got, want, rtol, exact)
        for i, (a, b) in enumerate(zip(mine, theirs)):
            same(a, b, rtol, True, f"argument {i} after the call")
    return got


def check_grad(loss, *args, argnum=0, rtol=1e-6):
    """grad and jit(grad) of loss in argument argnum against central differences."""
    want = numerical_grad(loss, list(args), argnum)
    g = grad(loss, argnums=argnum)
    np.testing.assert_allclose(g(*args), want, rtol=rtol, atol=rtol * 0.1)
    jg = jit(g, wait=True)
    np.testing.assert_allclose(jg(*args), want, rtol=rtol, atol=rtol * 0.1)
    assert jg.last_tier == "compiled"


def sym(n, seed):
    a = rng(seed).normal(size=(n, n))
    return a + a.T


# ---- eigh / eigvalsh ---------------------------------------------------------------------------


def eigh_both(a):
    w, v = np.linalg.eigh(a)
    return w, v


def eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return w, v, np.linalg.eigvalsh(a, UPLO="U"), np.linalg.eigvalsh(a)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_eigh_vectors_are_numpys_signs_included(n, seed):
    """The vectors are NumPy's own (dsyevd on the triangle NumPy reads), not another valid
    set: a sign flipped column fails the comparison."""
    run(eigh_both, sym(n, seed), rtol=1e-10)
    a = rng(seed + 10).normal(size=(n, n))        # not symmetric: one triangle is read
    run(eigh_upper, a, rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_eigh_of_float32_and_int_input_has_numpys_dtype_and_signs(seed):
    """NumPy computes float32 (and integer) input in float64 and casts back: so does jit."""
    a = sym(5, seed)
    run(eigh_both, a.astype(np.float32), rtol=1e-6)
    run(eigh_upper, a.astype(np.float32), rtol=1e-6)
    run(eigh_both, np.round(a * 3).astype(np.int64), rtol=1e-10)


def test_eigh_of_nan_as_numpy():
    """LAPACK is called as NumPy calls it (Numba's own np.linalg.eigh refuses NaN): NaN out
    where NumPy gives NaN, NumPy's LinAlgError where it does not converge."""
    got = run(eigh_both, np.full((2, 2), np.nan))
    assert np.isnan(got[0]).all()
    with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
        eigh_both(np.full((3, 3), np.nan))
    with pytest.raises(np.linalg.LinAlgError, match="did not converge"):
        jit(eigh_both, wait=True)(np.full((3, 3), np.nan))


# ---- svd -----------------------------------------------------------------------------------


def svd_all(a):
    u, s, vh = np.linalg.svd(a)
    u2, s2, vh2 = np.linalg.svd(a, full_matrices=False)
    return u, s, vh, u2, s2, vh2, np.linalg.svd(a, compute_uv=False)


def svd_values_only(a):
    return np.linalg.svd(a, compute_uv=False)


def svd_hermitian_values(a):
    return np.linalg.svd(a, compute_uv=False, hermitian=True)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (4, 4), (1, 3), (5, 1)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_svd_factors_are_numpys(shape, seed):
    a = rng(seed).normal(size=shape)
    run(svd_all, a, rtol=1e-10)
    run(svd_all, a.astype(np.float32), rtol=1e-6)


def test_svd_values_without_vectors_are_numpys_bits():
    """np.linalg.svd(x, compute_uv=False) asks LAPACK for no vectors, as NumPy does (the
    values computed with vectors differ in the last bits)."""
    for seed in range(5):
        a = rng(seed).normal(size=(6, 4))
        run(svd_values_only, a, exact=True)
        run(svd_values_only, a.T.copy(), exact=True)
    run(svd_hermitian_values, sym(4, 3), exact=True)


# ---- qr ------------------------------------------------------------------------------------


def qr_all(a):
    q, r = np.linalg.qr(a)
    return q, r, np.linalg.qr(a, mode="r")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_qr_factors_are_numpys(shape):
    a = rng(4).normal(size=shape)
    run(qr_all, a, rtol=1e-10)
    run(qr_all, a.astype(np.float32), rtol=1e-6)


# ---- pinv, matrix_rank ----------------------------------------------------------------------


def pinvs(a):
    return np.linalg.pinv(a), np.linalg.pinv(a, rcond=1e-3), np.linalg.pinv(a, 0.5)


def ranks(a):
    return (np.linalg.matrix_rank(a), np.linalg.matrix_rank(a, tol=0.5),
            np.linalg.matrix_rank(a, rtol=0.2), np.linalg.matrix_rank(a @ a.T, hermitian=True))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_pinv_and_matrix_rank(shape):
    a = rng(5).normal(size=shape)
    run(pinvs, a, rtol=1e-10)
    run(pinvs, a.astype(np.float32), rtol=1e-5)
    low = a.copy()
    low[:, -1] = low[:, 0]            # rank deficient: a zero singular value is cut
    run(pinvs, low, rtol=1e-9)
    for x in (a, low, a.astype(np.float32), np.zeros(shape)):
        run(ranks, x)


# ---- lstsq ---------------------------------------------------------------------------------


def lstsq4(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


def lstsq_rcond(a, b):
    return np.linalg.lstsq(a, b, rcond=0.3)


@pytest.mark.parametrize("shape", [(6, 3), (3, 3), (2, 4)])
@pytest.mark.parametrize("ncols", [None, 2])
def test_lstsq_all_four_results(shape, ncols):
    """x, residuals (only for full column rank and more rows than columns), rank (NumPy's
    int32) and singular values."""
    r = rng(6)
    a = r.normal(size=shape)
    b = r.normal(size=shape[0] if ncols is None else (shape[0], ncols))
    got = run(lstsq4, a, b, rtol=1e-10)
    assert got[1].shape == ((1,) if ncols is None else (ncols,)) if shape[0] > shape[1] \
        else got[1].shape == (0,)
    run(lstsq4, a.astype(np.float32), b.astype(np.float32), rtol=1e-5)
    run(lstsq_rcond, a, b, rtol=1e-10)


def test_lstsq_residuals_length_is_read_at_run_time():
    """One compiled function serves a full-rank matrix (residuals) and a rank-deficient one
    of the same shape (no residuals): NumPy's data-dependent length, both ways."""
    r = rng(7)
    a, b = r.normal(size=(6, 3)), r.normal(size=6)
    low = a.copy()
    low[:, 2] = 2.0 * low[:, 1]
    j = jit(lstsq4, wait=True)
    for x in (a, low, a, low):
        same(j(x, b), lstsq4(x, b), 1e-10)
        assert j.last_tier == "compiled"
    assert j(a, b)[1].shape == (1,) and j(low, b)[1].shape == (0,)

    def res_sum(a, b):
        x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
        return res.sum() * 2.0 + rank
    run(res_sum, a, b, rtol=1e-10)
    run(res_sum, low, b, rtol=1e-10)


# ---- kron, rot90, split --------------------------------------------------------------------


def kron(a, b):
    return np.kron(a, b)


@pytest.mark.parametrize("sa, sb", [((2, 2), (2, 3)), ((3,), (2, 2)), ((2, 1, 2), (3,)),
                                    ((4,), (3,))])
def test_kron(sa, sb):
    r = rng(8)
    run(kron, r.normal(size=sa), r.normal(size=sb), exact=True)
    run(kron, r.integers(-3, 4, sa), r.normal(size=sb).astype(np.float32), exact=True)


def rotations(x):
    return (np.rot90(x), np.rot90(x, 2), np.rot90(x, -1), np.rot90(x, 4), np.rot90(x, 3),
            np.rot90(x, 1, (1, 0)))


def rotations_3d(x):
    return np.rot90(x, 1, axes=(0, 2)), np.rot90(x, 3, axes=(2, 1))


def test_rot90_every_k_and_axes():
    run(rotations, rng(9).normal(size=(3, 4)), exact=True)
    run(rotations, rng(9).integers(0, 9, (2, 5)), exact=True)
    run(rotations_3d, rng(9).normal(size=(2, 3, 4)), exact=True)


def split_unpacked(x):
    a, b = np.split(x, 2)
    c, d, e = np.split(x, [1, 3], axis=0)
    return np.concatenate((b, a)), c * 2, d, e


def split_iterated(x):
    parts = np.array_split(x, 3)
    total = np.array([p.sum() for p in parts])
    cols = [np.sum(p) for p in np.array_split(x, [2, -1], axis=1)]
    return total, np.array(cols)


def split_columns(x):
    return np.split(x, [1, 3], axis=1)[1] * 2


def test_split_and_array_split_unpacked_or_iterated():
    x = rng(10).normal(size=(6, 4))
    run(split_unpacked, x, exact=True)
    run(split_iterated, rng(10).normal(size=(7, 4)))
    run(split_columns, x, exact=True)


def vsplit_first(x):
    return np.vsplit(x, 2)[0]


def dsplit_first(x):
    return np.dsplit(x, 2)[0]


def test_vsplit_and_dsplit_of_too_few_dimensions_raise_as_numpy():
    """np.vsplit of a vector used to split it along axis 0 (NumPy raises), under jit and
    grad: silently a value where NumPy has none."""
    for f, x in ((vsplit_first, np.arange(4.0)), (dsplit_first, np.ones((2, 4)))):
        with pytest.raises(ValueError, match="only works on arrays of"):
            f(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TranspileWarning)
            with pytest.raises(ValueError, match="only works on arrays of"):
                jit(f, wait=True)(x)
        with pytest.raises(ValueError, match="only works on arrays of"):
            grad(lambda v: np.sum(f(v)))(x)
    run(vsplit_first, np.ones((4, 2)), exact=True)
    run(dsplit_first, np.arange(8.0).reshape(1, 2, 4), exact=True)


def test_uneven_split_raises_as_numpy():
    def f(x):
        a, b = np.split(x, 2)
        return a
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        with pytest.raises(ValueError, match="equal division"):
            jit(f, wait=True)(np.ones(5))


# ---- ptp, cov, corrcoef --------------------------------------------------------------------


def ptps(x):
    return np.ptp(x), np.ptp(x, axis=0), np.ptp(x, axis=1, keepdims=True), np.ptp(x, axis=(0, 1))


def test_ptp():
    x = rng(11).normal(size=(4, 5))
    run(ptps, x, exact=True)
    run(ptps, x.astype(np.float32), exact=True)
    nan = x.copy()
    nan[1, 2] = np.nan
    run(ptps, nan, exact=True)
    # integers wrap as NumPy's subtraction does
    run(ptps, np.array([[-100, 100], [5, -7]], dtype=np.int8), exact=True)


COV = [("np.cov(x)", [(3, 5)]), ("np.cov(x)", [(6,)]), ("np.cov(x, rowvar=False)", [(5, 2)]),
       ("np.cov(x, y)", [(5,), (5,)]), ("np.cov(x, y, rowvar=False, bias=True)", [(4, 2), (4,)]),
       ("np.cov(x, ddof=2)", [(3, 6)]), ("np.cov(x, y, rowvar=False)", [(4, 3), (4, 2)]),
       ("np.cov(x, aweights=[1.0, 2.0, 0.5, 1.5], ddof=1)", [(2, 4)]),
       ("np.cov(x, fweights=[1, 2, 1, 3], ddof=0)", [(2, 4)]),
       ("np.corrcoef(x)", [(3, 5)]), ("np.corrcoef(x, y)", [(5,), (5,)]),
       ("np.corrcoef(x, rowvar=False)", [(5, 3)]), ("np.corrcoef(x)", [(7,)]),
       ("np.corrcoef(x, y)[0, 1]", [(8,), (8,)])]


_MADE = {}
_DIR = tempfile.mkdtemp(prefix="linalg_stats_")


def _function(expr, n):
    """`def f(x[, y]): return expr` as real source (transpile reads the source it
    transforms), in a module of its own."""
    key = (expr, n)
    if key not in _MADE:
        path = os.path.join(_DIR, f"case_{len(_MADE)}.py")
        with open(path, "w") as fh:
            fh.write(f"import numpy as np\n\n\ndef f({', '.join('xy'[:n])}):\n"
                     f"    return {expr}\n")
        spec = importlib.util.spec_from_file_location(f"linalg_stats_case_{len(_MADE)}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _MADE[key] = mod.f
    return _MADE[key]


@pytest.mark.parametrize("expr, shapes", COV)
def test_cov_and_corrcoef(expr, shapes):
    f = _function(expr, len(shapes))
    for dtype in (np.float64, np.float32, np.int64):
        args = [(rng(12).random(s) * 10).astype(dtype) for s in shapes]
        run(f, *args, rtol=1e-13)


# ---- order statistics along axes -------------------------------------------------------------


ORDER = ["np.median(x, axis=0)", "np.median(x, axis=1)", "np.median(x)",
         "np.median(x, axis=-1, keepdims=True)", "np.percentile(x, 75, axis=0)",
         "np.percentile(x, [10, 50, 90], axis=1)", "np.quantile(x, 0.3, axis=0, keepdims=True)",
         "np.quantile(x, 0.3)", "np.percentile(x, 40.0)", "np.quantile(x, [0.0, 1.0, 0.5])",
         "np.quantile(x, 1, axis=0)", "np.quantile(x, [0, 1], axis=1)",
         "np.quantile(x, 0.37, axis=0, method='lower')",
         "np.quantile(x, 0.37, axis=0, method='higher')",
         "np.quantile(x, [0.37, 0.5, 0.25], axis=0, method='nearest')",
         "np.quantile(x, [0.37, 0.5, 0.75], axis=1, method='midpoint')"]


@pytest.mark.parametrize("expr", ORDER)
def test_order_statistics_along_axes_are_numpys_bits(expr):
    """NumPy's interpolation (a + (b - a) t, or b - (b - a) (1 - t) past the middle), result
    dtype (float32 kept for a scalar q, float64 for a list) and NaN lanes, exactly."""
    f = _function(expr, 1)
    x = rng(13).normal(size=(5, 4))
    nan = x.copy()
    nan[1, 2] = np.nan
    ties = np.round(x * 2)
    for arg in (x, x.astype(np.float32), nan, rng(13).integers(-50, 50, (5, 4)), ties,
                ties.astype(np.float32)):
        run(f, arg, exact=True)


@pytest.mark.parametrize("expr", ["np.median(x, axis=0)", "np.median(x, axis=1)",
                                  "np.percentile(x, [3, 50, 97.5], axis=0)",
                                  "np.quantile(x, 0.41, axis=1, method='nearest')"])
@pytest.mark.parametrize("shape", [(40, 3), (3, 33), (17, 18)])
def test_order_statistics_of_long_lanes(expr, shape):
    """Lanes longer than a sorting network takes are partitioned: even and odd lengths,
    NaN lanes and ties give NumPy's numbers exactly."""
    f = _function(expr, 1)
    x = rng(15).normal(size=shape)
    nan = x.copy()
    nan[2, 1] = np.nan
    for arg in (x, nan, np.round(x), x.astype(np.float32)):
        run(f, arg, exact=True)


@pytest.mark.parametrize("expr", ["np.median(x, axis=(0, 2))",
                                  "np.quantile(x, 0.6, axis=(2, 0), keepdims=True)",
                                  "np.percentile(x, [25, 75], axis=1)"])
def test_order_statistics_along_several_axes(expr):
    f = _function(expr, 1)
    x = rng(14).normal(size=(3, 4, 5))
    run(f, x, exact=True)
    run(f, x.astype(np.float32), exact=True)


# ---- np.put --------------------------------------------------------------------------------


def take_put(x, idx):
    y = np.take(x, idx)
    z = x.copy()
    np.put(z, idx, 0.0)
    return y, z


def put_cycled(x, idx, v):
    z = x.copy()
    np.put(z, idx, v)
    return z


def put_modes(x):
    z = x.copy()
    z.put([1, -1, 15], [7.0, 8.0], mode="wrap")
    w = x.copy()
    np.put(w, [-20, 3, 40], 9.0, mode="clip")
    u = x.copy()
    np.put(u, 4, 2.5)
    return z, w, u


def put_through_view(x):
    z = x.copy()
    t = z.T
    np.put(t, [0, 1, 2], [1.0, 2.0, 3.0])
    return z, t


def put_argument(x, idx):
    np.put(x, idx, -1.0)


def test_put_is_a_statement_writing_its_array():
    """np.put used to be refused ("an expression statement has no effect")."""
    r = rng(15)
    run(take_put, r.normal(size=6), np.array([0, 3, 5]), exact=True)
    # v cycled, a repeated index keeps the last value, negative indices from the end
    run(put_cycled, r.normal(size=(3, 4)), np.array([0, 5, -1, 5, 2]),
        np.array([1.0, 2.0]), exact=True)
    run(put_cycled, r.normal(size=(3, 4)), np.arange(20) % 12, np.arange(20.0), exact=True)
    # into an int array: values cast as NumPy casts them
    run(put_cycled, r.integers(0, 9, (3, 4)), np.array([0, 5, -1]),
        np.array([1.7, -2.2, 3.9]), exact=True)
    run(put_modes, r.normal(size=(3, 4)), exact=True)
    run(put_modes, r.integers(0, 9, (3, 4)), exact=True)
    run(put_through_view, r.normal(size=(3, 4)), exact=True)
    run(put_argument, r.normal(size=(2, 3)), np.array([1, 4]), exact=True)


def test_put_out_of_bounds_raises_index_error():
    j = jit(put_cycled, wait=True)
    x, v = rng(16).normal(size=(3, 4)), np.array([1.0])
    with pytest.raises(IndexError):
        put_cycled(x, np.array([0, 12]), v)
    with pytest.raises(IndexError):
        j(x, np.array([0, 12]), v)
    with pytest.raises(IndexError):
        j(x, np.array([-13]), v)


def test_put_statement_transpiles_for_grad():
    def loss(x, v):
        z = x.copy()
        np.put(z, [0, 2, 2, 5], v)      # v[1] is overwritten by v[2]: no gradient
        return np.sum(z ** 2 * np.arange(1.0, 7.0).reshape(2, 3))
    x, v = rng(17).normal(size=(2, 3)), np.array([1.0, 2.0, 3.0])
    check_grad(loss, x, v, argnum=0)
    check_grad(loss, x, v, argnum=1)
    assert grad(loss, argnums=1)(x, v)[1] == 0.0


# ---- gradients (float64, central differences) ------------------------------------------------


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, 5.0)) + np.sum(v[:, -1] ** 2 * w) + np.sum(np.abs(v[0]))


def eigh_upper_loss(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(w ** 3) + np.sum(np.abs(v[:, 0])) + np.sum(np.linalg.eigvalsh(a, "U") ** 2)


def svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + np.sum(np.abs(u[:, 0])) + np.sum(np.abs(vh[-1])) + \
        np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.arange(q.size).reshape(q.shape)) + np.sum(r ** 2)


def pinv_loss(a, b):
    return np.sum((np.linalg.pinv(a) @ b) ** 2)


def lstsq_loss(a, b):
    x, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2) + np.sum(res) + np.sum(sv)


def kron_loss(a, b):
    return np.sum(np.kron(a, b) ** 2 * np.arange(24.0).reshape(4, 6))


def rot90_loss(x):
    return np.sum(np.rot90(x) * np.arange(12.0).reshape(4, 3)) + np.sum(np.rot90(x, 3) ** 2)


def split_loss(x):
    parts = np.array_split(x, 3)
    a, b = np.split(x[:6], 2)
    return sum(np.sum(p ** (i + 1)) for i, p in enumerate(parts)) + np.sum(a * b)


def stats_loss(x):
    return (np.sum(np.ptp(x, axis=0) ** 2) + np.sum(np.cov(x) ** 2) +
            np.sum(np.corrcoef(x, rowvar=False)) + np.sum(np.median(x, axis=1) ** 2) +
            np.sum(np.percentile(x, 75, axis=0) * np.arange(4.0)) +
            np.sum(np.quantile(x, [0.25, 0.5], axis=0) ** 2))


@pytest.mark.parametrize("loss, args", [
    (eigh_loss, lambda: (sym(4, 20),)),
    (eigh_upper_loss, lambda: (rng(21).normal(size=(4, 4)),)),
    (svd_loss, lambda: (rng(22).normal(size=(5, 3)),)),
    (svd_loss, lambda: (rng(23).normal(size=(3, 5)),)),
    (qr_loss, lambda: (rng(24).normal(size=(5, 3)),)),
    (pinv_loss, lambda: (rng(25).normal(size=(5, 3)), rng(25).normal(size=5))),
    (lstsq_loss, lambda: (rng(26).normal(size=(6, 3)), rng(26).normal(size=6))),
    (lstsq_loss, lambda: (rng(27).normal(size=(6, 3)), rng(27).normal(size=(6, 2)))),
    (kron_loss, lambda: (rng(28).normal(size=(2, 2)), rng(28).normal(size=(2, 3)))),
    (rot90_loss, lambda: (rng(29).normal(size=(3, 4)),)),
    (split_loss, lambda: (rng(30).normal(size=7),)),
    (stats_loss, lambda: (rng(31).normal(size=(5, 4)),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_gradients_under_grad_and_jit_grad(loss, args):
    a = args()
    for i in range(len(a)):
        check_grad(loss, *a, argnum=i, rtol=1e-5)


def test_lstsq_gradient_of_rank_deficient_input_has_no_residual_term():
    """The residuals are empty for a rank-deficient matrix: their term adds nothing (and
    the compiled gradient reads that length at run time)."""
    a = rng(32).normal(size=(6, 3))
    a[:, 2] = a[:, 0]
    b = rng(32).normal(size=6)

    def loss(b):
        x, res, rank, sv = np.linalg.lstsq(a_in, b, rcond=None)
        return np.sum(res) + np.sum(x * np.arange(3.0))
    a_in = a
    np.testing.assert_allclose(jit(grad(loss), wait=True)(b), grad(loss)(b), rtol=1e-10)
    np.testing.assert_allclose(jit(grad(loss), wait=True)(b), numerical_grad(loss, [b]),
                               rtol=1e-5, atol=1e-6)


def eigvalsh_square_sum(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


def singular_value_sum(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def median_and_range(a):
    return np.sum(np.median(a, axis=0)) + np.sum(np.ptp(a, axis=1))


@pytest.mark.parametrize("loss", [eigvalsh_square_sum, singular_value_sum, median_and_range])
def test_float32_gradients_stay_float32(loss):
    a = sym(4, 33).astype(np.float32)
    g = jit(grad(loss), wait=True)(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad(loss)(a.astype(np.float64)), rtol=2e-4, atol=2e-5)
