"""Reverse mode of a value a loop rebinds before reading it (`y = W @ x[i]` each iteration,
only the last one read after the loop), or reads only in a branch that is not taken: in the
backward loop its adjoint is still the 0.0 it was reset to, and rules that move axes
(reshape, matmul, solve, stack, einsum, swapaxes) read it as an array of the value's shape.
They crashed (eager grad, jit(grad)); hessian crashed the same way on a tangent pushed as
0.0. Checked against central differences and autograd running the same code objects."""
import types
import warnings

import numpy as np
import pytest

from fd import numerical_grad
import transpile as tp

anp = pytest.importorskip("autograd.numpy")
autograd = pytest.importorskip("autograd")


def matmul_last(W, x):
    y = np.zeros(3)
    for i in range(3):
        y = W @ x[i]
    return np.sum(y * y)


def reshape_last(W, x):
    y = np.zeros((3, 1))
    for i in range(3):
        y = np.reshape(W @ x[i], (3, 1))
    return np.sum(y * y)


def swapaxes_last(W, x):
    y = np.zeros((3, 3))
    for i in range(3):
        y = np.swapaxes(W * x[i], 0, 1)
    return np.sum(y * y * W)


def transpose_axes_last(W, x):
    y = np.zeros((3, 3))
    for i in range(3):
        y = np.transpose(W * x[i], (1, 0))
    return np.sum(y * W)


def moveaxis_last(W, x):
    y = np.zeros((3, 3))
    for i in range(3):
        y = np.moveaxis(W * x[i], 0, 1)
    return np.sum(y * y * W)


def stack_last(W, x):
    y = np.zeros((2, 3))
    for i in range(3):
        y = np.stack([x[i], W[0] * x[i]])
    return np.sum(y * y)


def concatenate_last(W, x):
    y = np.zeros(6)
    for i in range(3):
        y = np.concatenate([x[i], W[1] * x[i]])
    return np.sum(y * y)


def dot_last(W, x):
    y = np.zeros(3)
    for i in range(3):
        y = np.dot(W, x[i])
    return np.sum(np.sin(y))


def einsum_last(W, x):
    y = np.zeros(3)
    for i in range(3):
        y = np.einsum("ij,j->i", W, x[i])
    return np.sum(y * y)


def solve_last(W, x):
    y = np.zeros(3)
    for i in range(3):
        y = np.linalg.solve(W + 3.0 * np.eye(3), x[i])
    return np.sum(y * y)


def ravel_last(W, x):
    y = np.zeros(9)
    for i in range(3):
        y = (W * x[i]).ravel()
    return np.sum(y * y)


def squeeze_last(W, x):
    y = np.zeros(3)
    for i in range(3):
        y = np.squeeze(W[:, :1] * x[i][0])
    return np.sum(y * y)


def matmul_in_untaken_branch(W, x):
    acc = 0.0
    for i in range(x.shape[0]):
        z = W @ x[i]
        if x[i, 0] > 0:
            acc = acc + np.sum(z * z)
    return acc


def reshape_of_a_growing_value(W, x):
    w = x[0, :1]
    for i in range(3):
        if w.shape[0] < 2:
            w = np.reshape(x[0, :w.shape[0] + 1], (-1,))
    return np.sum(w * W[0, :2])


KERNELS = [matmul_last, reshape_last, swapaxes_last, transpose_axes_last, moveaxis_last,
           stack_last, concatenate_last, dot_last, einsum_last, solve_last, ravel_last,
           squeeze_last, matmul_in_untaken_branch]


def _twin(f):
    """The same code with np bound to autograd.numpy."""
    return types.FunctionType(f.__code__, {"np": anp}, f.__name__)


