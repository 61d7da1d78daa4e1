"""Issue 22's measured constructs, each in its smallest form: views of local arrays and writes
into arguments keep NumPy's meaning, and the constructs other people's kernels use compile
under jit (a fallback to NumPy is an error here), with grad against finite differences where
the code is differentiable."""
import math
import warnings

import numpy as np
import pytest
import scipy.special as scipy_special

import foreign_kernels
from fd import numerical_grad
from transpile import grad, jit, vmap
from transpile.errors import TranspileError, TranspileWarning


def compiled(f, *args, **kw):
    """jit(f)(*args) with any fallback to NumPy raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return jit(f, **kw)(*args)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---- silently wrong before ---------------------------------------------------------------------

def view_of_local(x, n):
    V = np.zeros((6, 6), dtype=np.float32)
    v = V[1:-1, 1:-1]
    V[2:4, 2:4] = 0.25
    for i in range(n):
        v += x
    return V


def test_a_view_of_a_local_array_updated_in_a_loop_after_a_base_write():
    x = np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4)
    want = view_of_local(x, 3)
    same(compiled(view_of_local, x, 3), want)
    same(jit(view_of_local, backend="numpy")(x, 3), want)


def view_of_local_loss(x):
    V = np.zeros((6, 6))
    v = V[1:-1, 1:-1]
    V[2:4, 2:4] = 0.25
    for i in range(2):
        v += x * x
    return np.sum(V ** 2)


def test_grad_through_a_view_of_a_local_array():
    x = np.linspace(0.1, 1.0, 16).reshape(4, 4)
    want = numerical_grad(view_of_local_loss, [x])
    np.testing.assert_allclose(grad(view_of_local_loss)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(view_of_local_loss))(x), want, rtol=1e-6, atol=1e-8)


def diffuse(u, tmp, steps):
    for n in range(steps):
        tmp[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] - 2 * u[1:-1, 1:-1] + u[:-2, 1:-1])
        u[:, :] = tmp[:, :]
        tmp[:, :] = 0.0


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_a_function_that_only_writes_into_its_arguments(backend):
    rng = np.random.default_rng(0)
    u0 = rng.random((8, 8))
    for steps in (0, 1, 3):
        u_want, t_want = u0.copy(), np.zeros((8, 8))
        diffuse(u_want, t_want, steps)
        u, t = u0.copy(), np.zeros((8, 8))
        if backend == "cpu":
            assert compiled(diffuse, u, t, steps) is None
        else:
            assert jit(diffuse, backend="numpy")(u, t, steps) is None
        np.testing.assert_allclose(u, u_want, rtol=1e-13)
        np.testing.assert_allclose(t, t_want, rtol=1e-13)


def step_in_place(u, c):
    for k in range(3):
        u[1:-1] += c * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[...] = u * 0.5


def test_slice_updates_of_an_argument_in_a_loop_run_once_per_call():
    u0 = np.sin(np.linspace(0.0, 3.0, 9))
    want = u0.copy()
    step_in_place(want, 0.2)
    for _ in range(2):          # every call applies the function once, the first one too
        u = u0.copy()
        assert compiled(step_in_place, u, 0.2) is None
        np.testing.assert_allclose(u, want, rtol=1e-13)


def clamp_negatives(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0.0
    return np.sum(x)


def test_a_write_into_an_argument_inside_an_if_inside_a_loop():
    x = np.array([1.0, -2.0, 3.0, -4.0])
    want_x = x.copy()
    want = clamp_negatives(want_x)
    y = x.copy()
    assert jit(clamp_negatives, backend="numpy")(y) == want
    np.testing.assert_array_equal(y, want_x)


# ---- constructs that were refused ---------------------------------------------------------------

def body_import(x):
    import numpy as np
    from scipy.special import logsumexp
    return np.sum(x) + logsumexp(x)


def real_imag(z):
    return z.real * 2.0 + z.imag


def chained(x):
    a = b = 0.0
    a = a + x[0]
    b = b + x[1]
    p = q = np.zeros(3)
    p[0] = 1.0          # one buffer, as in Python: q sees the write
    return a + b + q[0]


def bitwise(a, b):
    return (a & b) + (a | b) + (a ^ b) + (~a) + (a << 1) + (b >> 1)


def bool_logic(x):
    m = (x > 0.2) & (x < 0.8)
    m |= x > 0.95
    m ^= x > 0.5
    return np.where(~m, x, -x)


def bitwise_functions(a, b):
    return np.bitwise_and(a, b) + np.bitwise_or(a, b) + np.invert(a) + np.left_shift(a, 2)


def ndindex_sum(a):
    s = 0.0
    for i, j in np.ndindex(a.shape):
        s += a[i, j] * (i + 2 * j + 1)
    return s


def math_functions(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i]) * math.exp(-x[i]) + math.sqrt(x[i]) + math.log(x[i]) * math.pi
        s += math.atan2(x[i], 1.0) + math.floor(x[i] * 3.3) + math.hypot(x[i], 2.0)
    return s


def long_augmented_chain(x):
    s = x[0]
    for _ in range(1):
        s += 1.0; s *= 1.1; s -= 0.3; s += x[1]; s *= 0.9; s += 1.0; s *= 1.1; s -= 0.3  # noqa
        s += x[2]; s *= 0.9; s += 1.0; s *= 1.1; s -= 0.3; s += x[3]; s *= 0.9; s += 1.0  # noqa
        s *= 1.1; s -= 0.3; s += x[0]; s *= 0.9; s += 1.0; s *= 1.1; s -= 0.3; s += 2.0  # noqa
    return s


def deleted_name(x):
    t = x * 2.0
    y = t + 1.0
    del t
    return y


X = np.linspace(0.1, 1.0, 6)
IA = np.array([1, 2, 3, 4, 5, 6])
IB = np.array([6, 5, 4, 3, 2, 1])
CASES = [
    (body_import, (X,)),
    (real_imag, (X * (1 + 2j),)),
    (chained, (X,)),
    (bitwise, (IA, IB)),
    (bitwise, (IA.astype(np.int32), IB.astype(np.int32))),
    (bool_logic, (X,)),
    (bitwise_functions, (IA, IB)),
    (ndindex_sum, (X.reshape(2, 3),)),
    (math_functions, (X,)),
    (long_augmented_chain, (X,)),
    (deleted_name, (X,)),
]


@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in
                                               enumerate(CASES)])
def test_construct_compiles_and_matches_numpy(f, args):
    same(compiled(f, *args), f(*args))


def test_bitwise_needs_no_derivative_rule_until_one_is_asked():
    # jit never needs a derivative; grad of a function that only uses bitwise ops on a mask
    # differentiates through the data path
    def f(x):
        m = (x > 0.3) & ~(x > 0.9)
        return np.sum(np.where(m, x * x, 0.0))
    np.testing.assert_allclose(grad(f)(X), numerical_grad(f, [X]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(compiled(grad(f), X), numerical_grad(f, [X]), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("f", [math_functions, ndindex_sum, long_augmented_chain, chained])
def test_grad_of_the_constructs_against_finite_differences(f):
    x = X.reshape(2, 3) if f is ndindex_sum else X
    want = numerical_grad(f, [x])
    np.testing.assert_allclose(grad(f)(x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jit(grad(f))(x), want, rtol=1e-5, atol=1e-7)


# ---- NumPy functions that sent the whole function back to NumPy -----------------------------------

A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
FUNCTIONS = [
    (lambda x: x[:, None] * x[None, :] + x[np.newaxis], (X,)),
    (lambda x: np.roll(x, 2) + np.roll(x, -1), (X,)),
    (lambda a: np.roll(a, 1, axis=0) - np.roll(a, -1, axis=1), (X.reshape(2, 3),)),
    (lambda x: np.tile(x, 3), (X,)),
    (lambda a: np.tile(a, (2, 2)), (X.reshape(2, 3),)),
    (lambda x: np.repeat(x, 2), (X,)),
    (lambda a: np.repeat(a, 2, axis=1), (X.reshape(2, 3),)),
    (lambda x: np.cumsum(x) + np.cumprod(x), (X,)),
    (lambda a: np.cumsum(a, axis=0) + np.cumsum(a, axis=1), (X.reshape(2, 3),)),
    (lambda k: np.cumsum(k), (IA,)),
    (lambda x: np.average(x) + np.average(x, weights=x * x), (X,)),
    (lambda x: x * np.linspace(0.0, 1.0, x.shape[0]), (X,)),
    (lambda x: np.stack([x, 2 * x, x * x]), (X,)),
    (lambda x: np.stack([x, 2 * x], axis=1), (X,)),
    (lambda a: np.linalg.inv(a), (A,)),
    (lambda a, b: np.linalg.solve(a, b), (A, X[:3])),
    (lambda a: np.linalg.det(a), (A,)),
    (lambda a: np.linalg.cholesky(a), (A,)),
    (lambda a: np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1], (A,)),
    (lambda x: np.argsort(-x), (X,)),
    (lambda x: np.sort(x[::-1]), (X,)),
    (lambda a: np.hstack([a, a]) + np.vstack([a, a]).sum(), (X.reshape(2, 3),)),
    (lambda x: np.diff(x) + 0.0, (X,)),
    (lambda a: np.diff(a, axis=0), (X.reshape(2, 3),)),
    (lambda x: np.diff(x, n=2), (X,)),
    (lambda x: np.count_nonzero(x > 0.5) + int(np.any(x > 0.9)) + int(np.all(x > 0)), (X,)),
    (lambda x, i: x[i] * 2.0, (X, np.array([0, 2, 4]))),
]


@pytest.mark.parametrize("k", range(len(FUNCTIONS)))
def test_numpy_function_compiles_and_matches_numpy(k):
    f, args = FUNCTIONS[k]
    same(compiled(f, *args), f(*args))


def test_logsumexp_compiles():
    from scipy.special import logsumexp

    def f(x):
        return logsumexp(x) - logsumexp(2.0 * x)
    same(compiled(f, X), f(X))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 7, 8, 10, 12, 21, 23])
def test_grad_of_the_numpy_functions_against_finite_differences(k):
    f, args = FUNCTIONS[k]

    def loss(x):
        return np.sum(np.sin(f(x)))
    want = numerical_grad(loss, list(args))
    np.testing.assert_allclose(grad(loss)(*args), want, rtol=1e-5, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(grad(loss))(*args), want, rtol=1e-5, atol=1e-7)


# ---- values whose shape depends on the data: NumPy's numbers, never a guessed shape ------------

def nonzero_sum(x):
    i, = np.where(x > 0.5)
    j = np.nonzero(x > 0.3)[0]
    return np.sum(x[i] ** 2) + np.sum(x[j]) + np.sum(x[x > 0.7])


def test_data_dependent_shapes_give_numpys_numbers():
    x = np.linspace(0.02, 0.97, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)   # (these run NumPy under jit)
        got = jit(nonzero_sum)(x)
    np.testing.assert_allclose(got, nonzero_sum(x), rtol=1e-13)
    np.testing.assert_allclose(grad(nonzero_sum)(x), numerical_grad(nonzero_sum, [x]),
                               rtol=1e-6, atol=1e-8)
    y = np.linspace(0.02, 0.97, 13)          # another length: still NumPy's count
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        np.testing.assert_allclose(jit(nonzero_sum)(y), nonzero_sum(y), rtol=1e-13)


def test_a_sum_of_300_terms_in_one_expression(tmp_path):
    # (the syntax tree nests 300 levels deep: parsing it recursed past Python's limit)
    import importlib.util
    terms = " + ".join(f"x[{k % 2}] * {k}.0" for k in range(300))
    path = tmp_path / "long_sum.py"
    path.write_text(f"def long_sum(x):\n    return {terms}\n")
    spec = importlib.util.spec_from_file_location("long_sum", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.array([0.5, 1.5])
    same(compiled(module.long_sum, x), module.long_sum(x))
    np.testing.assert_allclose(grad(module.long_sum)(x), numerical_grad(module.long_sum, [x]),
                               rtol=1e-6)


# ---- a statement Numba cannot compile costs that statement, not the function ------------------

def with_a_break(x, out):
    y = np.sin(x) * 2.0
    z = np.fft.fft(x).real          # Numba has no FFT: this statement runs in NumPy
    acc = 0.0
    for i in range(x.shape[0]):
        acc += y[i] * z[i]
        out[i] = acc                # a write into the argument, after the break
    return acc


def test_one_unlowerable_statement_splits_the_function_into_compiled_parts():
    x = np.linspace(0.0, 1.0, 8)
    want_out = np.zeros(8)
    want = with_a_break(x, want_out)
    f = jit(with_a_break)
    out = np.zeros(8)
    with pytest.warns(TranspileWarning, match=r"fft.*in NumPy between compiled parts"):
        got = f(x, out)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(out, want_out, rtol=1e-12)
    text = f.source_for(x, out)
    assert "with_a_break__jit__part0" in text and "# runs in NumPy" in text
    assert "np.fft.fft(x)" in text.split("def with_a_break__jit(")[1]   # in the Python driver
    spec = next(iter(f._specs.values()))
    assert not spec.eager           # the parts run compiled
    out2 = np.zeros(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)     # warned once
        np.testing.assert_allclose(f(x, out2), want, rtol=1e-12)
    np.testing.assert_allclose(out2, want_out, rtol=1e-12)


def masked_mean_then_loop(x):
    m = x[x > 0.5]                  # its length depends on the values
    c = np.mean(m)
    s = 0.0
    for i in range(x.shape[0]):
        s += (x[i] - c) ** 2
    return s


def test_a_data_dependent_shape_compiles_with_the_loop():
    # x[x > 0.5] has a length read at run time (lowering/cpu/unsized.py): one compiled
    # function, no statement in NumPy, whatever the count selected
    f = jit(masked_mean_then_loop)
    for n in (7, 9):
        x = np.linspace(0.02, 0.97, n)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            np.testing.assert_allclose(f(x), masked_mean_then_loop(x), rtol=1e-12)
    text = f.source_for(np.linspace(0.02, 0.97, 9))
    assert "__part" not in text and "runs in NumPy" not in text
    assert "for i in range(" in text


def test_views_and_argument_writes_under_vmap_jvp_and_grad():
    from transpile import jvp, vmap
    x = np.linspace(0.1, 1.0, 16).reshape(4, 4)
    xs = np.stack([x, 2.0 * x])
    np.testing.assert_allclose(vmap(view_of_local_loss)(xs),
                               [view_of_local_loss(a) for a in xs], rtol=1e-13)
    t = np.cos(x)
    fd = (view_of_local_loss(x + 1e-6 * t) - view_of_local_loss(x - 1e-6 * t)) / 2e-6
    np.testing.assert_allclose(jvp(view_of_local_loss, (x,), (t,))[1], fd, rtol=1e-6)

    rng = np.random.default_rng(1)
    U, T = rng.random((3, 6, 6)), np.zeros((3, 6, 6))
    U_want, T_want = U.copy(), T.copy()
    for k in range(3):
        diffuse(U_want[k], T_want[k], 2)
    vmap(diffuse, in_axes=(0, 0, None))(U, T, 2)      # each example's rows written
    np.testing.assert_allclose(U, U_want, rtol=1e-13)
    np.testing.assert_allclose(T, T_want, rtol=1e-13)

    def loss(u):
        u = u.copy()
        diffuse(u, np.zeros_like(u), 3)
        return np.sum(u ** 2)
    u = rng.random((6, 6))
    want = numerical_grad(loss, [u])
    np.testing.assert_allclose(grad(loss)(u), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(compiled(grad(loss), u), want, rtol=1e-6, atol=1e-9)


def linspaces(a, b):
    return (np.linspace(a, b, 7), np.linspace(a, b, 7, endpoint=False), np.linspace(a, b, 1),
            np.linspace(a, b, 5, dtype=np.int64), np.linspace(0.0, 1.0, 0), np.linspace(a, b, 2),
            np.linspace(a, b, 9, dtype=np.float32))


@pytest.mark.parametrize("a, b", [(0.1, 2.7), (-3.0, 1.0), (5.0, 5.0), (2.5, -1.3)])
def test_linspace_compiles_to_numpys_own_numbers(a, b):
    # one loop of start + i * step (Numba's np.linspace is ~10x slower than NumPy's): the same
    # floats bit for bit, the endpoint itself, NumPy's floor for an integer dtype
    got, want = compiled(linspaces, a, b), linspaces(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def sorts(x):
    return np.sort(x, axis=0), np.sort(x, axis=1), np.sort(x, axis=-2), np.sort(x), \
        np.sort(x, axis=None)


def test_sort_along_any_axis_compiles():
    x = np.random.default_rng(0).random((4, 5, 3))
    got, want = compiled(sorts, x), sorts(x)
    for g, w in zip(got, want):
        same(g, w)


def sorted_rows_loss(X):
    s = np.sort(X, axis=0)
    return np.sum(s[0] * s[-1]) + np.sum(np.sort(X, axis=1)[:, 1] ** 2)


def test_jit_grad_of_sort_along_an_axis_compiles():
    """The permutation that routes the cotangent of np.sort(X, axis=0) back compiles (it was
    a segment break: only vectors had a Numba form); ties included."""
    r = np.random.default_rng(3)
    for X in (r.random((9, 3)), np.round(r.random((5, 4)), 1)):
        got = compiled(grad(sorted_rows_loss), X)
        np.testing.assert_allclose(got, grad(sorted_rows_loss)(X), rtol=1e-13)
        np.testing.assert_allclose(got, numerical_grad(sorted_rows_loss, [X]), rtol=1e-6,
                                   atol=1e-8) if len(np.unique(X)) == X.size else None


def averages(X, w, W, v):
    return (np.average(X, axis=0, weights=w), np.average(X, axis=1), np.average(X, axis=0),
            np.average(X, axis=1, weights=W), np.average(X, axis=-1, weights=v),
            np.average(w, axis=0, weights=w), np.average(X), np.average(X, weights=W))


def test_average_along_an_axis_with_or_without_weights_compiles():
    r = np.random.default_rng(1)
    args = (r.standard_normal((6, 3)), r.random(6) + 0.1, r.random((6, 3)) + 0.1,
            r.random(3) + 0.1)
    got, want = compiled(averages, *args), averages(*args)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)


def pairwise_loss(X):
    d = X[:, None, :] - X[None, :, :]
    return np.sum(np.sqrt(np.sum(d * d, axis=-1) + 1.0))


def newaxis_loss(x, A):
    return np.sum((x[:, None] * A) ** 2) + np.sum(x[None] * x[..., None, None][:, 0])


def test_jit_grad_of_newaxis_reads_compiles_and_matches_finite_differences():
    X = np.random.default_rng(0).standard_normal((5, 3))
    A = np.random.default_rng(1).standard_normal((5, 4))
    x = np.linspace(-1.0, 1.0, 5)
    for f, args in ((pairwise_loss, (X,)), (newaxis_loss, (x, A))):
        got = compiled(grad(f), *args)
        np.testing.assert_allclose(got, numerical_grad(f, list(args)), rtol=1e-6, atol=1e-8)


# ---- optional arguments: `if w is None:` ---------------------------------------------------------

def weighted_sum(x, w=None, b=None):
    if w is None:
        w = np.ones_like(x)
    y = x * w
    if b is not None:
        y = y + b
    return np.sum(y * y)


def none_on_one_path(x):
    w = None
    if np.sum(x) > 0:
        w = x * 2
    if w is None:
        return x
    return w


def argument_rebound_to_none(x, w=None):
    if np.sum(x) > 0:
        w = None
    if w is None:
        return x
    return x * w


@pytest.mark.parametrize("extra", [(), (None,), (2.0,), (None, 1.5), ("w", "b")])
def test_optional_arguments_given_or_left_out_compile(extra):
    x = np.array([0.5, -1.0, 2.0, 0.25])
    args = tuple(x * 0.5 + 1.0 if e in ("w", "b") else e for e in extra)
    same(compiled(weighted_sum, x, *args), weighted_sum(x, *args))
    f = lambda z: weighted_sum(z, *args)      # noqa: E731
    want = numerical_grad(f, [x.copy()])
    np.testing.assert_allclose(grad(weighted_sum)(x, *args), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(weighted_sum))(x, *args), want, rtol=1e-6, atol=1e-8)


def test_is_none_of_an_argument_rebound_in_the_function_is_an_error_naming_the_line():
    """Never decided from the type of the argument at entry (that gave `None` back)."""
    x = np.array([0.5, -1.0, 2.0, 0.25])
    with pytest.raises(Exception, match=r"test_jit_foreign_constructs\.py:\d+: `is None`"):
        jit(argument_rebound_to_none)(x, 2.0)
    same(compiled(argument_rebound_to_none, x), argument_rebound_to_none(x))   # None: known


# ---- locals that are None on some paths (frontend/optional_locals.py) -----------------------------

def nearest_sq_dist(points, q):
    best = None
    for i in range(points.shape[0]):
        d = np.sum((points[i] - q) ** 2)
        if best is None or d < best:
            best = d
    return best


def nearest_index(points, q):
    best = None
    best_i = -1
    for i in range(points.shape[0]):
        d = np.sum((points[i] - q) ** 2)
        if best is not None and d >= best:
            continue
        best, best_i = d, i
    return best_i


def energy_of_steps(x):
    prev = None               # the previous row, an array once set
    total = 0.0
    for i in range(x.shape[0]):
        row = x[i] * 2.0
        if prev is not None:
            total = total + np.sum((row - prev) ** 2)
        prev = row
    return total


def first_negative(x):
    found = None
    for i in range(x.shape[0]):
        if x[i] < 0:
            found = i
            break
    if found is None:
        return -1
    return found


def any_large(x):
    hit = None                # a flag that is None or True
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            hit = True
    if hit is None:
        return 0.0
    return np.sum(x * x)


def running_max_times_two(x):
    m = None
    for v in x:
        m = v if m is None else max(m, v)
    return m * 2.0


def sum_of_scaled(x):
    acc = None
    for a in (x, x * 2.0, x * 3.0):
        acc = a if acc is None else acc + a
    return np.sum(acc * acc)


def last_positive(x):
    last = None
    for i in range(x.shape[0]):
        if x[i] > 0:
            last = x[i]
    return last


_OPTIONAL_LOCALS = [nearest_sq_dist, nearest_index, energy_of_steps, first_negative, any_large,
                    running_max_times_two, sum_of_scaled, last_positive, none_on_one_path]


@pytest.mark.parametrize("f", _OPTIONAL_LOCALS)
def test_a_local_that_is_none_on_some_paths_compiles(f):
    rng = np.random.default_rng(3)
    points = rng.standard_normal((12, 3))
    for args in ([points, points[4] + 0.01] if f.__code__.co_argcount == 2 else [points[:, 0]],
                 [points, points[0]] if f.__code__.co_argcount == 2 else [points[:, 1] + 3.0]):
        same(compiled(f, *args), f(*args))
    if f in (nearest_sq_dist, energy_of_steps, any_large, running_max_times_two, sum_of_scaled):
        x = points if f.__code__.co_argcount == 2 else points[:, 0] * 1.5
        args = [x, points[4] + 0.01] if f.__code__.co_argcount == 2 else [x]
        want = numerical_grad(lambda a: f(a, *args[1:]), [args[0].copy()])
        np.testing.assert_allclose(grad(f)(*args), want, rtol=1e-6, atol=1e-8)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            np.testing.assert_allclose(jit(grad(f))(*args), want, rtol=1e-6, atol=1e-8)


def test_a_local_still_none_where_it_is_read_is_a_type_error_naming_the_variable():
    """Python would give None back; compiled code never gives out its placeholder."""
    x = -np.abs(np.array([0.5, 1.0, 2.0]))
    assert last_positive(x) is None
    for run in (lambda: compiled(last_positive, x), lambda: jit(last_positive, backend="numpy")(x)):
        with pytest.raises(TypeError, match="'last' is None here"):
            run()


# ---- a string or None where an array is expected --------------------------------------------------

def zscore(x):
    return (x - x.mean()) / x.std()


@pytest.mark.parametrize("bad", ["oops", None])
def test_a_string_or_none_for_an_array_is_pythons_attribute_error_at_the_line(bad):
    """jit(zscore)("oops") warned that np.mean fell back to NumPy, then failed inside NumPy;
    Python raises AttributeError at the line: so does jit now, with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        with pytest.raises(AttributeError, match=r"test_jit_foreign_constructs\.py:\d+: "
                           r"'(str|NoneType)' object has no attribute 'mean'"):
            jit(zscore)(bad)
    if bad is not None:
        with pytest.raises(TypeError, match="requires float inputs"):
            grad(zscore)(bad)


