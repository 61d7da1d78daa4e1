"""Code that needs an argument's shape when it is generated (a comprehension over an array,
sorted(x), reversed(x), np.stack of a comprehension): every transform generates it for the
shapes of the call (transpile/api/shape_folding.py, api.Transform.specialize_for), vmap for one
example's shapes. Oracles: NumPy per example, central finite differences in float64."""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile import TranspileWarning
from fd import numerical_grad


def comprehension_sum(x):
    return sum([np.sin(v) * v for v in x])


def sorted_weights(x):
    return np.sum(np.array(sorted(x)) * np.arange(x.shape[0]))


def reversed_recurrence(x):
    acc = 0.0
    for v in reversed(x):
        acc = acc * 0.5 + v * v
    return acc


def stacked_comprehension(x):
    return np.sum(np.stack([v * x for v in x]) ** 2)


FNS = [comprehension_sum, sorted_weights, reversed_recurrence, stacked_comprehension]
X = np.array([0.3, 1.2, -0.7])
XS = np.array([[0.3, 1.2, -0.7], [1.0, -2.0, 0.5]])


def _fd(f, x):
    return numerical_grad(f, [x.copy()])


@pytest.mark.parametrize("f", FNS)
def test_grad_and_jvp(f):
    np.testing.assert_allclose(tp.grad(f)(X), _fd(f, X), rtol=1e-6, atol=1e-8)
    t = np.array([1.0, -0.5, 2.0])
    out, tan = tp.jvp(f, (X,), (t,))
    assert np.isclose(out, f(X))
    np.testing.assert_allclose(tan, _fd(f, X) @ t, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FNS)
def test_vmap_and_per_example_gradients(f):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)       # jit compiles them
        np.testing.assert_allclose(tp.vmap(f)(XS), [f(r) for r in XS], rtol=1e-12)
        np.testing.assert_allclose(tp.jit(tp.vmap(f))(XS), [f(r) for r in XS], rtol=1e-12)
        want = np.stack([_fd(f, r) for r in XS])
        np.testing.assert_allclose(tp.vmap(tp.grad(f))(XS), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(tp.jit(tp.vmap(tp.grad(f)))(XS), want, rtol=1e-6, atol=1e-8)
    total = lambda z: np.sum(tp.vmap(f)(z))     # noqa: E731
    np.testing.assert_allclose(tp.grad(total)(XS), _fd(total, XS), rtol=1e-6, atol=1e-8)


def test_a_new_length_generates_new_code():
    g = tp.grad(comprehension_sum)
    for n in (2, 3, 5):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(g(x), _fd(comprehension_sum, x), rtol=1e-6, atol=1e-8)
