"""Derivatives that used to be silently wrong (issue #14), each checked in grad, jvp,
jit(grad) and vmap(grad) against the analytic value, central differences and JAX.

    grad(lambda x: np.sum(np.array([[x, x], [x, x]])))(1.0)   was 0.0, true 4.0
    grad(lambda a: np.sum([1.0, a * a, 2.0]))(0.7)             was 4.2, true 1.4
    grad(lambda x: x % 2.0)(0.5)                               was 0.0, true 1.0 (mod family)
    grad(lambda a: np.sum(np.linspace(a, 3.0, 5)))(1.0)        was 0.0, true 2.5
and: reductions over Python lists, np.r_/np.c_ treated as constants, einsum '...' cotangent
shapes, np.inner(scalar, vector) / np.dot(3-D, 1-D) crashes, complex gradients (JAX's
convention: conj), float32 gradients promoted to float64, jit of linspace(endpoint=False).
"""
import warnings

import numpy as np
import pytest
import scipy.stats

from transpile import grad, hessian, jit, jvp, vmap
from transpile.errors import TranspileError, TranspileWarning

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

C3 = np.array([0.5, -1.0, 2.0])


def nested_list(x):
    return np.sum(np.array([[x, x], [x, x]]))


def python_list_sum(a):
    return np.sum([1.0, a * a, 2.0])


def percent(x):
    return x % 2.0


def np_mod(x):
    return np.mod(x, 2.0)


def np_remainder(x):
    return np.remainder(x, 2.0)


def np_fmod(x):
    return np.fmod(x, 2.0)


def mod_divisor(y):
    return np.mod(5.3, y)


def linspace_start(a):
    return np.sum(np.linspace(a, 3.0, 5))


def linspace_open(a):
    return np.sum(np.linspace(0.5, a, 4, endpoint=False) * C3[[0, 1, 2, 2]])


def mean_of_list(x):
    return np.mean([x, x + 2.0])


def norm_of_list(x):
    return np.linalg.norm([x, x + 2])


def r_concat(x):
    return np.sum(np.r_[x, 2.0] * np.r_[x, 3.0])


def c_columns(x):
    return np.sum(np.c_[x * C3, 2.0 * C3] ** 2)


def einsum_ellipsis(x):
    return np.sum(np.einsum('...i,i->...', np.ones((2, 3)) * x, C3) ** 2)


def inner_scalar(x):
    return np.sum(np.inner(x, C3) ** 2)


def dot_3d_1d(x):
    return np.sum(np.dot(np.ones((2, 2, 3)) * x, C3) ** 2)