# ---- NumPy's out= keyword: the result written into the array named --------------------------------

def add_into_first(x, y):
    z = np.add(x, y, out=x)          # z is x
    return z * 2


def clip_in_place(x):
    np.clip(x, -0.5, 0.5, out=x)
    return np.sum(x)


def sqrt_into_buffer(x):
    t = np.empty_like(x)
    np.sqrt(np.abs(x) + 1.0, out=t)
    np.multiply(t, x, out=t)
    return np.sum(t * t)


def running_total_in_place(x):
    np.cumsum(x, out=x)
    return x


@pytest.mark.parametrize("f, nargs", [(add_into_first, 2), (clip_in_place, 1),
                                      (sqrt_into_buffer, 1), (running_total_in_place, 1)])
def test_out_keyword_writes_the_result_into_the_array(f, nargs):
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(6) for _ in range(nargs)]
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    got_args = [a.copy() for a in args]
    same(compiled(f, *got_args), want)
    for g, w in zip(got_args, want_args):       # the caller's arrays written as NumPy does
        same(g, w)


def square_add_positional_out(Z, C):
    np.multiply(Z, Z, Z)             # a ufunc's out given by position (npbench mandelbrot)
    np.add(Z, C, Z)
    return Z


def exp_positional_out_value(x):
    t = np.empty_like(x)
    w = np.exp(x, t)                 # w is t
    return w[0] + np.sum(t * x)