@pytest.mark.parametrize("f", KERNELS, ids=lambda f: f.__name__)
def test_grad_of_a_value_the_loop_rebinds(f):
    rng = np.random.default_rng(3)
    W, x = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    x[1, 0] = -abs(x[1, 0])          # one branch not taken (matmul_in_untaken_branch)
    want = [numerical_grad(f, [W, x], k) for k in (0, 1)]
    oracle = autograd.grad(_twin(f), (0, 1))(W, x)
    for k in (0, 1):
        np.testing.assert_allclose(oracle[k], want[k], rtol=1e-6, atol=1e-7)
    got = tp.grad(f, argnums=(0, 1))(W, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # compiled, no NumPy fallback
        jitted = tp.jit(tp.grad(f, argnums=(0, 1)))
        compiled = jitted(W, x)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], oracle[k], rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(compiled[k], oracle[k], rtol=1e-7, atol=1e-9)


def test_grad_of_a_value_whose_shape_changes_in_the_loop():
    """The zeros that stand for a reset adjoint take the shape of the value in that iteration
    (a zero of a fixed shape would broadcast wrongly). Eager grad only: jit refuses this
    kernel with a clear warning (a value whose length changes in a loop, under reshape:
    docs/user_guide.md)."""
    rng = np.random.default_rng(3)
    W, x = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    f = reshape_of_a_growing_value
    oracle = autograd.grad(_twin(f), (0, 1))(W, x)
    got = tp.grad(f, argnums=(0, 1))(W, x)
    for k in (0, 1):
        np.testing.assert_allclose(oracle[k], numerical_grad(f, [W, x], k), rtol=1e-6,
                                   atol=1e-7)
        np.testing.assert_allclose(got[k], oracle[k], rtol=1e-7, atol=1e-9)


def hessian_matmul_in_loop(p):
    P = np.eye(2)
    for t in range(2):
        P = P * p[0]
        S = np.ones(2) @ P
    return S[0] * p[1]


def hessian_unrolled_step(X, lr):
    w = np.ones(2)
    for k in range(2):
        w = w - lr * (X.T @ (X @ w))
    return np.sum(w * w)


def test_hessian_of_matmul_in_a_loop():
    p = np.array([0.9, 0.3])
    want = autograd.hessian(_twin(hessian_matmul_in_loop))(p)
    np.testing.assert_allclose(tp.hessian(hessian_matmul_in_loop)(p), want, rtol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tp.jit(tp.hessian(hessian_matmul_in_loop))(p), want,
                                   rtol=1e-7)


@pytest.mark.parametrize("lr", [0.1, np.float64(0.1), np.array(0.1)], ids=type)
def test_jit_hessian_in_a_python_float(lr):
    """jit(hessian(f, argnums=1)) at a Python float: its basis read lr.dtype (crashed)."""
    X = np.array([[1.0, 0.5], [-0.3, 2.0]])
    want = autograd.hessian(_twin(hessian_unrolled_step), 1)(X, 0.1)
    np.testing.assert_allclose(tp.hessian(hessian_unrolled_step, argnums=1)(X, lr), want,
                               rtol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tp.jit(tp.hessian(hessian_unrolled_step, argnums=1))(X, lr)
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_jit_hessian_keeps_float32():
    got = tp.jit(tp.hessian(cube32))(np.float32(0.5))
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, 18.0 * 0.5, rtol=1e-6)      # d2/ds2 of 3 s^3


def cube32(s):
    return s * s * s * np.float32(3.0)


def writes_through_a_flat_view(x):
    a = np.zeros(6)
    b = a.reshape(-1)
    for i in range(3):
        b[i] = x[i] * 2.0
    return np.sum(a * a)


def test_grad_of_writes_through_a_reshaped_view_in_a_loop():
    """The base rebuilt from the view after each write (a = b.reshape(a.shape)) is rebound
    before it is read: eager grad raised NumPy's reshape error on the reset adjoint."""
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    want = numerical_grad(writes_through_a_flat_view, [x])
    np.testing.assert_allclose(want, [24.0, 8.0, 16.0, 0.0, 0.0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.grad(writes_through_a_flat_view)(x), want, rtol=1e-7,
                               atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(tp.jit(tp.grad(writes_through_a_flat_view))(x), want,
                                   rtol=1e-7, atol=1e-9)