# (function, point, true derivative, the same function in jax.numpy)
CASES = [
    (nested_list, 1.0, 4.0, lambda x: jnp.sum(jnp.array([[x, x], [x, x]]))),
    (python_list_sum, 0.7, 1.4, lambda a: jnp.sum(jnp.array([1.0, a * a, 2.0]))),
    (percent, 0.5, 1.0, lambda x: x % 2.0),
    (np_mod, 2.5, 1.0, lambda x: jnp.mod(x, 2.0)),
    (np_remainder, -0.5, 1.0, lambda x: jnp.remainder(x, 2.0)),
    (np_fmod, -2.5, 1.0, lambda x: jnp.fmod(x, 2.0)),
    (mod_divisor, 2.0, -2.0, lambda y: jnp.mod(5.3, y)),
    (linspace_start, 1.0, 2.5, lambda a: jnp.sum(jnp.linspace(a, 3.0, 5))),
    (linspace_open, 2.0, 0.0 * 0.5 + 0.25 * -1.0 + 0.5 * 2.0 + 0.75 * 2.0,
     lambda a: jnp.sum(jnp.linspace(0.5, a, 4, endpoint=False) * C3[[0, 1, 2, 2]])),
    (mean_of_list, 0.3, 1.0, lambda x: jnp.mean(jnp.array([x, x + 2.0]))),
    (norm_of_list, 0.3, (2 * 0.3 + 2) / np.sqrt(0.3 ** 2 + 2.3 ** 2),
     lambda x: jnp.linalg.norm(jnp.array([x, x + 2]))),
    (r_concat, 0.3, 2 * 0.3, lambda x: jnp.sum(jnp.r_[x, 2.0] * jnp.r_[x, 3.0])),
    (c_columns, 0.3, 2 * 0.3 * np.sum(C3 ** 2),
     lambda x: jnp.sum(jnp.c_[x * C3, 2.0 * C3] ** 2)),
    (einsum_ellipsis, 0.3, 2 * 2 * 0.3 * np.sum(C3) ** 2,
     lambda x: jnp.sum(jnp.einsum('...i,i->...', jnp.ones((2, 3)) * x, C3) ** 2)),
    (inner_scalar, 0.3, 2 * 0.3 * np.sum(C3 ** 2), lambda x: jnp.sum(jnp.inner(x, C3) ** 2)),
    (dot_3d_1d, 0.3, 4 * 2 * 0.3 * np.sum(C3) ** 2,
     lambda x: jnp.sum(jnp.dot(jnp.ones((2, 2, 3)) * x, C3) ** 2)),
]
IDS = [c[0].__name__ for c in CASES]


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("f,x0,true,jf", CASES, ids=IDS)
def test_true_value_and_oracles(f, x0, true, jf):
    np.testing.assert_allclose(_fd(f, x0), true, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(float(jax.grad(jf)(x0)), true, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f,x0,true,jf", CASES, ids=IDS)
def test_grad(f, x0, true, jf):
    np.testing.assert_allclose(grad(f)(x0), true, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f,x0,true,jf", CASES, ids=IDS)
def test_jvp(f, x0, true, jf):
    out, tan = jvp(f, (x0,), (1.0,))
    np.testing.assert_allclose(out, f(x0), rtol=1e-12)
    np.testing.assert_allclose(tan, true, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f,x0,true,jf", CASES, ids=IDS)
def test_jit_grad(f, x0, true, jf):
    with warnings.catch_warnings():
        # rows without a Numba lowering run NumPy (warned, listed in tests/sweep_cases.py);
        # the number must be right either way
        warnings.simplefilter("ignore", TranspileWarning)
        got = jit(grad(f))(x0)
    np.testing.assert_allclose(got, true, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f,x0,true,jf", CASES, ids=IDS)
def test_vmap_grad(f, x0, true, jf):
    xs = np.array([x0, x0 + 0.25])
    want = [float(jax.grad(jf)(v)) for v in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = vmap(grad(f))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[0], true, rtol=1e-10, atol=1e-12)


def test_jit_linspace_endpoint_false():
    def f(x):
        return np.linspace(0.5, x, 4, endpoint=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(f)(2.0), np.linspace(0.5, 2.0, 4, endpoint=False))


# ---- complex inputs: JAX's convention, grad of a real f(z) = df/dx - i df/dy ------------------

def abs_squared(z):
    return np.sum(np.abs(z) ** 2)


def real_of_square(z):
    return np.sum(np.real(z * z) + np.imag(z) * 3.0)


def angle_weighted(z):
    return np.sum(np.angle(z) * np.array([1.0, -2.0]))


@pytest.mark.parametrize("f,jf", [
    (abs_squared, lambda z: jnp.sum(jnp.abs(z) ** 2)),
    (real_of_square, lambda z: jnp.sum(jnp.real(z * z) + jnp.imag(z) * 3.0)),
    (angle_weighted, lambda z: jnp.sum(jnp.angle(z) * jnp.array([1.0, -2.0]))),
], ids=["abs_squared", "real_of_square", "angle"])
def test_complex_gradient_matches_jax(f, jf):
    z = np.array([1.0 + 2.0j, 0.5 - 1.0j])
    want = np.asarray(jax.grad(jf)(z))
    got = grad(f)(z)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    for k in range(2):
        e = np.zeros(2, complex)
        e[k] = eps
        dx = (f(z + e) - f(z - e)) / (2 * eps)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        np.testing.assert_allclose(got[k], dx - 1j * dy, rtol=1e-6, atol=1e-8)
    if f is abs_squared:
        np.testing.assert_allclose(got, 2 * np.conj(z))


# ---- float32 in, float32 gradient out (as JAX) -----------------------------------------------

def promotes(x):
    return np.sum(x * np.float64(2.0) + np.linspace(0.0, 1.0, 3) * x)


def test_float32_gradient_keeps_dtype():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    g = grad(promotes)(x)
    assert g.dtype == np.float32
    want = jax.grad(lambda v: jnp.sum(v * 2.0 + jnp.linspace(0.0, 1.0, 3) * v))(
        jnp.asarray(x))
    assert want.dtype == jnp.float32
    np.testing.assert_allclose(g, np.asarray(want), rtol=1e-6)


# ---- refusals name the user's spelling and line -----------------------------------------------

def t_cdf_in_df(d):
    return scipy.stats.t.cdf(0.3, d)


def test_refusal_names_scipy_function_and_line():
    with pytest.raises(TranspileError, match=r"scipy\.stats\.t\.cdf") as e:
        grad(t_cdf_in_df)(3.0)
    assert f"test_gradient_regressions.py:{t_cdf_in_df.__code__.co_firstlineno + 1}" in \
        str(e.value)
    assert "rt." not in str(e.value).splitlines()[0]


# ---- holomorphic=True (as JAX) ----------------------------------------------------------------

def holo(z):
    return z * z + np.sin(z)


def holo_vec(z):
    return z * z + np.sin(z)


def test_holomorphic_grad_matches_jax():
    z = 1.0 + 1.0j
    want = complex(jax.grad(lambda v: v * v + jnp.sin(v), holomorphic=True)(z))
    assert abs(want - (2 * z + np.cos(z))) < 1e-12
    np.testing.assert_allclose(grad(holo, holomorphic=True)(z), want, rtol=1e-12)
    np.testing.assert_allclose(jit(grad(holo, holomorphic=True))(z), want, rtol=1e-12)
    zs = np.array([z, 0.5 - 2.0j])
    np.testing.assert_allclose(vmap(grad(holo, holomorphic=True))(zs), 2 * zs + np.cos(zs),
                               rtol=1e-12)
    eps = 1e-6   # a holomorphic derivative is the same along every direction
    np.testing.assert_allclose((holo(z + eps) - holo(z - eps)) / (2 * eps), want, rtol=1e-7)


def test_holomorphic_jacobians_match_jax():
    from transpile import jacfwd, jacrev
    z = np.array([1.0 + 1.0j, 0.5 - 2.0j])
    want = np.asarray(jax.jacfwd(lambda v: v * v + jnp.sin(v), holomorphic=True)(z))
    np.testing.assert_allclose(jacfwd(holo_vec, holomorphic=True)(z), want, rtol=1e-12)
    np.testing.assert_allclose(jacrev(holo_vec, holomorphic=True)(z), want, rtol=1e-12)
    with pytest.raises(TypeError, match="complex inputs"):
        jacfwd(holo_vec, holomorphic=True)(np.array([1.0, 2.0]))


def test_complex_output_needs_holomorphic():
    with pytest.raises(TypeError, match="holomorphic=True"):
        grad(holo)(1.0 + 1.0j)
    with pytest.raises(TypeError, match="complex inputs"):
        grad(holo, holomorphic=True)(1.0)


def test_jacobians_of_complex_values_without_holomorphic_are_refused_as_in_jax():
    # (jacrev of a real-to-complex function dropped the imaginary part, jacfwd of |z|^2 gave
    # d/dx only: numbers that contradicted each other)
    from transpile import hessian, jacfwd, jacrev
    z = np.array([1.0 + 1.0j, 0.5 - 2.0j])
    for transform in (jacfwd, jacrev, hessian):
        with pytest.raises(TypeError, match="real-valued inputs"):
            transform(lambda v: np.sum(np.abs(v) ** 2))(z)
    with pytest.raises(TypeError, match="real-valued outputs"):
        jacrev(lambda t: np.exp(1j * t))(np.array([0.1, 0.5]))
    # (jacfwd of a real input with complex outputs is defined, as in JAX)
    t = np.array([0.1, 0.5])
    np.testing.assert_allclose(jacfwd(lambda v: np.exp(1j * v))(t), np.diag(1j * np.exp(1j * t)))


# ---- np.prod and np.cumprod where x has zeros: products of the other elements (was NaN, 0 / 0)

def prod_all(x):
    return np.prod(x)


def prod_rows_squared(x):
    return np.sum(np.prod(x, axis=1) ** 2)


def prod_cols_kept(x):
    return np.sum(np.prod(x, axis=0, keepdims=True) * x)


def cumprod_weighted(x):
    return np.sum(np.cumprod(x) * np.arange(1.0, x.size + 1))


def cumprod_rows_squared(x):
    return np.sum(np.cumprod(x, axis=1) ** 2)


@pytest.mark.parametrize("f, x", [
    (prod_all, np.array([2.0, 0.0, 3.0])),                 # one zero
    (prod_all, np.array([0.0, 0.0, 3.0])),                 # two zeros: all 0
    (prod_all, np.array([2.0, 0.5, 3.0], np.float32)),     # none (float32 kept)
    (prod_rows_squared, np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])),
    (prod_cols_kept, np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])),
    (cumprod_weighted, np.array([2.0, 0.0, 3.0, 0.5])),            # one zero
    (cumprod_weighted, np.array([2.0, 0.0, 3.0, 0.0, 4.0])),       # two
    (cumprod_weighted, np.array([[2.0, 0.0], [3.0, 0.5]])),        # axis=None of a matrix
    (cumprod_weighted, np.array([2.0, 0.5, 3.0], np.float32)),
    (cumprod_rows_squared, np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])),
])
def test_prod_and_cumprod_gradients_where_x_has_zeros(f, x):
    want = np.asarray(jax.grad(_jax_version(f))(jnp.asarray(x, jnp.float64)))
    for got in (grad(f)(x), jit(grad(f))(x)):
        assert got.dtype == x.dtype
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    tangent = jvp(f, (x,), (np.ones_like(x),))[1]
    np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-5, atol=1e-6)