@pytest.mark.parametrize("f", [square_add_positional_out, exp_positional_out_value],
                         ids=lambda f: f.__name__)
def test_positional_out_of_a_ufunc_writes_the_result_into_the_array(f):
    """np.multiply(Z, Z, Z) was refused as a statement "with no effect" (np.add(Z, C, Z) in
    an expression: "takes 2 arguments"); the last argument is the ufunc's out."""
    rng = np.random.default_rng(6)
    args = [rng.standard_normal(5) for _ in range(f.__code__.co_argcount)]
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    got_args = [a.copy() for a in args]
    same(compiled(f, *got_args), want)
    for g, w in zip(got_args, want_args):
        same(g, w)
    x = np.array([0.5, -1.0, 2.0, 0.25])
    want = numerical_grad(exp_positional_out_value, [x.copy()])
    np.testing.assert_allclose(grad(exp_positional_out_value)(x), want, rtol=1e-6, atol=1e-8)


def test_out_keyword_differentiates():
    x = np.array([0.5, -1.0, 2.0, 0.25])
    want = numerical_grad(sqrt_into_buffer, [x.copy()])
    np.testing.assert_allclose(grad(sqrt_into_buffer)(x), want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(grad(sqrt_into_buffer))(x), want, rtol=1e-6, atol=1e-8)


