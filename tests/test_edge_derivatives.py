"""Derivatives that used to be wrong, to crash or to be refused (edge points such as zeros,
ties and infinities, empty arrays, keyword arguments), each checked against central
differences (float64) and JAX:

    grad(lambda x: np.sum(np.diff(x, n=2, axis=0)))(np.ones((1, 3)))   had shape (2, 3), not (1, 3)
    jvp of np.linalg.matrix_power(a, 0) was the scalar 0; hessian of matrix_power(a, k) raised
    jacfwd(lambda x: np.mean(x, axis=1))(np.zeros((2, 0))) had shape (2, 0), not (2, 2, 0)
    vmap(jacrev(lambda x: np.diff(x, n=2, axis=0)))(np.ones((4, 2, 3))) had shape (4, 0, 3)
    grad of np.hypot at (0, 0), np.cbrt at 0, np.logaddexp(inf, inf) were nan (JAX: finite / inf)
    vmap(jacrev(np.linalg.cholesky)) and vmap(jacrev/jacfwd) through qr raised in np.linalg.solve
    grad of np.clip with respect to its bounds was refused
    hessians of np.prod / np.cumprod where x has zeros missed the terms through the zeros
    np.vander was refused under grad
    np.fmax / np.fmin split a tie 0.5 / 0.5 (JAX: all to y)
    np.sum / prod / max / min with where= or initial= were refused
    np.linalg.outer / np.linalg.trace (NumPy 2) were refused
    jvp / jacfwd of np.linalg.qr of a wide matrix raised LinAlgError (reverse mode still does)
"""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile.errors import TranspileWarning

from fd_helpers import numgrad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


_fd_grad = numgrad          # central differences of a scalar f at x (float64)


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        return fn(*args)


# ---- np.diff with n at least the length of the axis: the result is empty ---------------------

def diff_rows_twice(x):
    return np.sum(np.diff(x, n=2, axis=0) * 3.0)


def diff_thrice(x):
    return np.sum(np.diff(x, n=3) ** 2)


def diff_twice_squared(x):
    return np.sum(np.diff(x, n=2, axis=0) ** 2)


@pytest.mark.parametrize("f,jf,x", [
    (diff_rows_twice, lambda x: jnp.sum(jnp.diff(x, n=2, axis=0) * 3.0), np.ones((1, 3))),
    (diff_thrice, lambda x: jnp.sum(jnp.diff(x, n=3) ** 2), np.array([0.5, 2.0])),
    (diff_twice_squared, lambda x: jnp.sum(jnp.diff(x, n=2, axis=0) ** 2),
     np.array([[0.5, 2.0, -1.0]])),
], ids=["rows_n2_len1", "n3_len2", "squared_n2_len1"])
def test_diff_longer_than_axis_has_zero_cotangent_of_x_shape(f, jf, x):
    want = np.asarray(jax.grad(jf)(x))
    assert want.shape == x.shape
    np.testing.assert_allclose(_fd_grad(f, x), want, atol=1e-9)
    for name, got in [("grad", tp.grad(f)(x)),
                      ("value_and_grad", tp.value_and_grad(f)(x)[1]),
                      ("vjp", tp.vjp(f, x)[1](1.0)[0]),
                      ("jit(grad)", _quiet(tp.jit(tp.grad(f)), x))]:
        assert got.shape == x.shape, name
        assert got.dtype == np.float64, name
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=name)
    h = tp.hessian(f)(x)
    assert h.shape == x.shape + x.shape
    np.testing.assert_allclose(h, np.asarray(jax.hessian(jf)(x)), atol=1e-12)
    xs = np.stack([x, x + 1.0])
    got = _quiet(tp.vmap(tp.grad(f)), xs)
    assert got.shape == xs.shape
    np.testing.assert_allclose(got, np.asarray(jax.vmap(jax.grad(jf))(xs)), atol=1e-12)


