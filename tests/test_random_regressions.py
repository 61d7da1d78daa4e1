"""Every transform on the minimized programs of tests/random_regressions.py, at points on both
sides of their branches: jit against NumPy (the caller's array written the same way), grad and
jit(grad) against central differences, vmap and vmap(grad) against a loop over the batch."""
import numpy as np
import pytest

import random_regressions as R
from fd import numerical_grad
from transpile import grad, hessian, jacrev, jit, vmap

NAMES = [f.__name__ for f in R.PROGRAMS]
XS = np.array([[0.9, 0.09, -0.74, -0.92], [1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0],
               [0.3, -0.5, 0.8, 1.1], [0.1, -0.2, 0.05, 0.0]])


def _fd(f, x):
    return numerical_grad(lambda z: f(z.copy()), [x.copy()])


@pytest.mark.parametrize("name", NAMES)
def test_jit_matches_numpy_and_writes_the_argument_alike(name):
    f = getattr(R, name)
    for x in XS:
        a, b = x.copy(), x.copy()
        np.testing.assert_allclose(jit(f)(b), f(a), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, a, rtol=1e-12)




@pytest.mark.parametrize("name", NAMES)
@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_grad_and_jit_grad_match_finite_differences(name):
    f = getattr(R, name)
    for x in XS:
        want = _fd(f, x)
        np.testing.assert_allclose(grad(f)(x.copy()), want, rtol=1e-5, atol=1e-6)
        got = jit(grad(f))(x.copy())
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_and_vmap_of_grad_match_a_loop(name):
    f = getattr(R, name)
    for rows in (XS, XS[1:2], XS[[1, 3]], XS[[2, 4]]):   # mixed and one-sided batches
        want = np.array([f(r.copy()) for r in rows])
        np.testing.assert_allclose(vmap(f)(rows.copy()), want, rtol=1e-12, atol=1e-12)
        want = np.array([_fd(f, r) for r in rows])
        np.testing.assert_allclose(vmap(grad(f))(rows.copy()), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", [f.__name__ for f in R.SECOND_ORDER])
def test_second_order_matches_finite_differences_of_grad(name):
    f = getattr(R, name)
    for x in XS:
        want = np.array([numerical_grad(lambda z: grad(f)(z.copy())[i], [x.copy()])
                         for i in range(x.size)])
        np.testing.assert_allclose(jacrev(grad(f))(x.copy()), want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(hessian(f)(x.copy()), want, rtol=1e-4, atol=1e-5)


# known crash, in the issue notes: jit(jacrev(grad(f))) of an early return before a loop (the
# batched Jacobian copies a loop variable bound on the other path only)
_JIT_SECOND = [f.__name__ for f in R.SECOND_ORDER]


@pytest.mark.parametrize("name", _JIT_SECOND)
@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_jit_of_jacobian_of_grad_matches_finite_differences(name):
    f = getattr(R, name)
    for x in XS:
        want = np.array([numerical_grad(lambda z: grad(f)(z.copy())[i], [x.copy()])
                         for i in range(x.size)])
        np.testing.assert_allclose(jit(jacrev(grad(f)))(x.copy()), want, rtol=1e-4, atol=1e-5)


def _first_partial_of_grad(z):
    return grad(R.early_return_then_loop)(z)[0]


# grad of a function that calls grad(f) of an early return before a loop: inlining the
# first-order code copied the backward loop's index (bound only on the path where the loop
# ran) before its `if` (UnboundLocalError; transpile/core/rename.py)
def test_grad_of_inlined_grad_with_an_early_return_before_a_loop():
    for x in XS:
        want = numerical_grad(_first_partial_of_grad, [x.copy()])
        np.testing.assert_allclose(grad(_first_partial_of_grad)(x.copy()), want, rtol=1e-4,
                                   atol=1e-5)


# the adjoint of an array of run-time length, reset to 0 in a loop, was a scalar on one path
# and an array on the other (a fallback): it is a zero array that broadcasts to every length
@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_jit_of_vmap_of_grad_of_a_slice_grown_in_a_loop():
    f = R.slice_grown_in_a_loop
    want = np.array([_fd(f, r) for r in XS])
    got = jit(vmap(grad(f)))(XS.copy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_jit_and_jit_of_vmap_of_a_slice_grown_in_a_loop():
    f = R.slice_grown_in_a_loop
    for x in XS:
        np.testing.assert_allclose(jit(f)(x.copy()), f(x.copy()), rtol=1e-12, atol=1e-12)
    want = np.array([f(r.copy()) for r in XS])
    np.testing.assert_allclose(jit(vmap(f))(XS.copy()), want, rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_of_a_list_of_data_length():
    """Examples with the same count of appends agree with a loop; with different counts vmap
    refuses with its own error (as in JAX), never a crash."""
    f = R.list_of_data_length_then_branch
    same = np.array([[0.3, 0.5, -0.8, 1.1], [0.2, 0.1, -0.3, 0.4]])     # 3 positives each
    want = np.array([_fd(f, r) for r in same])
    np.testing.assert_allclose(vmap(grad(f))(same.copy()), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jit(vmap(grad(f)))(same.copy()), want, rtol=1e-5, atol=1e-6)
    mixed = np.array([[0.3, 0.5, -0.8, 1.1], [-0.2, 0.6, -0.3, 0.9]])
    with pytest.raises(ValueError, match="different shapes"):
        vmap(grad(f))(mixed.copy())
    want = np.array([_fd(f, r) for r in mixed])     # jit's batched code keeps a list per example
    np.testing.assert_allclose(jit(vmap(grad(f)))(mixed.copy()), want, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_jit_grad_of_a_list_grown_under_an_if():
    """Rows appended under an `if` on the data (0 to 3 of them), then sliced, joined and
    stacked: jit(grad) against central differences."""
    f = R.list_grown_under_an_if_then_joined
    for x in np.concatenate([XS, [[0.1, 0.2, 0.3, 0.4], [1.5, -1.6, 1.7, 0.2]]]):
        np.testing.assert_allclose(jit(grad(f))(x.copy()), _fd(f, x), rtol=1e-5, atol=1e-6)
