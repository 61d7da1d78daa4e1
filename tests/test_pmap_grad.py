"""pmap composed with grad: psum's transpose rule, data-parallel gradients with pmean."""
import numpy as np
import pytest

from fd import numerical_grad
from transpile_runtime.devices import reset_cpu_devices
from transpile import grad, pmap, pmean, psum, show


@pytest.fixture(autouse=True)
def four_devices():
    reset_cpu_devices(4)
    yield
    reset_cpu_devices(None)


def loss(w, x, y):
    pred = x @ w
    return np.mean((pred - y) ** 2)


def test_data_parallel_gradient_equals_full_batch_gradient():
    rng = np.random.default_rng(0)
    w = rng.normal(size=3)
    x = rng.normal(size=(4, 8, 3))
    y = rng.normal(size=(4, 8))

    def step(w, x, y):
        return pmean(grad(loss)(w, x, y), 'batch')
    g = pmap(step, axis_name='batch', in_axes=(None, 0, 0))(w, x, y)
    full = grad(loss)(w, x.reshape(32, 3), y.reshape(32))
    for shard in g:
        np.testing.assert_allclose(shard, full, rtol=1e-12)


def normalized_energy(x):
    return np.sum((x / psum(x, 'i')) ** 2)


def test_grad_through_psum_matches_finite_differences_of_the_whole_program():
    """Each shard's gradient of sum_j f_j is psum of the cotangents: compare with finite
    differences of the total over all shards."""
    rng = np.random.default_rng(1)
    xs = rng.uniform(0.5, 1.5, size=(4, 3))
    got = pmap(grad(normalized_energy), axis_name='i')(xs)

    def total(flat):
        x = flat.reshape(4, 3)
        s = x.sum(axis=0)
        return sum(np.sum((x[k] / s) ** 2) for k in range(4))
    want = numerical_grad(total, [xs.reshape(-1)]).reshape(4, 3)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_generated_gradient_shows_the_collective():
    src = show(grad(normalized_energy), np.ones(3))
    assert "rt.psum(x, 'i')" in src
    assert src.count("rt.psum(") >= 2   # forward and its adjoint


def test_pmap_of_a_numba_function_runs_it_as_is():
    numba = pytest.importorskip("numba")

    @numba.njit(nogil=True)
    def square_sum(x):
        s = 0.0
        for v in x:
            s += v * v
        return s
    out = pmap(square_sum)(np.arange(8.0).reshape(4, 2))
    np.testing.assert_allclose(out, [1.0, 13.0, 41.0, 85.0])


def test_transforming_a_non_python_callable_is_a_clear_error():
    numba = pytest.importorskip("numba")
    f = numba.njit(lambda x: x * 2.0)
    from transpile import TranspileError
    with pytest.raises(TranspileError, match="(?s)not a Python function.*py_func"):
        grad(f)(1.0)