# ---- rows swapped by a list of indices known at run time: A[[k, p]] = A[[p, k]] ---------------

def solve_with_partial_pivoting(A, b):
    A = A.copy()
    b = b.copy()
    n = A.shape[0]
    for k in range(n - 1):
        p = k + np.argmax(np.abs(A[k:, k]))
        A[[k, p]] = A[[p, k]]
        b[[k, p]] = b[[p, k]]
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            A[i, k:] -= f * A[k, k:]
            b[i] -= f * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def largest_first_row(A):
    p = np.argmax(A[:, 0])
    A[[0, p]] = A[[p, 0]]          # the caller's array: rows swapped in place
    return np.sum(A[0] * np.arange(1.0, A.shape[1] + 1))


def test_rows_swapped_by_a_run_time_index_list_compile_and_differentiate():
    A = np.random.default_rng(4).random((5, 5))
    b = np.arange(5.0)
    same(compiled(solve_with_partial_pivoting, A, b), solve_with_partial_pivoting(A, b))
    np.testing.assert_allclose(compiled(solve_with_partial_pivoting, A, b),
                               np.linalg.solve(A, b), rtol=1e-10)
    got_A, want_A = A.copy(), A.copy()
    same(compiled(largest_first_row, got_A), largest_first_row(want_A))
    same(got_A, want_A)

    def loss(a):
        return np.sum(solve_with_partial_pivoting(a, b) ** 2)
    want = numerical_grad(loss, [A.copy()])
    np.testing.assert_allclose(grad(loss)(A), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(compiled(grad(loss), A), want, rtol=1e-5, atol=1e-7)
    want = numerical_grad(lambda a: largest_first_row(a.copy()), [A.copy()])
    np.testing.assert_allclose(compiled(grad(largest_first_row), A.copy()), want, rtol=1e-6,
                               atol=1e-8)


# ---- nested subscript writes, early bare returns, dict(...) (refused before) ----------------

def row_then_column(A, x):
    B = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            B[i][j] += A[i][j] * x[j]       # C-style indexing of a 2-D array
    A[0][1] = -1.0                          # ... also into the caller's array
    return np.sum(B ** 2)


def through_views(A):
    A.T[0] = 7.0                            # column 0
    A.reshape(-1)[2] = 5.0                  # a view of a contiguous array
    A[1:3][0] = 4.0                         # row 1
    A[:, ::-1][2][0] = -2.0                 # A[2, -1]
    A[0][A[0] > 6.0] = 0.5                  # a mask within a row
    return A


def into_a_list_of_arrays(params, v):
    params[0][1] = v
    return params[0].sum() + params[1].sum()


def copies_are_not_written(A):
    B = A[[0, 2]]
    B[1][0] = 9.0                           # B is a copy: A keeps its values
    return B


def test_nested_subscript_writes_compile_and_write_what_numpy_writes():
    A = np.arange(9.0).reshape(3, 3) / 7.0
    x = np.array([1.0, 2.0, 3.0])
    for f, args in [(row_then_column, (A, x)), (through_views, (A,)),
                    (into_a_list_of_arrays, ([np.ones(3), np.ones(2)], 4.0)),
                    (copies_are_not_written, (A,))]:
        got_args = [[a.copy() for a in v] if isinstance(v, list) else np.copy(v) for v in args]
        want_args = [[a.copy() for a in v] if isinstance(v, list) else np.copy(v) for v in args]
        same(compiled(f, *got_args), f(*want_args))
        for g, w in zip(got_args, want_args):
            for gl, wl in zip(g if isinstance(g, list) else [g], w if isinstance(w, list) else [w]):
                same(gl, wl)

    def loss(a, x):
        return row_then_column(a.copy(), x)
    for argnum, arg in [(0, A), (1, x)]:
        want = numerical_grad(loss, [A, x], argnum=argnum)
        np.testing.assert_allclose(grad(loss, argnums=argnum)(A, x), want, rtol=1e-6)
        np.testing.assert_allclose(compiled(grad(loss, argnums=argnum), A, x), want, rtol=1e-6)


def double_unless_small(x, tol):
    if np.max(x) < tol:
        return                              # a bare return, the other path runs off the end
    x[:] *= 2.0


def stop_at_first_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            return
        x[i] = np.sqrt(x[i])


def helper_with_early_return(x):
    double_unless_small(x, 0.5)
    return x.sum()


@pytest.mark.parametrize("f, args", [
    (double_unless_small, (np.ones(3), 0.5)), (double_unless_small, (np.ones(3), 5.0)),
    (stop_at_first_negative, (np.array([4.0, 9.0, -1.0, 16.0]),)),
    (helper_with_early_return, (np.ones(3),)), (helper_with_early_return, (np.full(3, 0.1),))])
def test_an_early_bare_return_on_data_in_a_function_returning_none(f, args):
    got_args = [np.copy(a) for a in args]
    want_args = [np.copy(a) for a in args]
    got = compiled(f, *got_args)
    want = f(*want_args)
    assert (got is None) == (want is None)
    if want is not None:
        same(got, want)
    same(got_args[0], want_args[0])


def dict_copies(params, x):
    p2 = {**params, "w": params["w"] - 0.1}
    p3 = dict(p2, b=p2["b"] * 3.0)
    p4 = dict(zip(["u", "v"], [x, 2.0 * x]))
    p5 = dict(a=x)
    new = dict(params)
    new["w"] = new["w"] * 2.0               # rebinds an entry of the copy only
    return np.sum(p3["w"] * x + p3["b"]) + np.sum(p4["v"]) + np.sum(p5["a"] * new["w"]) \
        + np.sum(params["w"])


def test_dict_copies_and_merges_compile_and_differentiate():
    params = {"w": np.array([1.0, 0.5]), "b": np.array([0.25, 2.0])}
    x = np.array([1.0, 2.0])
    same(compiled(dict_copies, params, x), dict_copies(params, x))
    g = compiled(grad(dict_copies), params, x)
    for k in params:
        want = numerical_grad(lambda v: dict_copies({**params, k: v}, x), [params[k]])
        np.testing.assert_allclose(g[k], want, rtol=1e-6)


def smooth_until(u, tol):
    for k in range(50):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[2:] + u[:-2])   # a fused loop stored into u
        if np.max(np.abs(u)) < tol:
            return "converged"      # a string result: the loop runs in NumPy
    return "max iterations"


