"""A transform of a function defined inside the transformed code (transpile/frontend/normalize/lift.py):
`grad(lambda p: loss(p, x))(params)` in a jitted step, a nested def closing over the outer
arguments, vmap of a closure with in_axes written as a literal, grad of grad of a lambda; and
`(n,) + x.shape`. Oracles: central finite differences in float64 and JAX (x64)."""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileWarning
from fd import numerical_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

W = np.array([0.5, -1.0])
XS = np.array([[1.0, 2.0], [0.3, -0.4], [2.0, 0.1]])


def loss(p, x):
    return np.sum(np.tanh(x @ p) ** 2)


def jloss(p, x):
    return jnp.sum(jnp.tanh(x @ p) ** 2)


def step(params, x):
    g = tp.grad(lambda p: loss(p, x))(params)
    return params - 0.1 * g


def test_jitted_step_with_grad_of_a_lambda_closing_over_data():
    want = W - 0.1 * jax.grad(lambda p: jloss(p, XS))(W)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)      # compiled, no fallback
        np.testing.assert_allclose(tp.jit(step)(W, XS), want, rtol=1e-12)
    np.testing.assert_allclose(step(W, XS), want, rtol=1e-12)


def inner_def_closure(z):
    def inner(w):
        return np.sum(w ** 3) * z[1]          # reads the outer argument z
    return tp.grad(inner)(z)[0]


def test_grad_through_a_nested_def_that_closes_over_the_argument():
    x = np.array([0.3, 1.2, -0.7])
    assert np.isclose(inner_def_closure(x), 3 * x[0] ** 2 * x[1])
    np.testing.assert_allclose(tp.grad(inner_def_closure)(x),
                               numerical_grad(inner_def_closure, [x.copy()]), rtol=1e-6,
                               atol=1e-8)


def per_example_sum(w, xs):
    return np.sum(tp.vmap(lambda r: loss(w, r))(xs))


def vmap_literal_axes(w, xs):
    return np.sum(tp.vmap(lambda a, b: loss(a, b) * np.sum(w), in_axes=(None, 0))(w, xs))


def vmap_named_literal_axes(w, xs):
    return np.sum(tp.vmap(loss, in_axes=(None, 0))(w, xs))


@pytest.mark.parametrize("fn", [per_example_sum, vmap_literal_axes, vmap_named_literal_axes])
@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # jit(grad(sum(vmap))) compiles
def test_grad_of_a_vmap_of_a_closure_or_with_literal_in_axes(fn):
    want = numerical_grad(lambda w: fn(w, XS), [W.copy()])
    np.testing.assert_allclose(tp.grad(fn)(W, XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jit(tp.grad(fn))(W, XS), want, rtol=1e-6, atol=1e-8)


def third(z):
    return tp.grad(tp.grad(lambda s: s ** 3 * z))(2.0)


def test_grad_of_grad_of_a_lambda_and_its_derivative():
    assert np.isclose(third(1.5), 12 * 1.5)
    assert np.isclose(tp.grad(third)(1.5), 12.0)


def concat_shape(w, xs):
    return np.sum(np.broadcast_to(w, (xs.shape[0],) + w.shape) * xs)


def test_shape_tuple_concatenation_in_every_transform():
    want = numerical_grad(lambda w: concat_shape(w, XS), [W.copy()])
    np.testing.assert_allclose(tp.grad(concat_shape)(W, XS), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.jit(tp.grad(concat_shape))(W, XS), want, rtol=1e-6,
                               atol=1e-8)
    batched = tp.vmap(tp.grad(concat_shape), in_axes=(0, None))(np.stack([W, 2 * W]), XS)
    np.testing.assert_allclose(batched, np.stack([want, want]), rtol=1e-6, atol=1e-8)


def reads_another_nested(z):
    def helper(v):
        return v * 2.0
    return tp.grad(lambda w: np.sum(helper(w)))(z)


def test_a_nested_function_reading_another_nested_function_is_refused_by_name():
    with pytest.raises(tp.TranspileError, match="'helper', another nested function"):
        tp.grad(lambda z: np.sum(reads_another_nested(z)))(np.ones(2))


def jvp_of_a_closure(z):
    return tp.jvp(lambda w: np.sin(w) * z, (z,), (np.ones(3),))[1]


def jvp_of_a_global(z):
    return tp.jvp(np.sin, (z,), (z * 2.0,))[1]


@pytest.mark.parametrize("fn", [jvp_of_a_closure, jvp_of_a_global])
def test_jvp_inside_transformed_code(fn):
    x = np.array([0.3, 1.2, -0.7])
    want = numerical_grad(lambda z: np.sum(fn(z)), [x.copy()])
    np.testing.assert_allclose(tp.grad(lambda z: np.sum(fn(z)))(x), want, rtol=1e-6, atol=1e-8)
    xs = np.stack([x, -x])
    np.testing.assert_allclose(tp.vmap(fn)(xs), np.stack([fn(r) for r in xs]), rtol=1e-12)


def calls_vjp(z):
    return tp.vjp(np.sin, z)[0]


def test_vjp_inside_transformed_code_is_refused_with_the_users_line():
    with pytest.raises(tp.TranspileError, match=r"test_nested_transforms.py:\d+: vjp\(\.\.\.\) "
                                                r"inside a transformed function"):
        tp.grad(lambda z: np.sum(calls_vjp(z)))(np.ones(2))


def scaled_dot(a, b, scale=2.0):
    return scale * np.sum(a * b)


def test_a_jit_function_called_with_keywords_inside_another_transform():
    # (refused: "keyword arguments to a transformed function ... are not supported")
    x = np.array([0.1, 0.2, 0.3])
    jit, grad, vmap = tp.jit, tp.grad, tp.vmap
    jf = jit(scaled_dot)
    np.testing.assert_allclose(grad(lambda a: jf(a, b=x))(x), 2.0 * x)
    np.testing.assert_allclose(grad(lambda a: jf(a, scale=3.0, b=x))(x), 3.0 * x)
    np.testing.assert_allclose(jit(grad(lambda a: jf(b=a, a=x)))(x), 2.0 * x)
    np.testing.assert_allclose(vmap(lambda a: jf(a, b=x))(np.stack([x, 2 * x])),
                               [2.0 * np.sum(x * x), 4.0 * np.sum(x * x)])
