"""jit regressions found by testers: values carried by loops as permutations (a tuple swap),
and programs that used to fall back to NumPy under jit.

Every test turns TranspileWarning (jit's fallback to NumPy) into an error. Numbers are checked
against central finite differences in float64 (tests/fd.py) or against the function run
plainly.
"""
import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit, vmap

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


def fd_rows(f, X):
    return np.stack([numerical_grad(f, [r]) for r in X])


# -- loop-carried permutations: a, b = b, a + ... --------------------------------------------------
# the backward loop carries the adjoints da, db; at the end of its body they are updated in
# parallel (da, db = db, da + ...). jit used to write them one after the other, so da read the
# new db (specialize substituted a copy of a carried name by the name itself).

def swap_fib(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, a + b * x[2]
    return a + b


def swap_sin(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, a * 0.5 + b * np.sin(x[2])
    return a + b


def swap_drop(x):
    a, b = x[0], x[1]
    for i in range(5):
        a, b = b, b * x[2]
    return a + 2.0 * b


def cycle3(x):
    a, b, c = x[0], x[1], x[2]
    for i in range(4):
        a, b, c = b * x[3], c, a
    return a + 2.0 * b + 3.0 * c


def cycle3_while(x):
    a, b, c = x[0], x[1], x[2]
    k = 0
    while k < 5:
        a, b, c = c, a + b * x[3], b
        k = k + 1
    return a * b + c


def snapshot_then_update(x):
    a = x[0]
    t = 0.0
    for i in range(3):
        t = a                 # t keeps the value a had before this iteration's update
        a = a * x[1]
    return t + 0.1 * a


SWAPS = [swap_fib, swap_sin, swap_drop, cycle3, cycle3_while, snapshot_then_update]
X4 = np.array([0.3, 1.2, -0.7, 0.9])


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_of_loop_permutation_value(f):
    assert np.allclose(jit(f)(X4), f(X4), rtol=1e-12)


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_grad_of_loop_permutation(f):
    assert np.allclose(jit(grad(f))(X4), numerical_grad(f, [X4]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", SWAPS, ids=lambda f: f.__name__)
def test_jit_vmap_grad_of_loop_permutation(f):
    X = np.stack([X4, X4[::-1] * 1.1, X4 + 0.5])
    assert np.allclose(jit(vmap(grad(f)))(X), fd_rows(f, X), rtol=1e-6, atol=1e-8)


def test_jit_grad_swap_in_forward_loop_read_after():
    def f(x):
        a, b = x[0], x[1]
        for i in range(3):
            a, b = b, a
            b = b * x[2]
        return a * 10.0 + b
    assert np.allclose(jit(grad(f))(X4), numerical_grad(f, [X4]), rtol=1e-6, atol=1e-8)


def test_parallel_assign_keeps_old_values_without_jit():
    # `a, b, c = b * k, c, a`: the new a (a computed value) used to take the name `a` while
    # c = a still had to read the old one (the normalizer; wrong under every transform)
    x = X4
    assert np.allclose(vmap(cycle3)(np.stack([x, 2 * x])), [cycle3(x), cycle3(2 * x)])
    assert np.allclose(grad(cycle3)(x), numerical_grad(cycle3, [x]), rtol=1e-6, atol=1e-8)