def sqrt_until_negative(x):
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            return "negative"
        x[i] = np.sqrt(x[i])        # a write the compiled parts would do in place
    return "ok"


@pytest.mark.parametrize("f, args", [(smooth_until, (np.sin(np.arange(12.0)), 0.05)),
                                     (smooth_until, (np.sin(np.arange(12.0)), 0.5)),
                                     (sqrt_until_negative, (np.array([4.0, 9.0, -1.0, 16.0]),))])
def test_argument_writes_in_a_part_run_in_numpy_reach_the_caller(f, args):
    # the NumPy-run statements did the writes the compiled parts do in place on a copy, and
    # the write-back into the argument had been left out: the caller's array kept its values
    got_args = [np.copy(a) for a in args]
    want_args = [np.copy(a) for a in args]
    with pytest.warns(TranspileWarning, match="in NumPy between compiled parts"):
        got = jit(f)(*got_args)
    assert got == f(*want_args)
    same(got_args[0], want_args[0])


def l2_penalty(p):
    return sum(np.sum(p[k] ** 2) for k in p)         # a generator over a dict's keys


def momentum_step(params, vel, g):
    vel = {k: 0.9 * vel[k] + g[k] for k in params}  # a dict comprehension over its keys
    return {k: params[k] - 0.1 * vel[k] for k in params}, vel


def mode_flag(x, mode="same"):
    if mode in ("same", "valid"):                     # `in` a tuple of strings
        return x + 1.0
    return x - 1.0


def first_index_or_minus_one(x, t):
    for i in range(x.shape[0]):
        if x[i] == t:
            break
    else:
        return -1                                     # a return in a for-else
    return i


def else_returns_a_sum(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return x[i] * 2.0
        if x[i] > 10:
            break
    else:
        return np.sum(x)
    return 0.5 * x[0] ** 2


def rows_until_negative(A):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] < 0:
                break
            total = total + A[i, j] ** 2
        else:
            continue                                  # the nested-break idiom
        total = total * 1.5
    return total


def test_dict_key_comprehensions_static_in_and_for_else_returns():
    p = {"w": np.array([1.0, -2.0, 0.5]), "b": np.array([0.5])}
    same(compiled(l2_penalty, p), l2_penalty(p))
    g = compiled(grad(l2_penalty), p)
    for k in p:
        np.testing.assert_allclose(g[k], 2.0 * p[k], rtol=1e-12)
    got_p, got_v = compiled(momentum_step, p, p, p)
    want_p, want_v = momentum_step(p, p, p)
    for k in p:
        same(got_p[k], want_p[k])
        same(got_v[k], want_v[k])
    x = np.array([1.0, 2.0, 3.0])
    for mode in ("same", "valid", "full"):
        same(compiled(mode_flag, x, mode), mode_flag(x, mode))
    for t in (2.0, 7.0):
        assert compiled(first_index_or_minus_one, x, t) == first_index_or_minus_one(x, t)
    A = np.array([[1.0, -2.0], [3.0, 4.0]])
    same(compiled(rows_until_negative, A), rows_until_negative(A))
    np.testing.assert_allclose(compiled(grad(rows_until_negative), A),
                               numerical_grad(rows_until_negative, [A]), rtol=1e-6)
    for v in (x, np.array([1.0, -2.0, 3.0]), np.array([1.0, 20.0, 3.0])):
        same(compiled(else_returns_a_sum, v), else_returns_a_sum(v))
        np.testing.assert_allclose(compiled(grad(else_returns_a_sum), v),
                                   numerical_grad(else_returns_a_sum, [v]), rtol=1e-6,
                                   atol=1e-8)


def every_kth_squared(x, k):
    s = 0.0
    for t in range(x.shape[0]):
        if k > 0 and t % k == 0:        # t % k runs only where k > 0, as in Python
            s = s + x[t] ** 2
        else:
            s = s + x[t]
    return s


def test_and_guards_a_modulo_by_a_number_known_at_run_time():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for k in (0, 2):
        same(compiled(every_kth_squared, x, k), every_kth_squared(x, k))
        np.testing.assert_allclose(grad(every_kth_squared)(x, k),
                                   numerical_grad(every_kth_squared, [x, k]), rtol=1e-6)


def layer_with_activation(x, w, act=np.tanh):
    return np.sum(act(x * w))


def test_a_function_as_an_argument_or_default():
    x = np.array([0.5, -1.0, 2.0])
    same(compiled(layer_with_activation, x, 0.7), layer_with_activation(x, 0.7))
    same(compiled(layer_with_activation, x, 0.7, np.sin), layer_with_activation(x, 0.7, np.sin))
    np.testing.assert_allclose(grad(layer_with_activation)(x, 0.7),
                               0.7 * (1 - np.tanh(0.7 * x) ** 2), rtol=1e-12)


def with_options(x, opts=None):
    if opts is None:
        opts = {"lr": 0.1}
    return x * opts["lr"]


def test_is_none_of_a_dict_or_tuple_argument():
    x = np.arange(3.0)
    for opts in ({"lr": 0.2}, None):
        same(compiled(with_options, x, opts), with_options(x, opts))


def copy_rows(dst, src, mask):
    np.copyto(dst, src)
    np.copyto(dst[0], src * 2.0, where=mask)
    return dst.sum()


def test_copyto_writes_the_destination():
    src, mask = np.arange(3.0), np.array([True, False, True])
    got_dst, want_dst = np.zeros((2, 3)), np.zeros((2, 3))
    same(compiled(copy_rows, got_dst, src, mask), copy_rows(want_dst, src, mask))
    same(got_dst, want_dst)


# ---- a name the loop binds first, read on later iterations --------------------------------------

def running_max_from_first(x):
    for i in range(x.shape[0]):
        if i == 0:
            best = x[i]
        else:
            best = max(best, x[i])
    return best


def differences_with_prev(x):
    d = np.zeros_like(x)
    for i in range(x.shape[0]):
        if i > 0:
            d[i] = x[i] - prev
        prev = x[i] * 1.5
    return d


def decayed_while(x):
    i = 0
    tot = 0.0
    while i < x.shape[0]:
        if i == 0:
            acc = x[0]
        else:
            acc = acc * 0.9 + x[i]
        tot += acc * acc
        i += 1
    return tot


def row_maxima(A):
    out = np.zeros(A.shape[0])
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            if c == 0:
                run = A[r, c]
            else:
                run = np.maximum(run, A[r, c])
        out[r] = run
    return out