def test_diff_cotangent_unchanged_where_axis_is_long_enough():
    x = np.array([[0.5, 2.0], [1.0, -1.0], [3.0, 0.25], [2.0, 2.0]])
    want = np.asarray(jax.grad(lambda x: jnp.sum(jnp.diff(x, n=2, axis=0) ** 2))(x))
    np.testing.assert_allclose(_fd_grad(diff_twice_squared, x), want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tp.grad(diff_twice_squared)(x), want, rtol=1e-12)
    np.testing.assert_allclose(_quiet(tp.jit(tp.grad(diff_twice_squared)), x), want, rtol=1e-12)


# ---- np.linalg.matrix_power: A^0 = I has a zero derivative of x's shape ----------------------

A3 = np.array([[3.0, 0.5, 0.2], [0.1, 2.0, 0.3], [0.4, 0.2, 2.5]])


def power_zero_times(a):
    return np.linalg.matrix_power(a, 0) * a


def test_matrix_power_zero_tangent_has_x_shape():
    t = np.arange(9.0).reshape(3, 3)
    out, tan = tp.jvp(lambda a: np.linalg.matrix_power(a, 0), (A3,), (t,))
    np.testing.assert_allclose(out, np.eye(3))
    assert tan.shape == (3, 3) and tan.dtype == np.float64
    np.testing.assert_array_equal(tan, 0.0)
    out32, tan32 = tp.jvp(lambda a: np.linalg.matrix_power(a, 0), (A3.astype(np.float32),),
                          (t.astype(np.float32),))
    assert tan32.shape == (3, 3) and tan32.dtype == np.float32
    want = np.asarray(jax.jacfwd(lambda a: jnp.linalg.matrix_power(a, 0) * a)(A3))
    for jac in (tp.jacfwd, tp.jacrev):
        got = jac(power_zero_times)(A3)
        assert got.shape == (3, 3, 3, 3)
        np.testing.assert_allclose(got, want, atol=1e-12)
    got = _quiet(tp.vmap(tp.jacfwd(power_zero_times)), np.stack([A3, 2 * A3]))
    assert got.shape == (2, 3, 3, 3, 3)
    np.testing.assert_allclose(got[1], want, atol=1e-12)


@pytest.mark.parametrize("k", [3, 2, 1, -1, -2])
def test_matrix_power_hessian(k):
    # the hessian differentiates the rule's own matrix_power(x, 0) terms (it used to raise:
    # matmul on the scalar tangent 0)
    def f(a):
        return np.sum(np.linalg.matrix_power(a, k) * A3)

    def jf(a):
        return jnp.sum(jnp.linalg.matrix_power(a, k) * A3)
    want = np.asarray(jax.hessian(jf)(A3))
    got = tp.hessian(f)(A3)
    assert got.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)
    gradf = tp.grad(f)
    fd = np.stack([_fd_grad(lambda a, i=i: gradf(a)[i], A3) for i in np.ndindex(3, 3)])
    np.testing.assert_allclose(got.reshape(9, 3, 3), fd, rtol=1e-5, atol=1e-6)


# ---- Jacobians with zero-size arrays keep every axis -----------------------------------------

def mean_rows(x):
    return np.mean(x, axis=1)


def diff_rows(x):
    return np.diff(x, n=2, axis=0)


