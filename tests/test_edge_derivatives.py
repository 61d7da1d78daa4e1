"""Derivatives at the edges of a function's domain that used to be wrong or to crash, each
checked against central differences (float64) and JAX:

    grad(lambda x: np.sum(np.diff(x, n=2, axis=0)))(np.ones((1, 3)))   had shape (2, 3), not (1, 3)
"""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile.errors import TranspileWarning

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _fd_grad(f, x, eps=1e-6):
    """Central differences of a scalar f at x (float64)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


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
