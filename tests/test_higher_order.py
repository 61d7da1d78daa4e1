"""Derivatives of derivatives, including through the tape of a loop; jacobians; linearize."""
import numpy as np

from fd_helpers import numgrad
import transpile as tp
from transpile import (check_grads, grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize)


def cubic(x):
    return x ** 3 + 2 * x


def test_cubic_first_second_third_derivatives():
    assert np.isclose(grad(cubic)(2.0), 14.0)
    assert np.isclose(grad(grad(cubic))(2.0), 12.0)
    assert np.isclose(grad(grad(grad(cubic)))(2.0), 6.0)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def test_hessian_of_sum_logistic_is_its_analytic_diagonal():
    x = np.array([-1.0, 0.3, 2.0])
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(hessian(sum_logistic)(x), np.diag(s * (1 - s) * (1 - 2 * s)),
                               atol=1e-12)


def test_jacobian_of_exp_is_diagonal():
    x = np.array([0.1, -0.5, 1.5])
    for jac in (jacobian, jacrev):
        np.testing.assert_allclose(jac(np.exp)(x), np.diag(np.exp(x)), atol=1e-12)

    def exp(v):
        return np.exp(v)
    np.testing.assert_allclose(jacfwd(exp)(x), np.diag(np.exp(x)), atol=1e-12)


def loop_poly(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + x[i] ** 3
        else:
            s = s - np.sin(x[i]) * x[i]
    return s


def test_hessian_through_loop_with_if():
    x = np.array([1.0, -2.0, 3.0])
    h = hessian(loop_poly)(x, 3)
    want = np.diag([6.0, -(-np.sin(-2.0) * -2.0 + 2 * np.cos(-2.0)), 18.0])
    np.testing.assert_allclose(h, want, atol=1e-9)


def halve(a):
    while np.abs(a) > 0.1:
        a = a / 2 + 0.01 * a * a
    return a


def test_grad_of_grad_through_while_loop():
    g1 = grad(halve)
    e = 1e-4
    fd2 = (halve(3.0 + e) - 2 * halve(3.0) + halve(3.0 - e)) / e ** 2
    assert np.isclose(grad(g1)(3.0), fd2, rtol=1e-4)
    assert np.isclose(grad(grad(g1))(3.0),
                      (g1(3.0 + 2 * e) - 2 * g1(3.0) + g1(3.0 - 2 * e)) / (2 * e) ** 2,
                      rtol=1e-3)


def rnn(W, xs):
    h = np.zeros((xs.shape[0] + 1, W.shape[0]))
    for t in range(xs.shape[0]):
        h[t + 1] = np.tanh(W @ h[t] + xs[t])
    return np.sum(h[-1] ** 2)


def test_jvp_of_grad_through_rnn_loop():
    rng = np.random.default_rng(1)
    W, xs = rng.standard_normal((2, 2)) * 0.5, rng.standard_normal((3, 2))
    V = rng.standard_normal((2, 2))
    gW = grad(rnn)
    _, hv = jvp(lambda w: gW(w, xs), (W,), (V,))
    e = 1e-5
    fd = (gW(W + e * V, xs) - gW(W - e * V, xs)) / (2 * e)
    np.testing.assert_allclose(hv, fd, atol=1e-6)
    # reverse over reverse through the same tape
    gg = grad(lambda w: np.sum(gW(w, xs) * V))(W)
    np.testing.assert_allclose(np.sum(gg * V), np.sum(fd * V), atol=1e-6)


def test_grad_of_grad_source_uses_adjoint_tape():
    gg = grad(lambda a: grad(halve)(a))
    src = gg.source_for(3.0)
    compile(src, "<generated>", "exec")
    assert "dtape" in src and ".push(" in src and ".pop()" in src


def test_linearize_matches_jvp():
    def f(x):
        return np.sin(x) * x
    x = np.array([0.2, 0.4])
    out, f_jvp = linearize(f, x)
    np.testing.assert_allclose(out, f(x))
    np.testing.assert_allclose(f_jvp(np.ones(2)), np.cos(x) * x + np.sin(x))


def test_check_grads_through_loop_order_2():
    assert check_grads(lambda x: loop_poly(x, 3), (np.array([1.0, -2.0, 3.0]),), order=2)
    assert check_grads(rnn, (np.ones((2, 2)) * 0.3, np.ones((2, 2)) * 0.1), order=2)


def test_numgrad_agrees_for_triangular_second_order():
    def f(A):
        s = 0.0
        for i in np.arange(A.shape[0]):
            for j in np.arange(i, A.shape[1]):
                s = s + A[i, j] ** 3
        return s
    A = np.arange(6.0).reshape(2, 3) / 5
    gf = grad(f)
    np.testing.assert_allclose(grad(lambda a: np.sum(gf(a)))(A),
                               numgrad(lambda a: np.sum(gf(a)), A), atol=1e-6)


def _third_order_target(x):
    return np.sum(np.sin(x) * x[0])


def test_vmap_of_third_and_fourth_order_jacobians_match_per_example():
    xs = np.array([[0.3, 1.2], [0.5, -0.4]])
    for t in (tp.jacrev(tp.hessian(_third_order_target)),
              tp.hessian(tp.hessian(_third_order_target))):
        got = tp.vmap(t)(xs)
        np.testing.assert_allclose(got, np.stack([t(x) for x in xs]), rtol=1e-12)
    # d^3/dx0^3 of sin(x0) x0 + sin(x1) x0 = -3 sin(x0) - x0 cos(x0)
    x0 = xs[:, 0]
    np.testing.assert_allclose(tp.vmap(tp.jacrev(tp.hessian(_third_order_target)))(xs)[:, 0, 0, 0],
                               -3 * np.sin(x0) - x0 * np.cos(x0), rtol=1e-12)