def test_jacfwd_of_an_empty_argument_has_output_and_argument_axes():
    x = np.zeros((2, 0))
    want = jax.jacfwd(lambda x: jnp.mean(x, axis=1))(x).shape
    assert want == (2, 2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # the mean of nothing
        for jac in (tp.jacfwd, tp.jacrev):
            got = jac(mean_rows)(x)
            assert got.shape == want and got.dtype == np.float64


@pytest.mark.parametrize("jac,jjac", [(tp.jacrev, jax.jacrev), (tp.jacfwd, jax.jacfwd)],
                         ids=["jacrev", "jacfwd"])
def test_vmap_jacobian_of_an_empty_output(jac, jjac):
    xs = np.arange(24.0).reshape(4, 2, 3)
    want = np.asarray(jax.vmap(jjac(lambda x: jnp.diff(x, n=2, axis=0)))(xs))
    assert want.shape == (4, 0, 3, 2, 3)
    got = _quiet(tp.vmap(jac(diff_rows)), xs)
    assert got.shape == want.shape
    np.testing.assert_array_equal(jac(diff_rows)(xs[0]).shape, (0, 3, 2, 3))


@pytest.mark.parametrize("n,axis", [(1, 0), (2, 1), (1, -1), (3, -2)])
def test_vmap_of_diff_and_its_gradient(n, axis):
    xs = np.cos(np.arange(60.0)).reshape(3, 5, 4)
    w = np.sin(np.arange(60.0)).reshape(3, 5, 4)

    def f(x, w):
        d = np.diff(x * w[0], n, axis)
        return np.sum(d * d)

    def jf(x, w):
        d = jnp.diff(x * w[0], n, axis)
        return jnp.sum(d * d)
    np.testing.assert_allclose(
        _quiet(tp.vmap(lambda x: np.diff(x, n, axis)), xs),
        np.stack([np.diff(x, n, axis) for x in xs]), rtol=1e-14)
    want = np.asarray(jax.vmap(jax.grad(jf), in_axes=(0, None))(xs, w))
    got = _quiet(tp.vmap(tp.grad(f), in_axes=(0, None)), xs, w)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_fd_grad(lambda x: f(x, w), xs[1]), want[1], rtol=1e-6, atol=1e-7)
    hess = _quiet(tp.vmap(tp.jacrev(tp.grad(f)), in_axes=(0, None)), xs[:, :3, :2], w[:, :3, :2])
    np.testing.assert_allclose(
        hess, np.asarray(jax.vmap(jax.hessian(jf), in_axes=(0, None))(xs[:, :3, :2], w[:, :3, :2])),
        rtol=1e-12, atol=1e-12)


# ---- np.hypot at (0, 0), np.cbrt at 0, np.logaddexp at +inf: JAX's values, not nan -----------

def _grads2(f, a, b):
    return np.array(tp.grad(f, (0, 1))(a, b)), np.array(_quiet(tp.jit(tp.grad(f, (0, 1))), a, b))


def hypot2(a, b):
    return np.hypot(a, b)


def logaddexp_2(a, b):
    return np.logaddexp(a, b)


def logaddexp2_2(a, b):
    return np.logaddexp2(a, b)


@pytest.mark.parametrize("a,b", [(0.0, 0.0), (-0.0, 0.0), (0.0, 2.0), (2.0, 0.0), (3.0, -4.0)])
def test_hypot_subgradient_at_origin_as_jax(a, b):
    want = np.array(jax.grad(jnp.hypot, (0, 1))(a, b))
    for got in _grads2(hypot2, a, b):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    v = np.array([a, b])
    want_h = np.asarray(jax.hessian(lambda v: jnp.hypot(v[0], v[1]))(v))
    got_h = tp.hessian(lambda v: np.hypot(v[0], v[1]))(v)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-12, atol=1e-15)
    if a or b:       # away from the kink: central differences
        np.testing.assert_allclose(want, [_fd_grad(lambda t: np.hypot(t, b), a),
                                          _fd_grad(lambda t: np.hypot(a, t), b)], rtol=1e-7)
    # one zero pair in a vector no longer poisons the whole jvp with nan
    x = np.array([0.0, 3.0])
    y = np.array([0.0, 4.0])
    _, tan = tp.jvp(lambda x: np.sum(np.hypot(x, y)), (x,), (np.ones(2),))
    np.testing.assert_allclose(tan, 0.5 + 0.6)


@pytest.mark.parametrize("f,jf", [(logaddexp_2, jnp.logaddexp), (logaddexp2_2, jnp.logaddexp2)],
                         ids=["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("a,b", [(np.inf, np.inf), (np.inf, -np.inf), (-np.inf, 1.0),
                                 (2.0, 1.0), (-3.0, 0.5)])
def test_logaddexp_at_infinity_as_jax(f, jf, a, b):
    want = np.array(jax.grad(jf, (0, 1))(a, b))
    for got in _grads2(f, a, b):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    if np.isfinite(a) and np.isfinite(b):
        np.testing.assert_allclose(want, [_fd_grad(lambda t: f(t, b), a),
                                          _fd_grad(lambda t: f(a, t), b)], rtol=1e-7)


