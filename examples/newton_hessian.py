"""Newton's method with the Hessian: logistic regression fitted in a handful of steps.

    python examples/newton_hessian.py [--fast]

Each step solves H(w) dw = -g(w) with np.linalg.solve, where g = grad(loss) and
H = hessian(loss) come from generated source. Newton converges quadratically: the gradient
norm must fall below 1e-10 within 12 steps, and the Hessian is checked against finite
differences of the gradient.
"""
import argparse
import os

import numpy as np

from transpile import grad, hessian, random, show


def loss(w, X, y):
    z = X @ w
    # mean logistic loss log(1 + exp(-y z)) with labels y in {-1, +1}, plus a small ridge term
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.5e-2 * np.sum(w * w)


def make_data(n, d, key):
    k1, k2, k3 = random.split(key, 3)
    X = random.normal(k1, (n, d))
    w_true = random.normal(k2, (d,))
    p = 1 / (1 + np.exp(-X @ w_true))
    y = np.where(random.uniform(k3, (n,)) < p, 1.0, -1.0)
    return X, y


def finite_difference_hessian(g, w, eps=1e-6):
    cols = []
    for i in range(len(w)):
        e = np.zeros_like(w)
        e[i] = eps
        cols.append((g(w + e) - g(w - e)) / (2 * eps))
    return np.stack(cols, axis=1)


def main(fast=False):
    n, d = (500, 5) if fast else (20_000, 20)
    X, y = make_data(n, d, random.key(42))
    g_fn, h_fn = grad(loss), hessian(loss)
    w = np.zeros(d)

    H0 = h_fn(w, X, y)
    fd = finite_difference_hessian(lambda v: g_fn(v, X, y), w)
    np.testing.assert_allclose(H0, fd, atol=1e-7)
    np.testing.assert_allclose(H0, H0.T, atol=1e-12)
    print(f"hessian {H0.shape} matches finite differences of grad, and is symmetric")

    for step in range(12):
        g = g_fn(w, X, y)
        gnorm = np.linalg.norm(g)
        print(f"step {step:2d}: loss {loss(w, X, y):.10f}  |grad| {gnorm:.3e}")
        if gnorm < 1e-10:
            break
        w = w - np.linalg.solve(h_fn(w, X, y), g)
    assert np.linalg.norm(g_fn(w, X, y)) < 1e-10, "Newton did not converge in 12 steps"
    print(f"converged in {step} Newton steps; w[:3] = {w[:3]}")
    print("\nthe generated gradient that the Hessian differentiates again (forward over reverse):")
    print(show(g_fn, w, X, y))
    print("newton_hessian: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes for CI")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1")
