"""Values that escape inner loops and branches must be restored per outer iteration."""
import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad


def escape_inner_for(x):
    s = 0.0
    for i in range(3):
        for j in range(2):
            t = np.sin(x[j] * (i + 1))
        s = s + t * x[i]
    return s


def escape_inner_while(x):
    s = 0.0
    for i in range(3):
        a = x[i]
        while np.abs(a) > 0.1:
            a = a * 0.5
            b = np.cos(a) * x[0]
        s = s + b * a
    return s


def escape_branch_in_inner_loop(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if x[j] > 0.5:
                u = x[j] * x[i]
            else:
                u = np.exp(x[j]) - x[i]
        s = s + u * u
    return s


def three_levels(x):
    s = 0.0
    for i in range(2):
        for j in range(2):
            for k in range(2):
                v = x[k] * x[j] + i
            w = v * x[i]
        s = s + np.tanh(w)
    return s


CASES = [escape_inner_for, escape_inner_while, escape_branch_in_inner_loop, three_levels]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_matches_finite_differences(f):
    x = np.array([0.3, 0.7, 0.45])  # away from trip-count jumps (0.8 halves to 0.1 exactly)
    np.testing.assert_allclose(grad(f)(x), numerical_grad(f, [x]), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", [escape_inner_for, three_levels], ids=lambda f: f.__name__)
def test_second_order_through_nested_loops(f):
    x = np.array([0.3, 0.7, 0.45])  # away from trip-count jumps (0.8 halves to 0.1 exactly)
    v = np.array([1.0, -0.5, 0.25])

    def directional(x):
        return np.sum(grad(f)(x) * v)
    np.testing.assert_allclose(grad(directional)(x), numerical_grad(directional, [x]),
                               rtol=1e-5, atol=1e-8)