def test_logaddexp_of_inf_and_a_finite_value():
    # d/dy logaddexp(inf, y) is 0 (logaddexp(inf, y) = inf for every y); the infinite operand
    # gets 1. (JAX gives exp(y) for the finite one: not followed.)
    for got in _grads2(logaddexp_2, np.inf, 1.0):
        np.testing.assert_array_equal(got, [1.0, 0.0])
    for got in _grads2(logaddexp2_2, 1.0, np.inf):
        np.testing.assert_array_equal(got, [0.0, 1.0])


def test_cbrt_derivative_at_zero_is_inf_as_jax():
    for x in (0.0, np.float64(0.0)):
        assert tp.grad(np.cbrt)(x) == float(jax.grad(jnp.cbrt)(0.0)) == np.inf
        assert _quiet(tp.jit(tp.grad(np.cbrt)), x) == np.inf
    x = np.array([0.0, -8.0, 0.125], np.float32)
    got = tp.grad(lambda x: np.sum(np.cbrt(x)))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [np.inf, 1 / 12, 4 / 3], rtol=1e-6)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(_fd_grad(lambda t: np.cbrt(t), x64[1]), 1 / 12, rtol=1e-8)
    np.testing.assert_allclose(
        tp.hessian(lambda x: np.sum(np.cbrt(x)))(x64[1:]),
        np.asarray(jax.hessian(lambda x: jnp.sum(jnp.cbrt(x)))(x64[1:])), rtol=1e-12)


# ---- vmap of Jacobians through linalg rules: np.linalg.solve on stacks of matrices -------------

def _spd(rng, *shape):
    a = rng.standard_normal(shape + (3, 3))
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)


def cholesky_of(a):
    return np.linalg.cholesky(a)


def qr_r_of(a):
    q, r = np.linalg.qr(a)
    return r


def qr_q_of(a):
    q, r = np.linalg.qr(a)
    return q


@pytest.mark.parametrize("jac", [tp.jacrev, tp.jacfwd], ids=["jacrev", "jacfwd"])
@pytest.mark.parametrize("f,jf,shape", [
    (cholesky_of, None, (3, 3)),
    (qr_r_of, lambda a: jnp.linalg.qr(a)[1], (3, 3)),
    (qr_r_of, lambda a: jnp.linalg.qr(a)[1], (4, 3)),
    (qr_q_of, lambda a: jnp.linalg.qr(a)[0], (4, 3)),
], ids=["cholesky", "qr_r", "qr_r_tall", "qr_q_tall"])
def test_vmap_of_jacobian_through_linalg(jac, f, jf, shape):
    rng = np.random.default_rng(0)
    xs = _spd(rng, 2) if shape == (3, 3) else rng.standard_normal((2,) + shape)
    got = _quiet(tp.vmap(jac(f)), xs)
    out_shape = f(xs[0]).shape
    assert got.shape == (2,) + out_shape + shape
    for i in range(2):
        # central differences of NumPy's own function (cholesky reads the lower triangle)
        fd = np.stack([_fd_grad(lambda a, k=k: f(a)[k], xs[i]) for k in np.ndindex(out_shape)])
        np.testing.assert_allclose(got[i].reshape(fd.shape), fd, rtol=1e-6, atol=1e-7)
    if jf is not None:
        np.testing.assert_allclose(got, np.asarray(jax.vmap(jax.jacrev(jf))(xs)), rtol=1e-10,
                                   atol=1e-12)


def test_vmap_of_solve_with_stacks_of_matrices_and_vectors():
    rng = np.random.default_rng(1)
    a = _spd(rng, 2)
    a_stack = _spd(rng, 2, 4)
    b_stack = rng.standard_normal((2, 5, 3, 2))
    b_vec = rng.standard_normal((2, 3))
    cases = [
        (lambda a, b: np.linalg.solve(a, b), (a, b_stack)),          # b: a stack per example
        (lambda a, b: np.linalg.solve(a, b), (a_stack, b_vec)),      # a: a stack, b a vector
        (lambda a, b: np.linalg.solve(a, b), (a_stack, b_stack[:, :4])),
    ]
    for f, (x, y) in cases:
        want = np.stack([np.linalg.solve(x[i], y[i]) for i in range(2)])
        np.testing.assert_allclose(_quiet(tp.vmap(f), x, y), want, rtol=1e-12)
        np.testing.assert_allclose(_quiet(tp.vmap(f, in_axes=(None, 0)), x[0], y),
                                   np.stack([np.linalg.solve(x[0], y[i]) for i in range(2)]),
                                   rtol=1e-12)
    want = np.asarray(jax.vmap(jax.jacrev(jnp.linalg.solve, argnums=(0, 1)))(a, b_vec)[0])
    got = _quiet(tp.vmap(tp.jacrev(lambda a, b: np.linalg.solve(a, b))), a, b_vec)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---- np.clip: derivatives with respect to its bounds ------------------------------------------

