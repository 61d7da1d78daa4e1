"""NumPy's random generators inside transformed code (issue 22).

A np.random.Generator passed in, np.random.default_rng(seed) and np.random.RandomState(seed)
made in the function: jit compiles the draws (a TranspileWarning, jit running NumPy instead,
is an error here) and gives the numbers plain NumPy gives for the same seed, bit for bit, in
NumPy's order of draws (loops and branches included), leaving a Generator argument in the state
NumPy leaves it in. What cannot work is refused at the user's line.
"""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile.errors import TranspileError, TranspileWarning


def strict(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return fn(*args)


def exactly(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    assert np.array_equal(got, want), (got, want)


# ---- a Generator argument: each method, compiled ------------------------------------------

DRAWS = {
    "standard_normal": lambda rng, x: rng.standard_normal(4) + x[0],
    "standard_normal_2d": lambda rng, x: rng.standard_normal((2, 3)),
    "standard_normal_scalar": lambda rng, x: rng.standard_normal() * x,
    "normal": lambda rng, x: rng.normal(1.5, 0.25, 5),
    "normal_size_kw": lambda rng, x: rng.normal(0.0, 2.0, size=(3, 2)),
    "normal_scalar": lambda rng, x: x + rng.normal(0.0, 0.8),
    "uniform": lambda rng, x: rng.uniform(-1.0, 3.0, 6),
    "uniform_defaults": lambda rng, x: rng.uniform(size=3),
    "random": lambda rng, x: rng.random(5),
    "random_scalar": lambda rng, x: rng.random() * x,
    "integers": lambda rng, x: rng.integers(0, 10, 7),
    "integers_high_only": lambda rng, x: rng.integers(5, size=4),
    "integers_from_shape": lambda rng, x: x[rng.integers(0, x.shape[0], 6)],
    "choice_int": lambda rng, x: rng.choice(5, 8),
    "choice_array": lambda rng, x: rng.choice(x, 6),
    "choice_array_size_kw": lambda rng, x: rng.choice(x, size=(2, 2)),
    "exponential": lambda rng, x: rng.exponential(2.0, 4),
    "poisson": lambda rng, x: rng.poisson(3.0, 5),
    "gamma": lambda rng, x: rng.gamma(0.5, 2.0, 6),
    "beta": lambda rng, x: rng.beta(0.5, 0.7, 6),
    "binomial": lambda rng, x: rng.binomial(100, 0.7, 6),
    "laplace": lambda rng, x: rng.laplace(0.5, 2.0, 6),
    "lognormal": lambda rng, x: rng.lognormal(0.1, 0.5, 6),
    "integers_scalar": lambda rng, x: x[rng.integers(0, 4)] + rng.integers(-5, 3),
    "bound_from_argument": lambda rng, x: rng.uniform(x[0], x[3], 4),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_generator_argument_method_compiles_with_numpys_numbers(name):
    fn = DRAWS[name]
    x = np.array([0.5, -1.0, 2.0, 3.5])
    mine, theirs = np.random.default_rng(42), np.random.default_rng(42)
    f = tp.jit(fn)
    for _ in range(2):      # the compile, then the cached code: the stream goes on
        exactly(strict(f, mine, x), fn(theirs, x))
        assert mine.bit_generator.state == theirs.bit_generator.state


def test_draws_in_a_loop_and_a_branch_keep_numpys_order():
    def metropolis(rng, steps, x0):
        x, acc = x0, 0
        out = np.empty(steps)
        for i in range(steps):
            prop = x + rng.normal(0.0, 0.5)
            if rng.random() < np.exp(0.5 * (x * x - prop * prop)):
                x = prop
                acc += 1
            out[i] = x
        return out, acc
    mine, theirs = np.random.default_rng(3), np.random.default_rng(3)
    got, want = strict(tp.jit(metropolis), mine, 300, 0.1), metropolis(theirs, 300, 0.1)
    exactly(got[0], want[0])
    assert got[1] == want[1]
    assert mine.bit_generator.state == theirs.bit_generator.state


def test_a_generator_with_another_bit_generator():
    def f(rng):
        return rng.normal(0.0, 1.0, 5), rng.integers(0, 3, 4)
    mine = np.random.Generator(np.random.MT19937(7))
    theirs = np.random.Generator(np.random.MT19937(7))
    for g, w in zip(strict(tp.jit(f), mine), f(theirs)):
        exactly(g, w)


def test_a_method_numba_lacks_runs_only_that_statement_in_numpy():
    def f(rng, x):
        y = np.sin(x) * 2.0
        p = rng.permutation(6)
        return y[p[:3]] + rng.normal(0.0, 1.0, 3)
    x = np.linspace(0.0, 1.0, 6)
    mine, theirs = np.random.default_rng(5), np.random.default_rng(5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tp.jit(f)(mine, x)
    said = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    assert said and all("that statement runs in NumPy" in m for m in said), said
    np.testing.assert_allclose(got, f(theirs, x), rtol=1e-14)
    assert mine.bit_generator.state == theirs.bit_generator.state


# ---- default_rng(seed) made in the function ------------------------------------------------

def bootstrap(x, nboot, seed):
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    means = np.empty(nboot)
    for b in range(nboot):
        means[b] = x[rng.integers(0, n, n)].mean()
    return means


def test_default_rng_draws_in_a_loop():
    x = np.linspace(-1.0, 2.0, 25) ** 2
    for seed in (1, 2):
        np.testing.assert_allclose(strict(tp.jit(bootstrap), x, 40, seed), bootstrap(x, 40, seed),
                                   rtol=1e-12)


def test_default_rng_in_a_branch_and_two_streams():
    def f(x, seed):
        a = np.random.default_rng(seed)
        b = np.random.default_rng(seed + 1)
        y = a.normal(0.0, 1.0, 3)
        if np.sum(x) > 0:
            y = y + b.random(3)
        return x * y + a.uniform(0.0, 1.0, 3) - b.standard_normal(3)
    for x in (np.ones(3), -np.ones(3)):
        exactly(strict(tp.jit(f), x, 11), f(x, 11))


def test_grad_through_draws_in_a_loop():
    def f(x, seed):
        rng = np.random.default_rng(seed)
        t = 0.0
        for i in range(4):
            t = t + np.sum(np.sin(x) * rng.normal(0.0, 1.0, 3))
        return t
    x = np.array([0.3, -0.7, 1.1])
    rng = np.random.default_rng(9)
    z = sum(rng.normal(0.0, 1.0, 3) for _ in range(4))
    eps = 1e-6
    fd = np.array([(f(x + eps * e, 9) - f(x - eps * e, 9)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(fd, np.cos(x) * z, rtol=1e-6)
    np.testing.assert_allclose(tp.grad(f)(x, 9), fd, rtol=1e-6)
    np.testing.assert_allclose(strict(tp.jit(tp.grad(f)), x, 9), fd, rtol=1e-6)


def test_grad_with_a_generator_argument():
    def f(x, rng):
        return np.sum(np.sin(x) * rng.normal(0.0, 1.0, 3)) + np.sum(x * rng.random(3))
    x = np.array([0.3, -0.7, 1.1])
    mine, theirs = np.random.default_rng(4), np.random.default_rng(4)
    want = np.cos(x) * theirs.normal(0.0, 1.0, 3) + theirs.random(3)
    np.testing.assert_allclose(strict(tp.jit(tp.grad(f)), x, mine), want, rtol=1e-12)
    assert mine.bit_generator.state == theirs.bit_generator.state


def test_vmap_with_one_seed_for_every_example():
    def f(x, seed):
        rng = np.random.default_rng(seed)
        return np.sum(x * rng.normal(0.0, 1.0, 3))
    xs = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(tp.vmap(f, in_axes=(0, None))(xs, 5), [f(x, 5) for x in xs],
                               rtol=1e-12)


def test_vmap_refuses_what_has_no_batched_form():
    def f(x, seed):
        return x * np.random.default_rng(seed).normal(0.0, 1.0, 3)

    def g(x, rng):
        return x * rng.normal(0.0, 1.0, 3)
    xs = np.ones((4, 3))
    with pytest.raises(TranspileError, match="seed per example"):
        tp.vmap(f)(xs, np.arange(4))
    with pytest.raises(TranspileError, match="every example would draw"):
        tp.vmap(g, in_axes=(0, None))(xs, np.random.default_rng(0))


def test_vmap_refuses_draws_that_differ_per_example():
    """In a branch taken by some examples, or a while loop that runs longer for some, the
    examples would draw in turn from one generator (separate calls each have their own)."""
    def branch(x):
        rng = np.random.default_rng(1)
        y = rng.normal(0.0, 1.0, 3)
        if np.sum(x) > 0:
            y = y + rng.random(3)
        return np.sum(x * y)

    def until(x):
        rs = np.random.RandomState(1)
        t = 0.0
        while t < x[0]:
            t = t + rs.rand()
        return t
    with pytest.raises(TranspileError, match="each example in turn"):
        tp.vmap(branch)(np.ones((3, 3)))
    with pytest.raises(TranspileError, match="each example in turn"):
        tp.vmap(until)(np.array([[0.5], [2.0], [3.0]]))


# ---- RandomState(seed) made in the function --------------------------------------------------

def legacy(x, seed):
    rs = np.random.RandomState(seed)
    a = rs.randn(3)
    b = rs.normal(1.0, 2.0, size=3)
    c = rs.uniform(-1.0, 1.0, 3) * rs.rand(3)
    d = rs.randint(0, 5, 3) + rs.randint(4, size=3)
    t = 0.0
    for i in range(4):                  # draws in a loop, from a RandomState made outside it
        t = t + np.sum(x * rs.randn(3))
        if t > 0:
            t = t - rs.standard_normal()
    return x * a, b, c, d, t + rs.random_sample(3) + rs.randn()


def test_random_state_draws_compile_with_numpys_numbers():
    x = np.arange(3.0)
    f = tp.jit(legacy)
    for seed in (0, 3):
        for g, w in zip(strict(f, x, seed), legacy(x, seed)):
            exactly(g, w)


def test_two_random_states_run_their_draws_in_numpy():
    """Numba has one generator: two RandomStates' draws are not compiled (same numbers)."""
    def f(x, seed):
        a, b = np.random.RandomState(seed), np.random.RandomState(seed + 7)
        return x * a.randn(3) + b.standard_normal(3) + a.rand(3)
    x = np.arange(3.0)
    with pytest.warns(TranspileWarning, match="RandomState"):
        got = tp.jit(f)(x, 1)
    exactly(got, f(x, 1))


# ---- refusals at the user's line ------------------------------------------------------------

def test_refusals():
    def shuffles(x, rng):
        y = rng.shuffle(x)
        return y
    with pytest.raises(TranspileError, match=r"in place[\s\S]*rng.permutation"):
        tp.jit(shuffles)(np.ones(3), np.random.default_rng(0))

    outside = np.random.default_rng(0)

    def global_rng(x):
        return x * outside.normal(0.0, 1.0, 3)
    with pytest.raises(TranspileError, match="from outside"):
        tp.jit(global_rng)(np.ones(3))

    def state_arg(x, rs):
        return x * rs.normal(0.0, 1.0, 3)
    with pytest.raises(TranspileError, match="RandomState"):
        tp.jit(state_arg)(np.ones(3), np.random.RandomState(0))

    def other_method(x):
        return x * np.random.RandomState(0).tomaxint(3)
    with pytest.raises(TranspileError, match="tomaxint"):
        tp.jit(other_method)(np.ones(3))


def test_a_draw_whose_numbers_are_unused_still_advances_the_stream():
    def f(rng, x):
        a = rng.random(3)
        rng.normal(0.0, 1.0, 2)          # skipped numbers
        return a + rng.random(3) + x

    def g(x, seed):
        rs = np.random.RandomState(seed)
        rs.randn(5)
        return x * rs.randn(3)
    x = np.arange(3.0)
    mine, theirs = np.random.default_rng(8), np.random.default_rng(8)
    exactly(strict(tp.jit(f), mine, x), f(theirs, x))
    assert mine.bit_generator.state == theirs.bit_generator.state
    exactly(strict(tp.jit(g), x, 2), g(x, 2))


def _fisher_yates(rng, a):
    for i in range(a.shape[0] - 1, 0, -1):
        j = rng.integers(0, i + 1)
        a[i], a[j] = a[j], a[i]
    return a


def _walk(rng, n, steps):
    x = np.zeros(n)
    for t in range(steps):
        x += rng.standard_normal(n) * 0.1          # sized by a run-time int
        k = rng.integers(0, t + 1)                 # bounded by one
        x[k % n] += rng.uniform(0.0, t + 1.0)
    return x


def _legacy_draws(seed, n):
    rs = np.random.RandomState(seed)
    out = np.zeros(n)
    for i in range(n):
        out[i] = rs.randint(0, i + 1)
    return out


def test_draws_bounded_by_a_loop_counter_compile():
    import warnings
    from transpile.errors import TranspileWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)   # (the whole function ran in NumPy)
        j = tp.jit(_fisher_yates)
        np.testing.assert_array_equal(j(np.random.default_rng(1), np.arange(9)),
                                      _fisher_yates(np.random.default_rng(1), np.arange(9)))
        assert j.last_tier == "compiled"
        np.testing.assert_allclose(tp.jit(_walk)(np.random.default_rng(3), 5, 10),
                                   _walk(np.random.default_rng(3), 5, 10))
        np.testing.assert_array_equal(tp.jit(_legacy_draws)(3, 7), _legacy_draws(3, 7))