@pytest.mark.parametrize("f, x", [
    (running_max_from_first, np.array([3.0, 1.0, 4.0, 1.5])),
    (differences_with_prev, np.array([3.0, -1.0, 4.0, -1.5])),
    (decayed_while, np.array([0.5, -1.0, 2.0, 0.25])),
    (row_maxima, np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 0.25]])),
])
def test_a_name_first_bound_on_the_first_iteration_compiles_and_differentiates(f, x):
    same(compiled(f, x.copy()), f(x.copy()))
    w = np.cos(np.arange(np.size(f(x))) + 1.0)
    loss = lambda v: np.sum(f(v) * w)        # noqa: E731
    np.testing.assert_allclose(grad(loss)(x.copy()), numerical_grad(loss, [x.copy()]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jit(grad(loss))(x.copy()), numerical_grad(loss, [x.copy()]),
                               rtol=1e-6, atol=1e-8)


def reads_before_any_binding(x):
    for i in range(x.shape[0]):
        s = s + x[i]          # noqa: F821 (UnboundLocalError in Python too)
    return s


def test_a_read_before_any_binding_is_python_s_unbound_local_error_at_the_line():
    with pytest.raises(UnboundLocalError):
        reads_before_any_binding(np.ones(3))
    with pytest.raises(UnboundLocalError, match=r"test_jit_foreign_constructs.py:\d+: local "
                       r"variable 's' is read before it is set"):
        jit(reads_before_any_binding)(np.ones(3))


def gamma_terms(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.gamma(x[i]) * np.around(x[i] * 0.5, 0)
    return s + np.sum(scipy_special.gamma(x) * np.around(x, 1))


def test_math_gamma_scipy_gamma_and_np_around_compile_and_differentiate():
    x = np.array([1.7, 2.9, 3.3])
    same(compiled(gamma_terms, x.copy()), gamma_terms(x.copy()))
    want = numerical_grad(gamma_terms, [x.copy()])
    np.testing.assert_allclose(grad(gamma_terms)(x.copy()), want, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(gamma_terms))(x.copy()), want, rtol=1e-6)


def median3_filter(img):
    out = img.copy()
    for i in range(1, img.shape[0] - 1):
        for j in range(1, img.shape[1] - 1):
            out[i, j] = np.sort(img[i - 1:i + 2, j - 1:j + 2].ravel())[4]
    return out


def test_a_module_method_named_like_a_list_method_in_a_loop_is_not_a_loop_variable():
    # np.sort(...) in a loop body: `np` is not a name the loop binds (it was once taken for
    # a list sorted in place and refused as read before it is set)
    img = np.cos(np.arange(30.0)).reshape(5, 6)
    same(compiled(median3_filter, img.copy()), median3_filter(img.copy()))


# ---- `a or b` / `a and b` as values ------------------------------------------------------------

def default_if_zero(n, d):
    k = n or d
    m = n and d
    return k, m


def element_or_default(a, b):
    return (a[0] or b) * 2.0 + (a[1] and 3.0)


@pytest.mark.parametrize("n, d", [(0, 7), (3, 7), (0, 0), (-2, 0)])
def test_or_and_give_an_operand_not_its_truth(n, d):
    assert compiled(default_if_zero, n, d) == default_if_zero(n, d)
    got = compiled(default_if_zero, n, d)
    assert [type(v) for v in got] == [type(v) for v in default_if_zero(n, d)] or \
        all(isinstance(v, (int, np.integer)) for v in got)


@pytest.mark.parametrize("a", [np.array([0.0, 0.0]), np.array([1.5, 2.0]),
                               np.array([0.0, -1.0])])
def test_or_and_of_floats_pick_the_operand_under_jit_grad_and_vmap(a):
    same(compiled(element_or_default, a.copy(), 2.0), element_or_default(a.copy(), 2.0))
    # the derivative of the operand Python picks (at a == 0 it picks the other one)
    want = [2.0 if a[0] != 0 else 0.0, 1.0 if a[1] == 0 else 0.0]
    np.testing.assert_allclose(grad(element_or_default)(a.copy(), 2.0), want, atol=1e-12)
    if np.all(a != 0):
        np.testing.assert_allclose(want, numerical_grad(element_or_default, [a.copy(), 2.0]),
                                   atol=1e-8)
    rows = np.stack([a, a + 1.0, np.zeros(2)])
    np.testing.assert_allclose(vmap(element_or_default, in_axes=(0, None))(rows, 2.0),
                               [element_or_default(r, 2.0) for r in rows])


# ---- a copy of a builtin min/max result, updated by an augmented assignment ----------------------

def copy_of_max_updated(n):
    total = 0
    w = 1
    while w < n:
        s = max(w, 2)
        p = s
        p *= 3
        total += s + p
        w += 1
    return total


def copy_of_min_updated(x):
    total = 0.0
    w = 0
    while w < x.shape[0]:
        s = min(x[w], 1.0)
        p = s
        p *= 3.0
        total += s * p
        w += 1
    return total


def test_a_copy_of_a_min_or_max_result_is_a_number_rebound_not_written_in_place():
    # (`p *= 3` changed `s` too: 66 instead of 44)
    assert compiled(copy_of_max_updated, 5) == copy_of_max_updated(5) == 44
    x = np.array([0.3, 2.0, -0.5])
    same(compiled(copy_of_min_updated, x.copy()), copy_of_min_updated(x.copy()))
    np.testing.assert_allclose(grad(copy_of_min_updated)(x.copy()),
                               numerical_grad(copy_of_min_updated, [x.copy()]), rtol=1e-6)
    rows = np.stack([x, x + 0.1])
    np.testing.assert_allclose(vmap(copy_of_min_updated)(rows),
                               [copy_of_min_updated(r) for r in rows])


# ---- a write on the path a test of the entry value would not take -------------------------------

def gnome_sort(a):
    i = 0
    steps = 0
    while i < a.shape[0] and steps < 1000:     # (a cap: the broken form looped forever)
        if i == 0 or a[i - 1] <= a[i]:
            i += 1
        else:
            a[i], a[i - 1] = a[i - 1], a[i]
            i -= 1
        steps += 1
    return steps


def bump_after_first(a):
    i = 0
    for steps in range(4):
        if i == 0:
            i += 1
        else:
            a[i] = a[i] + 10.0
    return i


def test_a_write_on_a_path_the_entry_value_does_not_take_reaches_the_argument():
    # (the loop body was read ahead with i == 0, which took the other path: the argument was
    # not carried by the loop, the writes were lost and the sort never ended)
    a = np.array([3.0, 1.0, 2.0, -4.0, 0.5])
    want = np.sort(a)
    b, c = a.copy(), a.copy()
    assert compiled(gnome_sort, b) == gnome_sort(c) < 1000
    np.testing.assert_array_equal(b, want)
    a = np.array([3.0, 1.0, 2.0])
    b, c = a.copy(), a.copy()
    assert compiled(bump_after_first, b) == bump_after_first(c)
    np.testing.assert_array_equal(b, c)


def view_on_one_path(a):
    cur = a
    n = 0
    while n < 4:
        if cur[0] > 2:
            cur = cur[1:]
        cur[0] += 1.0
        n += 1
    return a


def row_on_one_path(A):
    row = A[0]
    for i in range(A.shape[0]):
        if A[i, 0] > 0:
            row = A[i]
        row[1] += 1.0
    return A


@pytest.mark.parametrize("f, x", [(view_on_one_path, np.arange(1.0, 6.0)),
                                  (row_on_one_path, np.array([[1.0, 0.0], [-1.0, 0.0],
                                                              [2.0, 0.0]]))])
def test_a_write_through_a_name_bound_to_a_view_on_one_path_only_is_refused(f, x):
    # (it wrote nothing, or into the wrong row)
    with pytest.raises(TranspileError, match="may or may not share memory"):
        jit(f)(x.copy())


# ---- values returned from inside a loop keep their type ------------------------------------------

def contains(a, v):
    i = 0
    while i < a.shape[0]:
        if a[i] == v:
            return True
        i += 1
    return False


def find(a, v):
    for i in range(a.shape[0]):
        if a[i] == v:
            return i, True
    return -1, False


def step_search(a, v):
    lo = 0
    while lo < 9:
        mid = lo + 1
        if a[mid] == v:
            return mid
        lo = mid
    return -1


def first_pair(a, v):          # (int, int) from a while nested in a while
    i = 0
    while i < a.shape[0]:
        j = i + 1
        while j < a.shape[0]:
            if a[i] + a[j] == v:
                return i, j
            j += 1
        i += 1
    return -1, -1


def index_and_next(a, v):
    i = 0
    while i < a.shape[0]:
        if a[i] == v:
            return i, i + 1
        i += 1
    return -1, -1


@pytest.mark.parametrize("f, v", [(contains, 3), (contains, 30), (find, 3), (find, 30),
                                  (step_search, 3), (step_search, 30), (first_pair, 9),
                                  (first_pair, 90), (index_and_next, 3),
                                  (index_and_next, 30)])
def test_a_bool_or_int_returned_from_inside_a_loop_stays_a_bool_or_int(f, v):
    # (True came back as 1.0 and 3 as 3.0: no longer usable as an index; `return i, j` from
    # nested whiles gave floats, `return i, i + 1` was refused: a join of `j = 1` and of a
    # flag `True` once shared one variable, as the two constants compared equal)
    a = np.arange(10)
    got, want = compiled(f, a, v), f(a, v)
    assert got == want
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, (bool, np.bool_)) == isinstance(w, bool)
        assert isinstance(g, (int, np.integer)) == isinstance(w, int)