def _jax_version(f):
    return {cumprod_weighted: lambda a: jnp.sum(jnp.cumprod(a) * jnp.arange(1.0, a.size + 1)),
            cumprod_rows_squared: lambda a: jnp.sum(jnp.cumprod(a, axis=1) ** 2),
            prod_all: lambda a: jnp.prod(a),
            prod_rows_squared: lambda a: jnp.sum(jnp.prod(a, axis=1) ** 2),
            prod_cols_kept: lambda a: jnp.sum(jnp.prod(a, axis=0, keepdims=True) * a)}[f]


# ---- zip of a list of arrays with a global, a range or an array (wrong-shaped or zero
# gradients before: the list was looped over as one stacked array) ------------------------------

ACTIVATIONS = ("tanh", "none")
SCALES = (np.array([1.0, 2.0]), np.array([-1.0, 0.5]))
PAIRS = [(np.array([1.0, 2.0]), np.array([-1.0, 0.5]))]
CONFIG = {"scale": np.array([1.0, 2.0, 3.0]), "shift": 0.3}


def layers(params, x):
    for W, act in zip(params, ACTIVATIONS):
        x = x @ W
        if act == "tanh":
            x = np.tanh(x)
    return np.sum(x ** 2)


def layers_by_range(params, x):
    for W, i in zip(params, range(2)):
        x = np.tanh(x @ W) * (i + 1)
    return np.sum(x ** 2)


