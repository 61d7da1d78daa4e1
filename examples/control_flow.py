"""Gradients through Python control flow: a while loop, a for loop, a data-dependent branch.

    python examples/control_flow.py [--fast]

Ordinary Python loops and ifs are kept as loops and ifs in the generated code. Reverse mode
records what the forward sweep did (the branch taken, the trip count, overwritten values) on a
tape and replays it backwards. The printed source shows the tape pushes and pops. Every
gradient is checked against finite differences and, where there is one, the closed form.
"""
import argparse
import os

import numpy as np

from transpile import grad, jit, show


def root_until_small(x):
    """Take square roots until the value is at most 1.5: a loop whose trip count depends on x."""
    y = x
    while y > 1.5:
        y = np.sqrt(y)
    return y


def exp_series(x, terms):
    """exp(x) by its Taylor series; `terms` is an int, so it is a static (specialization) value."""
    total = 1.0
    term = 1.0
    for k in range(1, terms):
        term = term * x / k
        total = total + term
    return total


def piecewise_loss(w, x):
    z = x @ w
    if np.sum(z) > 0:
        loss = np.sum(z ** 2)
    else:
        loss = np.sum(np.abs(z)) * 3.0
    return loss


def central_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def main(fast=False):
    g = grad(root_until_small)
    for x0 in (100.0, 2.0, 1.2):
        n = 0
        y = x0
        while y > 1.5:
            y, n = np.sqrt(y), n + 1
        exact = (0.5 ** n) * x0 ** (0.5 ** n - 1)       # d/dx x**(1/2**n)
        got = g(x0)
        print(f"grad(root_until_small)({x0}) = {got:.10f}   ({n} loop trips; exact {exact:.10f})")
        np.testing.assert_allclose(got, exact, rtol=1e-12)
        np.testing.assert_allclose(got, central_difference(root_until_small, x0), rtol=1e-6)
    print(g.source)

    ge = grad(exp_series)
    for x0 in (0.5, -1.0, 2.0):
        got = ge(x0, 25)
        print(f"grad(exp_series)({x0}, 25) = {got:.12f}   exp = {np.exp(x0):.12f}")
        np.testing.assert_allclose(got, np.exp(x0), rtol=1e-12)

    gp = jit(grad(piecewise_loss))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3))
    for w in (np.array([1.0, 0.5, -0.2]), np.array([-1.0, -0.5, 0.2])):
        got = gp(w, x)
        fd = central_difference(lambda v: piecewise_loss(v, x), w)
        branch = "z**2" if np.sum(x @ w) > 0 else "3|z|"
        print(f"jit(grad(piecewise_loss)) on the {branch} branch: {got}")
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    if not fast:
        print("\nthe compiled gradient with its branch:")
        print(show(gp, w, x))
    print("control_flow: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="skip the long source listing")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1")