CX = np.array([-1.0, 0.5, 2.0, 0.9, -0.7])
CLO = np.array([-0.5, 0.0, 0.3, 1.2, -0.2])     # lo > hi at entry 3: the result is hi
CHI = np.array([1.0, 0.8, 1.5, 0.6, 0.1])
CW = np.arange(1.0, 6.0)


def clip_both(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * CW)


def clip_low(x, lo):
    return np.sum(np.clip(x, lo, None) ** 2)


def clip_high(x, hi):
    return np.sum(np.clip(x, None, hi) ** 2)


def clip_scalar_low(x, lo):
    return np.sum(np.clip(x, lo, 1.0) * CW)


@pytest.mark.parametrize("f,jf,args", [
    (clip_both, lambda x, lo, hi: jnp.sum(jnp.clip(x, lo, hi) * CW), (CX, CLO, CHI)),
    (clip_low, lambda x, lo: jnp.sum(jnp.clip(x, lo, None) ** 2), (CX, CLO)),
    (clip_high, lambda x, hi: jnp.sum(jnp.clip(x, None, hi) ** 2), (CX, CHI)),
    (clip_scalar_low, lambda x, lo: jnp.sum(jnp.clip(x, lo, 1.0) * CW), (CX, 0.2)),
], ids=["both", "low", "high", "scalar_low"])
def test_clip_bounds_are_differentiated(f, jf, args):
    nums = tuple(range(len(args)))
    want = [np.asarray(v) for v in jax.grad(jf, nums)(*args)]
    for i, a in enumerate(args):       # (no point sits on a kink)
        fd = _fd_grad(lambda t, i=i: f(*args[:i], t, *args[i + 1:]), a)
        np.testing.assert_allclose(fd, want[i], atol=1e-8)
    for got in (tp.grad(f, nums)(*args), _quiet(tp.jit(tp.grad(f, nums)), *args)):
        for g, w, a in zip(got, want, args):
            assert np.shape(g) == np.shape(a)
            np.testing.assert_allclose(g, w, atol=1e-14)
    _, tan = tp.jvp(lambda b: f(args[0], b, *args[2:]), (args[1],), (np.ones_like(args[1]),))
    np.testing.assert_allclose(tan, np.sum(want[1]), rtol=1e-14)
    los = np.stack([np.asarray(args[1]), np.asarray(args[1]) - 0.25])
    got = _quiet(tp.vmap(tp.grad(f, 1), in_axes=(None, 0) + (None,) * (len(args) - 2)),
                 args[0], los, *args[2:])
    np.testing.assert_allclose(
        got, np.asarray(jax.vmap(jax.grad(jf, 1), in_axes=(None, 0) + (None,) * (len(args) - 2))(
            args[0], los, *args[2:])), atol=1e-14)


# ---- second derivatives of np.prod / np.cumprod where x has zeros ----------------------------

PW = np.array([[1.0, -2.0, 0.5], [3.0, 1.5, -1.0]])


def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.sum(np.prod(x, axis=1) * PW[:, 0])


def prod_cols_keep(x):
    return np.sum(np.prod(x, axis=0, keepdims=True) ** 2)


def cumprod_flat(x):
    return np.sum(np.cumprod(x) * PW.ravel())


def cumprod_cols(x):
    return np.sum(np.cumprod(x, axis=1) * PW)


def cumprod_rows(x):
    return np.sum(np.cumprod(x, axis=0) ** 2 * PW)