def scaled(q):
    s = 0.0
    for a, b in zip(q, SCALES):
        s = s + np.sum(a * a * b)
    return s


def paired(q):
    s = 0.0
    for (W1, b1), (W2, b2) in zip(q, PAIRS):
        s = s + np.sum(W1 * W1 * W2) + np.sum(b1 * b2)
    return s


def configured(x):
    return np.sum(x * CONFIG["scale"]) + CONFIG["shift"]


def _fd_tree(f, args, eps=1e-6):
    """Central differences of f for every leaf of args[0] (a tree of float arrays)."""
    leaves, tree = jax.tree_util.tree_flatten(args[0])
    out = []
    for k, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for i in np.ndindex(leaf.shape):
            parts = []
            for sign in (1.0, -1.0):
                moved = [np.array(v, copy=True) for v in leaves]
                moved[k][i] += sign * eps
                parts.append(f(jax.tree_util.tree_unflatten(tree, moved), *args[1:]))
            g[i] = (parts[0] - parts[1]) / (2 * eps)
        out.append(g)
    return out


@pytest.mark.parametrize("f, args", [
    (layers, ([np.array([[0.5, 0.2], [0.1, 0.4]]), np.array([[1.0, -0.3], [0.2, 1.0]])],
              np.array([0.5, -1.0]))),
    (layers_by_range, ([np.array([[0.5, 0.2], [0.1, 0.4]]), np.array([[1.0, -0.3], [0.2, 1.0]])],
                       np.array([0.5, -1.0]))),
    (scaled, ((np.array([0.3, -0.2]), np.array([1.5, 0.7])),)),
    (paired, ([(np.array([0.3, -0.2]), np.array([1.5, 0.7]))],)),
    (configured, (np.array([0.5, -1.0, 2.0]),)),
])
def test_zip_with_globals_and_ranges_gives_the_gradients_of_finite_differences(f, args):
    want = _fd_tree(f, args)
    for got in (grad(f)(*args), jit(grad(f))(*args)):
        got_leaves = jax.tree_util.tree_leaves(got)
        assert len(got_leaves) == len(want)
        for g, w in zip(got_leaves, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(f)(*args), f(*args), rtol=1e-12)