def swap_under_if(a, b):
    for k in range(3):
        if a.sum() > b.sum():
            a, b = b, a
        a[k] += 5.0
    return a.sum(), b.sum()


def test_a_write_through_arguments_swapped_on_one_path_is_refused():
    # (the sums were right but neither caller's array was written)
    with pytest.raises(TranspileError, match="may or may not share memory"):
        jit(swap_under_if)(np.zeros(3), np.ones(3))


def padded_energy(x, c):
    return np.sum(np.pad(x, ((1, 2), (0, 1)), constant_values=c) ** 2)


def border_sum(img):
    p = np.pad(img, 1, mode="constant", constant_values=-1.0)
    return p[:-2, 1:-1] + p[2:, 1:-1] + img


def test_np_pad_with_constant_values_compiles_and_differentiates_in_x_and_c():
    # (refused: "np.pad() got an unexpected keyword argument 'constant_values'")
    x = np.arange(6.0).reshape(2, 3) * 0.1
    np.testing.assert_allclose(compiled(padded_energy, x, 0.7), padded_energy(x, 0.7),
                               rtol=1e-14)
    same(compiled(border_sum, x), border_sum(x))
    gx, gc = grad(padded_energy, argnums=(0, 1))(x, 0.7)
    np.testing.assert_allclose(gx, numerical_grad(padded_energy, [x, 0.7]), rtol=1e-6)
    np.testing.assert_allclose(gc, numerical_grad(padded_energy, [x, 0.7], argnum=1), rtol=1e-6)
    np.testing.assert_allclose(vmap(padded_energy, in_axes=(0, None))(np.stack([x, 2 * x]), 0.7),
                               [padded_energy(x, 0.7), padded_energy(2 * x, 0.7)])


def math_pow_terms(a, b, x):
    return math.pow(a, b) + math.pow(x, 2.5)


def test_math_pow_is_a_float_power_of_ints_too():
    # (math.pow(2, -3) raised "a Python int to a negative int power is a float")
    assert compiled(math_pow_terms, 2, -3, 1.5) == math_pow_terms(2, -3, 1.5)
    np.testing.assert_allclose(grad(math_pow_terms, argnums=2)(2, -3, 1.5), 2.5 * 1.5 ** 1.5)


def black_scholes_call(s, k, t, r, v):
    out = np.empty_like(s)
    for i in range(s.shape[0]):
        d1 = (math.log(s[i] / k[i]) + (r + 0.5 * v * v) * t) / (v * math.sqrt(t))
        d2 = d1 - v * math.sqrt(t)
        n1 = 0.5 * (1.0 + math.erf(d1 / math.sqrt(2.0)))
        n2 = 0.5 * (1.0 + math.erf(d2 / math.sqrt(2.0)))
        out[i] = s[i] * n1 - k[i] * math.exp(-r * t) * n2
    return out, math.sqrt(s[0]), math.fabs(-k[0]), math.floor(s[1])


def test_math_functions_of_float32_values_compute_in_double_precision():
    """math.* converts its argument to a C double and returns a Python float: of a float32
    element, jit computed in float32 (Black-Scholes on float32 arrays differed from NumPy
    by 2e-6 relative; math.sqrt(a[0]) was an np.float32)."""
    s = np.array([100.0, 95.5, 120.25], np.float32)
    k = np.array([101.0, 90.0, 100.0], np.float32)
    got = compiled(black_scholes_call, s, k, 0.5, 0.03, np.float32(0.2))
    want = black_scholes_call(s, k, 0.5, 0.03, np.float32(0.2))
    same(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert g == w and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)


def walking_view(a):
    cur = a[:]
    for i in range(3):
        cur[0] += 1.0
        cur = cur[1:]
    return a


def walking_view_unwritten(a):
    cur = a[:]
    s = 0.0
    for i in range(3):
        s += cur[0]
        cur = cur[1:]
    return s


def test_a_written_view_rebound_to_a_view_of_itself_in_a_loop_is_refused():
    # (the generated code read a variable before it was set: NameError in the NumPy fallback)
    with pytest.raises(TranspileError, match=r"rebound to a view of itself"):
        jit(walking_view)(np.arange(5.0))
    with pytest.raises(TranspileError, match=r"rebound to a view of itself"):
        grad(lambda a: np.sum(walking_view(a)))(np.arange(5.0))
    # without a write through it, the walking view is only read: it compiles
    x = np.arange(1.0, 6.0)
    assert compiled(walking_view_unwritten, x) == walking_view_unwritten(x)


def clip_until_negative(a):
    for r in range(a.shape[0]):
        if a[r] < 0:
            return a
        a[r] = min(a[r], 1.0)
    return a


def first_rows_until(A, t):
    i = 0
    while i < A.shape[0]:
        if A[i, 0] > t:
            return A[i:], i
        A[i] *= 2.0
        i += 1
    return A, i


def test_an_early_return_of_an_argument_written_in_the_loop():
    # (refused: "reading a stale value: '_result_2' may share memory with 'a'")
    for x in (np.array([3.0, 0.5, -1.0, 2.0]), np.array([3.0, 0.5, 1.0, 2.0])):
        a, b = x.copy(), x.copy()
        want = clip_until_negative(a)
        got = compiled(clip_until_negative, b)
        same(got, want)
        same(b, a)
    A = np.arange(12.0).reshape(4, 3)
    for t in (5.0, 100.0):
        A1, A2 = A.copy(), A.copy()
        want = first_rows_until(A1, t)
        got = compiled(first_rows_until, A2, t)
        same(got[0], want[0])
        assert got[1] == want[1]
        same(A2, A1)
    g = grad(lambda x: np.sum(clip_until_negative(x.copy()) ** 2))(np.array([0.3, 0.5, -1.0, 2.0]))
    np.testing.assert_allclose(g, [0.6, 1.0, -2.0, 4.0])


def keeps_before_empty_loop(x, n):
    k = 2
    for k in range(n):
        x = x * 1.0
    return x[k] * k


def last_index(x, n):
    k = -1
    for k in range(n):
        pass
    return k + x[0]


def cholesky_sum(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        s = A[j, j]
        for k in range(j):          # runs zero times for j == 0, leaving k unbound
            s -= L[j, k] ** 2
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    return np.sum(L)


def test_a_loop_target_keeps_its_value_when_the_loop_runs_zero_times():
    # (jit gave k == 0 after `for k in range(0)`; vmap with a per-example count too, and
    # jit(vmap) raised TypeError on the unbound counter)
    x = np.array([1.0, 2.0, 3.0])
    for n in (0, 1, 3):
        assert compiled(keeps_before_empty_loop, x, n) == keeps_before_empty_loop(x, n)
        g = grad(keeps_before_empty_loop)(x, n)
        np.testing.assert_allclose(g, numerical_grad(keeps_before_empty_loop, (x, n)), atol=1e-6)
    X, N = np.arange(12.0).reshape(3, 4), np.array([0, 2, 4])
    want = [last_index(X[i], N[i]) for i in range(3)]
    np.testing.assert_array_equal(vmap(last_index)(X, N), want)
    np.testing.assert_array_equal(jit(vmap(last_index), wait=True)(X, N), want)


def test_grad_of_a_textbook_cholesky_whose_inner_loops_start_empty():
    # (eager grad raised UnboundLocalError: the counter of `for k in range(0)` was read)
    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 3))
    A = M @ M.T + 3 * np.eye(3)
    want = numerical_grad(cholesky_sum, (A,))
    np.testing.assert_allclose(grad(cholesky_sum)(A), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jit(grad(cholesky_sum))(A), want, rtol=1e-6, atol=1e-7)


