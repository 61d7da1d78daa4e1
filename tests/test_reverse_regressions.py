"""Reverse mode regressions: tape pushes of values an inner loop may never bind, adjoints that
are a scalar 0.0 on one path and an array on another, derivatives of hessians."""
import numpy as np
import pytest

from fd import numerical_grad
import transpile as tp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)


# -- an inner loop that runs zero times (range(i) at i = 0) ---------------------------------------

def inner_if(x):
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            if x[j] > 0:
                acc = acc + x[i] * x[j]
    return acc


def inner_if_jax(x):
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            acc = acc + jnp.where(x[j] > 0, x[i] * x[j], 0.0)
    return acc


def inner_continue(x):
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            if x[i] * x[j] > 0:
                acc = acc + x[i] * x[j]
            else:
                continue
    return acc


def inner_while_if(x):
    s = 0.0
    for i in range(x.shape[0]):
        k = 0
        while k < i:
            if x[k] > 0:
                s = s + np.sin(x[k]) * x[i]
            k = k + 1
    return s


def inner_branch_factor(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            if x[j] > 0:
                t = x[j] * x[i]
            else:
                t = np.cos(x[j])
            s = s + t * x[j]
        s = s * x[i]
    return s


def inner_escape_stale(x):
    # at i = 2 the inner loop runs zero times: t keeps the value of the previous i
    s = 0.0
    for i in range(3):
        for j in range(2 - i):
            t = np.sin(x[j] * (i + 1))
        s = s + t * x[i]
    return s


X = np.array([0.3, 1.2, -0.7, 0.9])


def fd_hessian(f, x):
    return np.array([numerical_grad(lambda z: tp.grad(f)(z)[k], [x]) for k in range(x.size)])


@pytest.mark.parametrize("f", [inner_if, inner_continue, inner_while_if, inner_branch_factor,
                               inner_escape_stale])
def test_grad_inner_loop_zero_trips(f):
    np.testing.assert_allclose(tp.grad(f)(X), numerical_grad(f, [X]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [inner_if, inner_continue, inner_while_if, inner_branch_factor,
                               inner_escape_stale])
def test_hessian_inner_loop_zero_trips(f):
    np.testing.assert_allclose(tp.hessian(f)(X), fd_hessian(f, X), rtol=1e-5, atol=1e-6)


def test_inner_loop_zero_trips_against_jax():
    x = np.array([0.3, 1.2, -0.7])
    h = jax.hessian(inner_if_jax)(x)
    np.testing.assert_allclose(tp.grad(inner_if)(x), jax.grad(inner_if_jax)(x))
    np.testing.assert_allclose(tp.hessian(inner_if)(x), h, atol=1e-12)
    np.testing.assert_allclose(tp.jacrev(tp.grad(inner_if))(x), h, atol=1e-12)
    _, t = tp.jvp(tp.grad(inner_if), (x,), (np.ones(3),))
    np.testing.assert_allclose(t, h @ np.ones(3), atol=1e-12)
    xs = np.stack([x, -x, 2 * x])
    g = tp.grad(lambda z: np.sum(tp.vmap(inner_if)(z)))(xs)
    np.testing.assert_allclose(g, jax.vmap(jax.grad(inner_if_jax))(xs), atol=1e-12)


# -- an early return before a loop that writes into an array: grad of grad -------------------------
# (the carried array's adjoint was the scalar 0.0 on entry to the loop; the rule of the write,
# `g[i] = 0`, indexed it)

def early_then_write(x):
    out = x.copy()
    if x[0] > 10.0:
        return np.sum(out)
    for i in range(x.shape[0]):
        out[i] = out[i] * out[i - 1]
    return np.sum(out)


def early_then_write_jax(x):
    out = x
    for i in range(x.shape[0]):
        out = out.at[i].set(out[i] * out[i - 1])
    return jnp.sum(out)


def early_then_while_write(x):
    out = x.copy()
    if x[0] > 10.0:
        return np.sum(out ** 2)
    k = 1
    while k < x.shape[0]:
        out[k] = out[k] * np.sin(out[k - 1])
        k = k + 1
    return np.sum(out)


@pytest.mark.parametrize("x", [np.array([0.3, 1.2, -0.7]), np.array([11.0, 1.2, -0.7])])
@pytest.mark.parametrize("f", [early_then_write, early_then_while_write])
def test_grad_of_grad_early_return_before_write(f, x):
    h = fd_hessian(f, x)
    np.testing.assert_allclose(tp.jacrev(tp.grad(f))(x), h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tp.grad(lambda z: tp.grad(f)(z)[1])(x), h[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tp.hessian(f)(x), h, rtol=1e-5, atol=1e-6)


def test_grad_of_grad_early_return_before_write_against_jax():
    x = np.array([0.3, 1.2, -0.7])
    h = jax.hessian(early_then_write_jax)(x)
    np.testing.assert_allclose(tp.jacrev(tp.grad(early_then_write))(x), h, atol=1e-12)
    np.testing.assert_allclose(tp.grad(lambda z: tp.grad(early_then_write)(z)[0])(x), h[0],
                               atol=1e-12)


# -- hessian of a function with an array output (JAX: jacfwd(jacrev(f))), hessian of a hessian ---

def quartic(v):
    return np.sum(v ** 4) * v[0]


def quartic_jax(v):
    return jnp.sum(v ** 4) * v[0]


def vector_out(v):
    return np.sin(v) * v[0] ** 2


def vector_out_jax(v):
    return jnp.sin(v) * v[0] ** 2


V = np.array([1.0, -2.0, 0.5])


def test_hessian_of_hessian_against_jax():
    ref = jax.hessian(jax.hessian(quartic_jax))(V)
    np.testing.assert_allclose(tp.hessian(tp.hessian(quartic))(V), ref, atol=1e-10)
    np.testing.assert_allclose(tp.hessian(tp.hessian(lambda v: np.sum(v ** 4)))(V),
                               jax.hessian(jax.hessian(lambda v: jnp.sum(v ** 4)))(V), atol=1e-10)


def test_hessian_of_hessian_under_jit_and_grad():
    import warnings
    ref = jax.hessian(jax.hessian(quartic_jax))(V)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # jit may run the NumPy version
        np.testing.assert_allclose(tp.jit(tp.hessian(tp.hessian(quartic)))(V), ref, atol=1e-10)
    g = tp.grad(lambda z: np.sum(tp.hessian(tp.hessian(quartic))(z)))(V)
    np.testing.assert_allclose(g, jax.grad(lambda z: jnp.sum(jax.hessian(jax.hessian(
        quartic_jax))(z)))(V), atol=1e-10)


def fd_jacobian(F, x, eps=1e-6):
    """Central differences of an array-valued F: result[..., j] = dF/dx_j."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = eps
        cols.append((np.asarray(F(x + e)) - np.asarray(F(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def test_hessian_of_vector_function():
    ref = jax.hessian(vector_out_jax)(V)
    np.testing.assert_allclose(tp.hessian(vector_out)(V), ref, atol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.hessian(vector_out))(V), ref, atol=1e-12)
    fd = fd_jacobian(tp.jacrev(vector_out), V)
    np.testing.assert_allclose(tp.hessian(vector_out)(V), fd, rtol=1e-6, atol=1e-6)


def test_hessian_of_hessian_fd():
    third = fd_jacobian(tp.hessian(quartic), V)
    fourth = fd_jacobian(tp.jacfwd(tp.hessian(quartic)), V)
    np.testing.assert_allclose(tp.jacfwd(tp.hessian(quartic))(V), third, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(tp.hessian(tp.hessian(quartic))(V), fourth, rtol=1e-6, atol=1e-5)


# -- a return inside a loop (correctness under grad, jit(grad), hessian) ---------------------------

def return_in_for(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc + x[i] ** 2
        if acc > 1.0:
            return acc * 2.0
    return acc


def return_in_while(x):
    acc = 0.0
    k = 0
    while k < x.shape[0]:
        acc = acc + np.sin(x[k]) * x[0]
        if acc > 0.5:
            return acc * x[k]
        k = k + 1
    return acc


@pytest.mark.parametrize("x", [np.array([0.3, 1.2, -0.7]), np.array([0.3, 0.2, -0.7]),
                               np.array([1.3, 0.2, -0.7])])
@pytest.mark.parametrize("f", [return_in_for, return_in_while])
def test_return_inside_loop(f, x):
    import warnings
    fd = numerical_grad(f, [x])
    np.testing.assert_allclose(tp.grad(f)(x), fd, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # jit may run the NumPy version
        np.testing.assert_allclose(tp.jit(tp.grad(f))(x), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.hessian(f)(x), fd_hessian(f, x), rtol=1e-5, atol=1e-6)