_PROD_CASES = [
    (prod_all, lambda x: jnp.prod(x)),
    (prod_rows, lambda x: jnp.sum(jnp.prod(x, axis=1) * PW[:, 0])),
    (prod_cols_keep, lambda x: jnp.sum(jnp.prod(x, axis=0, keepdims=True) ** 2)),
    (cumprod_flat, lambda x: jnp.sum(jnp.cumprod(x) * PW.ravel())),
    (cumprod_cols, lambda x: jnp.sum(jnp.cumprod(x, axis=1) * PW)),
    (cumprod_rows, lambda x: jnp.sum(jnp.cumprod(x, axis=0) ** 2 * PW)),
]
_ZERO_POINTS = {
    "none": [[2.0, -0.5, 3.0], [1.5, 0.7, -1.2]],
    "one": [[2.0, 0.0, 3.0], [1.5, 0.7, -1.2]],
    "two_in_a_row": [[2.0, 0.0, 0.0], [1.5, 0.7, -1.2]],
    "two_apart": [[0.0, 0.7, 3.0], [1.5, 0.0, -1.2]],
    "three": [[0.0, 0.0, 3.0], [0.0, 0.7, -1.2]],
    "many": [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]],
}


@pytest.mark.parametrize("point", list(_ZERO_POINTS), ids=list(_ZERO_POINTS))
@pytest.mark.parametrize("f,jf", _PROD_CASES, ids=[c[0].__name__ for c in _PROD_CASES])
def test_prod_and_cumprod_second_derivatives_at_zeros(f, jf, point):
    x = np.array(_ZERO_POINTS[point])
    want_g = np.asarray(jax.grad(jf)(x))
    want_h = np.asarray(jax.hessian(jf)(x))
    # the function is a polynomial: central differences of the gradient are exact up to rounding
    np.testing.assert_allclose(_fd_grad(f, x), want_g, rtol=1e-7, atol=1e-8)
    gf = tp.grad(f)
    fd_h = np.stack([_fd_grad(lambda a, i=i: gf(a)[i], x) for i in np.ndindex(x.shape)])
    np.testing.assert_allclose(fd_h.reshape(want_h.shape), want_h, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gf(x), want_g, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tp.hessian(f)(x), want_h, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tp.jacrev(tp.grad(f))(x), want_h, rtol=1e-12, atol=1e-14)
    if point == "two_apart":        # (a Numba compile per function: one point)
        np.testing.assert_allclose(_quiet(tp.jit(tp.hessian(f)), x), want_h, rtol=1e-12,
                                   atol=1e-14)
    xs = np.stack([x, x[::-1]])
    np.testing.assert_allclose(_quiet(tp.vmap(tp.hessian(f)), xs),
                               np.asarray(jax.vmap(jax.hessian(jf))(xs)), rtol=1e-12, atol=1e-14)


def test_prod_gradient_keeps_float32():
    x = np.array([2.0, 0.0, 3.0], np.float32)
    for f in (lambda x: np.prod(x), lambda x: np.sum(np.cumprod(x))):
        assert tp.grad(f)(x).dtype == np.float32


# ---- np.vander under grad (it was refused: its NumPy source calls np.promote_types) ------------

VW = np.arange(12.0).reshape(4, 3) - 5.0


@pytest.mark.parametrize("n,increasing", [(None, False), (3, True), (3, False), (1, False),
                                          (5, True)])
