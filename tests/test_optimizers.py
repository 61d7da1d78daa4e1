import warnings

import numpy as np
import pytest

from transpile import optimizers
from transpile.pytree import tree_leaves, tree_structure

RNG = np.random.default_rng(0)
X0 = RNG.normal(size=(3, 4))
GRADS = [RNG.normal(size=(3, 4)) for _ in range(5)]


# ---------------------------------------------------------------- reference formulas

def ref_sgd(x, grads, lr):
    for i, g in enumerate(grads):
        x = x - lr(i) * g
    return x


def ref_momentum(x, grads, lr, mass):
    v = np.zeros_like(x)
    for i, g in enumerate(grads):
        v = mass * v + g
        x = x - lr(i) * v
    return x


def ref_adam(x, grads, lr, b1, b2, eps):
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    for t, g in enumerate(grads, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        v_hat = v / (1 - b2**t)
        x = x - lr(t - 1) * m_hat / (np.sqrt(v_hat) + eps)
    return x


def run(opt, x, grads):
    opt_init, opt_update, get_params = opt
    state = opt_init(x)
    for i, g in enumerate(grads):
        state = opt_update(i, g, state)
    return get_params(state)


CASES = {
    "sgd": (lambda s: optimizers.sgd(s), lambda x, gs, lr: ref_sgd(x, gs, lr)),
    "momentum": (lambda s: optimizers.momentum(s, mass=0.8),
                 lambda x, gs, lr: ref_momentum(x, gs, lr, 0.8)),
    "adam": (lambda s: optimizers.adam(s, b1=0.85, b2=0.99, eps=1e-7),
             lambda x, gs, lr: ref_adam(x, gs, lr, 0.85, 0.99, 1e-7)),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("steps", [1, 5])
def test_matches_reference_formula(name, steps):
    make, ref = CASES[name]
    got = run(make(0.1), X0, GRADS[:steps])
    want = ref(X0, GRADS[:steps], lambda i: 0.1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_schedule_step_size(name):
    make, ref = CASES[name]
    schedule = optimizers.exponential_decay(0.1, decay_steps=2, decay_rate=0.5)
    got = run(make(schedule), X0, GRADS)
    want = ref(X0, GRADS, schedule)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, run(make(0.1), X0, GRADS))


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam"])
def test_matches_jax_example_libraries(name):
    jopt = pytest.importorskip("jax.example_libraries.optimizers")
    ours = {"sgd": optimizers.sgd(0.05), "momentum": optimizers.momentum(0.05, 0.9),
            "adam": optimizers.adam(0.05)}[name]
    theirs = {"sgd": jopt.sgd(0.05), "momentum": jopt.momentum(0.05, 0.9),
              "adam": jopt.adam(0.05)}[name]
    x32 = X0.astype(np.float32)
    grads32 = [g.astype(np.float32) for g in GRADS]
    got = run(ours, x32, grads32)
    want = np.asarray(run(theirs, x32, grads32))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("opt", [optimizers.sgd(0.1), optimizers.momentum(0.05),
                                 optimizers.adam(0.05)], ids=["sgd", "momentum", "adam"])
def test_minimizes_quadratic(opt):
    # f(x) = 0.5 (x - c)^T A (x - c), A positive definite; minimum at c
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    c = np.array([1.0, -2.0])
    opt_init, opt_update, get_params = opt
    state = opt_init(np.zeros(2))
    for i in range(2000):
        x = get_params(state)
        state = opt_update(i, A @ (x - c), state)
    np.testing.assert_allclose(get_params(state), c, atol=1e-4)


@pytest.mark.parametrize("make", [optimizers.sgd, optimizers.momentum, optimizers.adam])
def test_pytree_round_trip(make):
    params = {"w": np.ones((2, 3)), "b": np.zeros(3), "layers": (np.ones(2), [np.ones(1)])}
    opt_init, opt_update, get_params = make(0.1)
    state = opt_init(params)
    assert isinstance(state, tuple)
    assert all(isinstance(leaf, np.ndarray) for leaf in tree_leaves(state))
    out = get_params(state)
    assert tree_structure(out) == tree_structure(params)
    for a, b in zip(tree_leaves(out), tree_leaves(params)):
        np.testing.assert_array_equal(a, b)
    grads = {"w": np.full((2, 3), 2.0), "b": np.ones(3), "layers": (np.ones(2), [np.ones(1)])}
    new = get_params(opt_update(0, grads, state))
    assert tree_structure(new) == tree_structure(params)
    assert np.all(new["w"] < params["w"]) and np.all(new["b"] < 0)
    # inputs are never mutated
    np.testing.assert_array_equal(params["w"], 1.0)
    np.testing.assert_array_equal(get_params(state)["w"], 1.0)


@pytest.mark.parametrize("make", [optimizers.sgd, optimizers.momentum, optimizers.adam])
def test_float32_preserved(make):
    params = {"w": np.ones((2, 2), np.float32), "b": np.zeros(2, np.float64)}
    opt_init, opt_update, get_params = make(lambda i: np.float64(0.01))   # float64 lr
    state = opt_init(params)
    grads = {"w": np.ones((2, 2), np.float64), "b": np.ones(2, np.float32)}   # mixed grads
    for i in range(3):
        state = opt_update(i, grads, state)
    for tree in state:
        assert tree["w"].dtype == np.float32
        assert tree["b"].dtype == np.float64


def test_scalar_param():
    opt_init, opt_update, get_params = optimizers.sgd(0.5)
    state = opt_update(0, 2.0, opt_init(1.0))
    assert float(get_params(state)) == 0.0


def test_piecewise_constant():
    s = optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    assert [s(i) for i in range(7)] == [1.0, 1.0, 0.5, 0.5, 0.5, 0.1, 0.1]


def test_errors():
    opt_init, opt_update, get_params = optimizers.adam(0.1)
    with pytest.raises(TypeError, match="floating-point.*int64"):
        opt_init({"w": np.arange(3)})
    state = opt_init({"w": np.ones(3)})
    with pytest.raises(ValueError, match="does not match params"):
        opt_update(0, {"v": np.ones(3)}, state)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        opt_update(0, {"w": np.ones(2)}, state)
    with pytest.raises(TypeError, match="state must be the tuple"):
        opt_update(0, {"w": np.ones(3)}, state[:2])
    with pytest.raises(TypeError, match="step_size"):
        optimizers.sgd("fast")
    with pytest.raises(ValueError, match="len\\(values\\)"):
        optimizers.piecewise_constant([1, 2], [1.0])


# ---------------------------------------------------------------- inside jit

def _mlp_loss(params, batch):
    x, y = batch
    return np.mean((np.tanh(x @ params["w"] + params["b"]) - y) ** 2)


@pytest.mark.parametrize("make", [lambda: optimizers.sgd(0.1),
                                  lambda: optimizers.momentum(0.05, mass=0.9),
                                  lambda: optimizers.adam(1e-2),
                                  lambda: optimizers.adam(optimizers.exponential_decay(1e-2, 2, 0.5))])
def test_step_with_grad_and_opt_update_runs_compiled(make):
    import transpile as tp
    opt_init, opt_update, get_params = make()

    def step(i, state, batch):
        g = tp.grad(_mlp_loss)(get_params(state), batch)
        return opt_update(i, g, state)
    rng = np.random.default_rng(1)
    params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    batch = (rng.normal(size=(6, 3)), rng.normal(size=(6, 2)))
    eager, compiled = opt_init(params), opt_init(params)
    jstep = tp.jit(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a NumPy fallback would warn
        for i in range(4):
            eager = step(i, eager, batch)
            compiled = jstep(i, compiled, batch)
            assert jstep.last_tier == "compiled"
    for e, c in zip(tree_leaves(get_params(eager)), tree_leaves(get_params(compiled))):
        np.testing.assert_allclose(c, e, rtol=1e-12, atol=1e-15)
    # and the numbers are the optimizer's: a plain NumPy gradient of the same loss
    x, y = batch
    w, b = params["w"], params["b"]
    t = np.tanh(x @ w + b)
    d = 2.0 * (t - y) * (1 - t ** 2) / y.size
    grads = {"w": x.T @ d, "b": d.sum(axis=0)}
    state = opt_init(params)
    state = opt_update(0, grads, state)
    one = tp.jit(step)(0, opt_init(params), batch)
    for e, c in zip(tree_leaves(get_params(state)), tree_leaves(get_params(one))):
        np.testing.assert_allclose(c, e, rtol=1e-12, atol=1e-15)