GLOBAL_LIST = [np.ones(2), 2.0]


def reads_a_global_list(x):
    return np.sum(x * GLOBAL_LIST[0]) + GLOBAL_LIST[1] + len(GLOBAL_LIST)


def test_a_global_list_changed_between_calls_is_read_again():
    x = np.array([1.0, 2.0])
    saved = list(GLOBAL_LIST)
    try:
        f = jit(reads_a_global_list)
        for change in [lambda: None, lambda: GLOBAL_LIST.__setitem__(1, 3.0),
                       lambda: GLOBAL_LIST.__setitem__(0, np.array([5.0, 6.0])),
                       lambda: GLOBAL_LIST[0].__setitem__(0, 7.0),
                       lambda: GLOBAL_LIST.append(1.0)]:
            change()
            assert f(x) == reads_a_global_list(x)
    finally:
        GLOBAL_LIST[:] = saved


def python_min_max(x):
    return min(x[1], x[0]), max(x[1], x[0]), min(x[0], x[1]), max(x[2], x[0], x[1])


def test_builtin_min_max_pass_over_a_later_nan_as_python_does():
    x = np.array([np.nan, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jit(python_min_max)(x)
    np.testing.assert_equal(got, python_min_max(x))      # (1, 1, nan, 2)
    y = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(grad(lambda v: sum(python_min_max(v)))(y), [1.0, 2.0, 1.0])


def relu_clips(x):
    return np.sum(np.clip(x, 0.0, None) ** 2 + np.clip(x, None, 0.5) * 3.0 + x.clip(0.1) +
                  np.clip(x, min=-0.5, max=1.5))


def test_clip_with_one_bound_under_every_transform():
    # np.clip(x, 0.0, None) was printed as np.clip(x, 0.0): NumPy raised for the missing bound
    x = np.array([-1.0, 0.7, 2.0, 0.3])
    want = numerical_grad_1d(relu_clips, x)
    np.testing.assert_allclose(grad(relu_clips)(x), want, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(relu_clips)(x), relu_clips(x), rtol=1e-12)
        np.testing.assert_allclose(jit(grad(relu_clips))(x), want, rtol=1e-6)
    np.testing.assert_allclose(jvp(relu_clips, (x,), (np.ones(4),))[1], np.sum(want), rtol=1e-6)
    X = np.stack([x, -x])
    np.testing.assert_allclose(vmap(relu_clips)(X), [relu_clips(x), relu_clips(-x)], rtol=1e-12)


def numerical_grad_1d(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def polynomial_features(x, c):
    s = 0.0
    for k in range(4):
        s = s + c[k] * x ** k           # x ** 0 at x == 0: its derivative is 0, not 0 * inf
    return np.sum(s)


def test_power_rule_at_zero_exponent_and_zero_base_against_jax():
    x = np.array([0.0, -1.0, 2.0])
    c = np.array([0.5, 1.0, -0.25, 0.75])

    def jax_poly(v):
        return jnp.sum(sum(c[k] * v ** k for k in range(4)))
    want = np.asarray(jax.grad(jax_poly)(x))
    np.testing.assert_allclose(grad(polynomial_features)(x, c), want, rtol=1e-12)
    np.testing.assert_allclose(jit(grad(polynomial_features))(x, c), want, rtol=1e-12)
    np.testing.assert_allclose(np.diag(hessian(polynomial_features)(x, c)),
                               np.diag(np.asarray(jax.hessian(jax_poly)(x))), rtol=1e-12)
    np.testing.assert_array_equal(grad(lambda v: np.sum(v ** 0))(x), np.zeros(3))


def batched_matmul_loss(A, W):
    return np.sum(np.tanh(np.einsum("...ij,jk->...ik", A, W)))


def test_grad_of_einsum_with_an_ellipsis_against_jax():
    # the cotangent of W contracted '...ik,...ij->jk', which NumPy refuses (no '...' out)
    rng = np.random.default_rng(5)
    A, W = rng.standard_normal((2, 3, 4, 2)), rng.standard_normal((2, 3))
    want = jax.grad(lambda a, w: jnp.sum(jnp.tanh(jnp.einsum("...ij,jk->...ik", a, w))),
                    argnums=(0, 1))(A, W)
    for got in (grad(batched_matmul_loss, argnums=(0, 1))(A, W),
                jit(grad(batched_matmul_loss, argnums=(0, 1)))(A, W)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10)


def scaled_product(*xs, scale=2.0):
    return np.sum(xs[0] * xs[1]) * scale


def test_jvp_of_star_args_with_a_keyword_only_default():
    Z = np.full((2, 2), 1.5)
    value, tangent = jvp(scaled_product, (Z, Z), (Z, Z))
    assert value == 18.0 and tangent == 36.0


def float32_accumulator(x):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]                   # a NumPy scalar: rebound, and float32 + float64 is float64
    return s


def int32_counter(x):
    c = np.int32(0)
    for v in x:
        c += v
    return c


def narrow_constant(x):
    return np.float32(0.5) + x[0]


def int64_constant(a):
    return a + np.int64(1)          # int64 in NumPy 2 (a Python 1 would keep int32 and wrap)


@pytest.mark.parametrize("f, x", [
    (float32_accumulator, np.array([0.1, 0.2, 0.4666666676666667])),
    (int32_counter, np.array([3_000_000_000, 5])),       # int32 would wrap
    (narrow_constant, np.array([0.1, 0.2])),
    (int64_constant, np.array([2 ** 31 - 1, 5], dtype=np.int32))])
@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_narrow_numpy_scalars_widen_as_numpy_does(f, x, backend):
    want = f(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)     # (a type change: NumPy version)
        got = jit(f, backend=backend)(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


def int_started_sum(x):
    s = 0                           # an int, widened by the first `+=`
    for i in range(x.shape[0]):
        s += x[i]
    p = 1
    for i in range(x.shape[0]):
        p *= x[i] + 2.0
    return s * s + p


def test_an_int_started_accumulator_carries_every_term_under_every_transform():
    # the augmented assignment's derivative was cut where its old value was an int: the
    # first iteration's term was lost under grad, jvp, jacfwd and hessian; vmap raised
    from transpile import jacfwd, value_and_grad
    x = np.array([0.5, 1.5, -2.0, 3.0])
    want = numerical_grad_1d(int_started_sum, x)
    np.testing.assert_allclose(grad(int_started_sum)(x), want, rtol=1e-6)
    np.testing.assert_allclose(value_and_grad(int_started_sum)(x)[1], want, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(int_started_sum))(x), want, rtol=1e-6)
    np.testing.assert_allclose(jacfwd(int_started_sum)(x), want, rtol=1e-6)
    np.testing.assert_allclose(jvp(int_started_sum, (x,), (np.ones(4),))[1], np.sum(want),
                               rtol=1e-6)
    np.testing.assert_allclose(hessian(int_started_sum)(x), jax.hessian(
        lambda v: jnp.sum(v) ** 2 + jnp.prod(v + 2.0))(x), rtol=1e-10)
    X = np.stack([x, 2 * x])
    np.testing.assert_allclose(vmap(int_started_sum)(X), [int_started_sum(r) for r in X],
                               rtol=1e-12)


def float32_conv(w, x):
    out = np.zeros(x.shape[0] - 2)          # float64, as np.zeros makes it
    for k in range(3):
        out = out + w[k] * x[k:k + x.shape[0] - 2]
    return np.sum(out ** 2)


def test_jit_grad_of_float32_weights_with_a_float64_accumulator_compiles():
    # the cotangent of w[k] was float64, so w's adjoint changed type in the loop: jit(grad)
    # ran NumPy; a float32 value's cotangent is float32 (as in JAX)
    w = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    x = np.arange(6.0, dtype=np.float32)
    want = grad(float32_conv)(w, x)
    assert want.dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jit(grad(float32_conv))(w, x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(want, numerical_grad_1d(
        lambda v: float32_conv(v, x.astype(np.float64)), w.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("f", [lambda x: np.nanmean(x), lambda x: np.linalg.norm(x, 1),
                               lambda x: np.linalg.norm(x, np.inf),
                               lambda x: np.linalg.norm(x, ord=np.inf, axis=1),
                               lambda x: np.nanstd(x, axis=0)])
def test_a_float32_primal_has_a_float32_tangent(f):
    # (the tangent came back float64: a rule's mask or count promoted it)
    from transpile import jvp
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
    y, t = jvp(f, (x,), (np.ones_like(x),))
    assert np.asarray(y).dtype == np.float32 and np.asarray(t).dtype == np.float32
    eps = 1e-3
    np.testing.assert_allclose(t, (f(x.astype(np.float64) + eps) - f(x.astype(np.float64) - eps))
                               / (2 * eps), rtol=1e-4, atol=1e-4)
