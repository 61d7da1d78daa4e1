"""NumPy functions of Python numbers return NumPy scalars (strong in NumPy 2's promotion),
where Python operators keep Python numbers: jit gives the dtypes, types and values plain
NumPy gives. And np.sinc's derivatives of every order at 0 (a series there), against JAX."""
import math
import warnings

import numpy as np
import pytest

from transpile import grad, jit, vmap
from transpile.errors import TranspileWarning

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

V32 = np.array([1.0, 2.0, 3.0], np.float32)

CASES = {
    "np.sqrt(const) * v32": (lambda x, a: np.sqrt(2.0) * a, (0.5, V32)),
    "np.exp(x)": (lambda x, a: np.exp(x), (0.5, V32)),
    "np.exp(x) + 1.0": (lambda x, a: np.exp(x) + 1.0, (0.5, V32)),
    "np.exp(x) * v32": (lambda x, a: np.exp(x) * a, (0.5, V32)),
    "np.maximum(x, c) * v32": (lambda x, a: np.maximum(x, 0.2) * a, (0.5, V32)),
    "np.abs(x) * v32": (lambda x, a: np.abs(x) * a, (-0.5, V32)),
    "np.floor(x)": (lambda x, a: np.floor(x), (2.5, V32)),
    "np.sin(3x) + v32": (lambda x, a: np.sin(x * 3) + a, (2.5, V32)),
    "np.cbrt(x) ** -2 at 0": (lambda x, a: np.cbrt(x) ** -2, (0.0, V32)),
    # Python operators and builtins keep Python numbers (weak): float32 stays
    "abs(x) * v32": (lambda x, a: abs(x) * a, (-0.5, V32)),
    "x * 2.0 * v32": (lambda x, a: x * 2.0 * a, (2.5, V32)),
    "math.sqrt(x) * v32": (lambda x, a: math.sqrt(x) * a, (2.5, V32)),
    "np.float32(x) * v32": (lambda x, a: np.float32(x) * a, (2.5, V32)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_jit_matches_numpy_types_of_numpy_functions_of_python_numbers(name):
    fn, args = CASES[name]
    with np.errstate(all="ignore"):
        want = fn(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            got = jit(fn)(*args)
    assert type(got) is type(want)
    assert np.result_type(got) == np.result_type(want)
    np.testing.assert_allclose(got, want)


def test_gradients_and_vmap_through_a_numpy_scalar():
    f = lambda x: np.exp(x) * 2.0
    assert grad(f)(0.5) == pytest.approx(2 * math.exp(0.5))
    assert jit(grad(f))(0.5) == pytest.approx(2 * math.exp(0.5))
    out = vmap(lambda x, a: np.exp(x) * a, in_axes=(0, None))(np.array([0.1, 0.2]), V32)
    np.testing.assert_allclose(out, np.exp([[0.1], [0.2]]) * V32)
    assert out.dtype == np.float64


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("x0", [0.0, 0.3, -1.7])
def test_sinc_derivatives_of_every_order(order, x0):
    ours, theirs = np.sinc, jnp.sinc
    for _ in range(order):
        ours, theirs = grad(ours), jax.grad(theirs)
    assert ours(x0) == pytest.approx(float(theirs(x0)), rel=1e-9, abs=1e-9)


def test_sinc_second_derivative_compiled_and_batched():
    x = np.array([0.0, 0.3, -1.2, 2.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jit(vmap(grad(grad(np.sinc))))(x)
    np.testing.assert_allclose(got, jax.vmap(jax.grad(jax.grad(jnp.sinc)))(x), rtol=1e-12)
    assert got[0] == pytest.approx(-np.pi ** 2 / 3)