def test_vander_derivatives(n, increasing):
    def f(x):
        return np.sum(np.vander(x, n, increasing) ** 2)

    def jf(x):
        return jnp.sum(jnp.vander(x, n, increasing) ** 2)
    x = np.array([0.5, -1.2, 2.0, 0.3])
    np.testing.assert_allclose(tp.grad(f)(x), np.asarray(jax.grad(jf)(x)), rtol=1e-12)
    np.testing.assert_allclose(_fd_grad(f, x), np.asarray(jax.grad(jf)(x)), rtol=1e-7)
    np.testing.assert_allclose(tp.hessian(f)(x), np.asarray(jax.hessian(jf)(x)), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(tp.jacfwd(lambda x: np.vander(x, n, increasing))(x),
                               np.asarray(jax.jacfwd(lambda x: jnp.vander(x, n, increasing))(x)),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tp.jacrev(tp.hessian(f))(x),
                               np.asarray(jax.jacrev(jax.hessian(jf))(x)), rtol=1e-12, atol=1e-12)
    # at x = 0 (JAX gives nan there: 0 ** -1 in its rule): central differences
    x0 = np.array([0.0, -1.2, 2.0])
    np.testing.assert_allclose(tp.grad(f)(x0), _fd_grad(f, x0), rtol=1e-7, atol=1e-8)
    xs = np.stack([x, x + 0.5])
    np.testing.assert_allclose(_quiet(tp.vmap(tp.grad(f)), xs),
                               np.asarray(jax.vmap(jax.grad(jf))(xs)), rtol=1e-12)
    np.testing.assert_allclose(_quiet(tp.jit(tp.grad(f)), x), np.asarray(jax.grad(jf)(x)),
                               rtol=1e-12)


# ---- np.fmax / np.fmin at ties and NaNs: JAX's choice (the tie goes to y) ----------------------

@pytest.mark.parametrize("f,jf", [(np.fmax, jnp.fmax), (np.fmin, jnp.fmin)], ids=["fmax", "fmin"])
def test_fmax_fmin_ties_and_nans_as_jax(f, jf):
    x = np.array([1.0, 2.0, 1.0, np.nan, 1.0, np.nan, 0.0])
    y = np.array([1.0, 1.0, 2.0, 1.0, np.nan, np.nan, -0.0])
    w = np.arange(1.0, 8.0)

    def loss(x, y):
        return np.sum(f(x, y) * w)
    want = np.array(jax.grad(lambda x, y: jnp.sum(jf(x, y) * w), (0, 1))(x, y))
    for got in (tp.grad(loss, (0, 1))(x, y), _quiet(tp.jit(tp.grad(loss, (0, 1))), x, y)):
        np.testing.assert_array_equal(np.array(got), want)
    # away from ties and NaNs: central differences
    xf = np.array([1.0, 2.0, -0.5, 0.3, 4.0, -2.0, 0.0])
    yf = np.array([1.5, 1.0, 0.25, -0.3, 4.5, -1.0, 0.1])
    g = tp.grad(loss, (0, 1))(xf, yf)
    np.testing.assert_allclose(g[0], _fd_grad(lambda t: loss(t, yf), xf), atol=1e-8)
    np.testing.assert_allclose(g[1], _fd_grad(lambda t: loss(xf, t), yf), atol=1e-8)
    assert tp.grad(lambda a: np.sum(f(a, y[:3])))(x[:3].astype(np.float32)).dtype == np.float32


# ---- reductions with where= and initial= (they were refused: unexpected keyword) ---------------

RX = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
RM = np.array([[True, False, True], [False, True, True]])


def sum_initial(x):
    return np.sum(np.sum(x, axis=0, initial=2.0) ** 2)


def max_initial(x):
    return np.sum(np.max(x, axis=0, initial=0.75))


def sum_where(x):
    return np.sum(x ** 2, where=RM)


def sum_where_kept(x):
    return np.sum(np.sum(x ** 2, axis=1, where=RM, keepdims=True) * x)


def prod_where_initial(x):
    return np.prod(x, where=RM, initial=2.0)


def min_where_initial(x):
    return np.sum(np.min(x, axis=1, where=RM, initial=5.0) ** 2)


_WHERE_CASES = [
    (sum_initial, lambda x: jnp.sum(jnp.sum(x, axis=0, initial=2.0) ** 2)),
    (max_initial, lambda x: jnp.sum(jnp.max(x, axis=0, initial=0.75))),
    (sum_where, lambda x: jnp.sum(x ** 2, where=RM)),
    (sum_where_kept, lambda x: jnp.sum(jnp.sum(x ** 2, axis=1, where=RM, keepdims=True) * x)),
    (prod_where_initial, lambda x: jnp.prod(x, where=RM, initial=2.0)),
    (min_where_initial, lambda x: jnp.sum(jnp.min(x, axis=1, where=RM, initial=5.0) ** 2)),
]


@pytest.mark.parametrize("f,jf", _WHERE_CASES, ids=[c[0].__name__ for c in _WHERE_CASES])
def test_reductions_with_where_and_initial(f, jf):
    np.testing.assert_allclose(f(RX), float(jf(RX)), rtol=1e-14)
    want = np.asarray(jax.grad(jf)(RX))
    np.testing.assert_allclose(_fd_grad(f, RX), want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tp.grad(f)(RX), want, rtol=1e-13)
    np.testing.assert_allclose(_quiet(tp.jit(tp.grad(f)), RX), want, rtol=1e-13)
    np.testing.assert_allclose(tp.hessian(f)(RX), np.asarray(jax.hessian(jf)(RX)), rtol=1e-13,
                               atol=1e-14)
    xs = np.stack([RX, RX * 1.5])
    np.testing.assert_allclose(_quiet(tp.vmap(tp.grad(f)), xs),
                               np.asarray(jax.vmap(jax.grad(jf))(xs)), rtol=1e-13)
    assert tp.grad(f)(RX.astype(np.float32)).dtype == np.float32


def test_max_with_where_needs_initial():
    def f(x):
        return np.max(x, where=RM)
    with pytest.raises(Exception, match="initial"):
        tp.grad(f)(RX)


# ---- NumPy 2's np.linalg.outer / np.linalg.trace (their source passes out= / dtype=) -----------

def linalg_outer(x):
    return np.sum(np.linalg.outer(x[0], RX[1]) ** 2)


def linalg_trace(x):
    return np.sum(np.linalg.trace(np.stack([x[:, :2], x[:, 1:]])) ** 2)


def outer_into(x):
    buf = np.zeros((3, 3))
    np.outer(x[0], x[1], out=buf)
    return np.sum(buf ** 2)


@pytest.mark.parametrize("f,jf", [
    (linalg_outer, lambda x: jnp.sum(jnp.linalg.outer(x[0], RX[1]) ** 2)),
    (linalg_trace, lambda x: jnp.sum(jnp.linalg.trace(jnp.stack([x[:, :2], x[:, 1:]])) ** 2)),
    (outer_into, lambda x: jnp.sum(jnp.outer(x[0], x[1]) ** 2)),
], ids=["linalg_outer", "linalg_trace", "outer_out"])
def test_numpy2_linalg_aliases(f, jf):
    if not hasattr(np.linalg, "outer"):
        pytest.skip("NumPy 1 has no np.linalg.outer / trace")
    want = np.asarray(jax.grad(jf)(RX))
    np.testing.assert_allclose(_fd_grad(f, RX), want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tp.grad(f)(RX), want, rtol=1e-13)
    np.testing.assert_allclose(_quiet(tp.jit(tp.grad(f)), RX), want, rtol=1e-13)
    np.testing.assert_allclose(tp.hessian(f)(RX), np.asarray(jax.hessian(jf)(RX)), rtol=1e-13,
                               atol=1e-14)


# ---- np.linalg.qr of a wide matrix (m < n) in forward mode --------------------------------------

def qr_wide(a):
    q, r = np.linalg.qr(a)
    return r * 2.0 + np.sum(q * q[::-1])


def test_qr_of_a_wide_matrix_forward_mode():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3))
    t = rng.standard_normal((2, 3))

    def jf(a):
        q, r = jnp.linalg.qr(a)
        return r * 2.0 + jnp.sum(q * q[::-1])
    _, tan = tp.jvp(qr_wide, (a,), (t,))
    eps = 1e-6
    np.testing.assert_allclose(tan, (qr_wide(a + eps * t) - qr_wide(a - eps * t)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tan, np.asarray(jax.jvp(jf, (a,), (t,))[1]), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(tp.jacfwd(qr_wide)(a), np.asarray(jax.jacfwd(jf)(a)), rtol=1e-10,
                               atol=1e-12)
    a3 = rng.standard_normal((3, 2, 3))
    np.testing.assert_allclose(_quiet(tp.vmap(tp.jacfwd(qr_wide)), a3),
                               np.asarray(jax.vmap(jax.jacfwd(jf))(a3)), rtol=1e-10, atol=1e-12)