def write_on_one_path(a):
    if a[0] > 0:
        a[0] = 5.0
    a[0] += 1.0
    return a


def pivot_rows(A):
    for k in range(2):
        if A[k, 0] > 0:
            tmp = A[k].copy()
            A[k] = A[2]
            A[2] = tmp
        A[k, k] += 1.0
    return A


def boundary(u, f):
    for i in range(u.shape[0]):
        if i == 0:
            u[i] = 2.0
        u[i] += f[i]
    return u


@pytest.mark.parametrize("f, args", [(write_on_one_path, (np.array([1.0, 2.0, 3.0]),)),
                                     (write_on_one_path, (np.array([-1.0, 2.0, 3.0]),)),
                                     (pivot_rows, (np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]]),)),
                                     (boundary, (np.zeros(4), np.ones(4)))])
def test_a_write_into_an_argument_on_one_path_then_another_write(f, args):
    # (refused: "may or may not share memory ... a view or an alias on one path only" — a
    # regression of the refusal of `if c: a, b = b, a` on arguments)
    want_args = [a.copy() for a in args]
    want = f(*want_args)
    got_args = [a.copy() for a in args]
    got = compiled(f, *got_args)
    same(got, want)
    for g, w in zip(got_args, want_args):
        same(g, w)
    x = args[0]
    np.testing.assert_allclose(grad(lambda v: np.sum(f(v.copy(), *args[1:]) ** 2))(x),
                               numerical_grad(lambda v, *r: np.sum(f(v.copy(), *r) ** 2),
                                              (x,) + args[1:]), rtol=1e-6, atol=1e-6)


def decay(x, lr):
    for i in range(3):
        lr *= 0.5
    return x * lr


def halving(x, h0):
    h = h0
    for i in range(3):
        h /= 2
    return x * h


def collatz_steps(n):
    s = 0
    while n != 1:
        n = 3 * n + 1 if n % 2 else n
        n //= 2 if n % 2 == 0 else 1
        s += 1
    return s


def test_a_number_argument_updated_by_an_augmented_assignment_in_a_loop():
    # (ShapesNeeded: "whether it is an array (written in place) or a number (rebound) is not
    # known" although jit is called with a Python float; collatz was refused as a possible alias)
    assert compiled(decay, 2.0, 0.1) == decay(2.0, 0.1)
    assert compiled(halving, 2.0, 0.1) == halving(2.0, 0.1)
    assert compiled(collatz_steps, 6) == collatz_steps(6)
    assert compiled(collatz_steps, 27) == collatz_steps(27)
    np.testing.assert_allclose(grad(decay)(2.0, 0.1), 0.1 / 8)


def step_size_control(x):
    h = 1.0
    for i in range(2):
        h = h * max(0.2, x[0] * x[1])
        h = h * np.where(x[1] > 0.5, 1.0, 0.5)
    return h


def test_second_derivatives_through_a_loop_with_max_and_where():
    # (hessian/jacfwd(grad)/jacrev(grad) raised "no derivative rule for argument 'condition'
    # of np.where": the condition, computed from the input, is read only for its truth)
    from transpile import hessian, jacfwd, jacrev
    x = np.array([1.0, 2.0])
    want = np.array([[2 * x[1] ** 2, 4 * x[0] * x[1]], [4 * x[0] * x[1], 2 * x[0] ** 2]])
    np.testing.assert_allclose(hessian(step_size_control)(x), want)
    np.testing.assert_allclose(jacfwd(grad(step_size_control))(x), want)
    np.testing.assert_allclose(jacrev(grad(step_size_control))(x), want)


# ---- a user function called through its module as a statement: kernels.step(u) ------------------

def normalize_then_clamp_via_module(A):
    B = A.copy()
    foreign_kernels.normalize_rows_inplace(B)      # writes into B; its value is None
    foreign_kernels.clamp_inplace(B, -0.5, 0.5)
    return np.sum(B[:, 0] * B[:, 1]) + np.sum(B)


def test_a_writing_function_called_through_its_module_is_followed():
    """`mod.f(u)` as a statement was refused as "an expression statement has no effect"
    (`f(u)` by its name was followed into f and its writes kept)."""
    A = np.random.default_rng(8).standard_normal((4, 3))
    got_A, want_A = A.copy(), A.copy()
    same(compiled(normalize_then_clamp_via_module, got_A),
         normalize_then_clamp_via_module(want_A))
    same(got_A, want_A)
    want = numerical_grad(normalize_then_clamp_via_module, [A.copy()])
    np.testing.assert_allclose(grad(normalize_then_clamp_via_module)(A), want, rtol=1e-6,
                               atol=1e-8)


# ---- an array and a list literal of numbers known at run time: x + [a, b] ------------------------

def shift_by_list(x, a, b):
    y = x.copy()
    y[:2] += [a, b]                  # NumPy: the list is an array, added elementwise
    return np.sum((x + [a, b, a * b]) ** 2) + np.sum(([b, a, 1.0] - x) ** 3) + np.sum(y ** 2)


def repeated_list_length(x, n):
    z = [0.0] * n                    # a list repeated, not an array
    return x * len(z)


def test_array_with_a_list_of_run_time_numbers_is_elementwise():
    """x + [a, b] was refused ("arithmetic on a tuple/list/dict")."""
    x = np.array([0.5, -1.0, 2.0])
    same(compiled(shift_by_list, x, 0.3, 0.7), shift_by_list(x, 0.3, 0.7))
    same(compiled(repeated_list_length, x, 3), repeated_list_length(x, 3))
    for argnums, at in ((0, x), (1, 0.3)):
        want = numerical_grad(lambda v: shift_by_list(*((v, 0.3, 0.7) if argnums == 0 else
                                                          (x, float(v), 0.7))),
                              [np.array(at, dtype=float)])
        np.testing.assert_allclose(grad(shift_by_list, argnums=argnums)(x, 0.3, 0.7), want,
                                   rtol=1e-6, atol=1e-8)
    X, a, b = np.random.default_rng(9).random((3, 3)), np.array([0.1, 0.2, 0.3]), np.ones(3)
    want = np.array([shift_by_list(X[k], a[k], b[k]) for k in range(3)])
    np.testing.assert_allclose(vmap(shift_by_list)(X, a, b), want, rtol=1e-13)


# ---- np.mgrid[0:R, 0:R] (npbench's stockham and mandelbrot) -------------------------------------

def dft_matrix_mgrid(R):
    i, j = np.mgrid[0:R, 0:R]
    return np.exp(-2j * np.pi * i * j / R)


def odd_steps_mgrid(n):
    return np.mgrid[1:n:2] * 1.5


def weighted_by_coordinates(x):
    i, j = np.mgrid[0:x.shape[0], 0:x.shape[1]]
    return np.sum(x * i + x ** 2 * j)


def test_mgrid_of_slices_compiles_and_differentiates():
    """np.mgrid[0:R, 0:R] was refused ("unsupported expression: Slice")."""
    same(compiled(dft_matrix_mgrid, 4), dft_matrix_mgrid(4))
    same(compiled(odd_steps_mgrid, 9), odd_steps_mgrid(9))
    x = np.random.default_rng(10).random((3, 4))
    same(compiled(weighted_by_coordinates, x), weighted_by_coordinates(x))
    want = numerical_grad(weighted_by_coordinates, [x.copy()])
    np.testing.assert_allclose(grad(weighted_by_coordinates)(x), want, rtol=1e-6, atol=1e-8)
