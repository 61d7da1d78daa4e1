import warnings

import numpy as np
import pytest

import transpile.random as random

N = 100_000


def test_key_is_uint32_pair():
    k = random.key(0)
    assert k.dtype == np.uint32 and k.shape == (2,)
    np.testing.assert_array_equal(random.key(2**32 + 5), [1, 5])
    np.testing.assert_array_equal(random.PRNGKey(7), random.key(7))
    np.testing.assert_array_equal(random.key(np.int64(7)), random.key(7))
    assert not np.array_equal(random.key(-1), random.key(1))


def test_same_key_same_numbers():
    k = random.key(42)
    np.testing.assert_array_equal(random.normal(k, (50,)), random.normal(k, (50,)))
    np.testing.assert_array_equal(random.uniform(k, (50,)), random.uniform(random.key(42), (50,)))
    np.testing.assert_array_equal(random.split(k, 3), random.split(k, 3))
    np.testing.assert_array_equal(random.fold_in(k, 9), random.fold_in(k, 9))
    np.testing.assert_array_equal(random.permutation(k, 20), random.permutation(k, 20))
    np.testing.assert_array_equal(random.choice(k, 10, (5,)), random.choice(k, 10, (5,)))


def test_key_not_mutated():
    k = random.key(3)
    before = k.copy()
    random.normal(k, (10,))
    random.split(k)
    random.fold_in(k, 1)
    np.testing.assert_array_equal(k, before)


def test_different_keys_differ():
    a = random.normal(random.key(0), (100,))
    b = random.normal(random.key(1), (100,))
    assert not np.any(a == b)


def test_split_shape_and_unpacking():
    k = random.key(0)
    keys = random.split(k, 5)
    assert keys.shape == (5, 2) and keys.dtype == np.uint32
    assert len({tuple(x) for x in keys}) == 5
    k1, k2 = random.split(k)
    assert k1.shape == (2,) and k1.dtype == np.uint32
    assert not np.array_equal(k1, k2) and not np.array_equal(k1, k)
    assert random.split(k, 0).shape == (0, 2)


def test_split_prefix_is_stable():
    # children are a counter-based stream: asking for more keys only appends
    np.testing.assert_array_equal(random.split(random.key(5), 3), random.split(random.key(5), 6)[:3])


def test_split_keys_independent():
    k = random.key(123)
    c1, c2 = random.split(k)
    samples = [random.normal(x, (N,)) for x in (k, c1, c2)]
    corr = np.corrcoef(samples)
    off_diag = corr[~np.eye(3, dtype=bool)]
    assert np.all(np.abs(off_diag) < 0.02)     # ~ 1/sqrt(N) = 0.003 under independence
    for s in samples[1:]:
        assert not np.any(s[:100] == samples[0][:100])


def test_fold_in():
    k = random.key(0)
    folded = np.array([random.fold_in(k, i) for i in range(100)])
    assert folded.dtype == np.uint32 and folded.shape == (100, 2)
    assert len({tuple(x) for x in folded}) == 100
    assert not np.array_equal(random.fold_in(k, 0), k)
    assert not np.array_equal(random.fold_in(random.key(1), 0), random.fold_in(k, 0))
    a, b = random.normal(random.fold_in(k, 0), (N,)), random.normal(random.fold_in(k, 1), (N,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.02


def test_normal_moments():
    x = random.normal(random.key(1), (N,))
    assert x.shape == (N,) and x.dtype == np.float64
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1) < 0.02
    assert abs(np.mean(x**3)) < 0.05               # symmetric
    assert abs(np.mean(x**4) - 3) < 0.1            # Gaussian kurtosis


def test_uniform_moments_and_range():
    x = random.uniform(random.key(2), (N,))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005
    y = random.uniform(random.key(2), (N,), minval=-3.0, maxval=5.0)
    assert y.min() >= -3 and y.max() < 5
    assert abs(y.mean() - 1.0) < 0.05
    hist, _ = np.histogram(y, bins=8, range=(-3, 5))
    assert np.all(np.abs(hist / N - 1 / 8) < 0.01)


def test_uniform_array_bounds():
    lo, hi = np.array([0.0, 10.0]), np.array([1.0, 20.0])
    x = random.uniform(random.key(0), (1000, 2), minval=lo, maxval=hi)
    assert np.all((x >= lo) & (x < hi))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_dtype_preserved(dtype):
    k = random.key(0)
    assert random.normal(k, (3, 4), dtype=dtype).dtype == dtype
    u = random.uniform(k, (1000,), dtype=dtype)
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    assert random.uniform(k, dtype=dtype).shape == ()


def test_scalar_shape_and_int_shape():
    k = random.key(0)
    assert random.normal(k).shape == ()
    assert isinstance(random.normal(k), np.ndarray)
    assert random.normal(k, 5).shape == (5,)
    assert random.uniform(k, (2, 3)).shape == (2, 3)


def test_randint_bounds_and_dtype():
    x = random.randint(random.key(0), (N,), 3, 10)
    assert x.dtype == np.int64
    assert x.min() == 3 and x.max() == 9
    counts = np.bincount(x - 3)
    assert np.all(np.abs(counts / N - 1 / 7) < 0.01)
    y = random.randint(random.key(0), (100,), -5, 5, dtype=np.int8)
    assert y.dtype == np.int8 and y.min() >= -5 and y.max() < 5


def test_permutation():
    k = random.key(0)
    p = random.permutation(k, 100)
    np.testing.assert_array_equal(np.sort(p), np.arange(100))
    assert not np.array_equal(p, np.arange(100))
    x = np.arange(20.0).reshape(10, 2)
    px = random.permutation(k, x)
    assert px.shape == x.shape
    np.testing.assert_array_equal(np.sort(px[:, 0]), x[:, 0])
    np.testing.assert_array_equal(px[:, 1] - px[:, 0], 1)       # rows move whole
    np.testing.assert_array_equal(x, np.arange(20.0).reshape(10, 2))   # input untouched
    assert not np.array_equal(random.permutation(random.key(1), 100), p)


def test_bernoulli():
    b = random.bernoulli(random.key(0), 0.3, (N,))
    assert b.dtype == np.bool_ and b.shape == (N,)
    assert abs(b.mean() - 0.3) < 0.01
    assert random.bernoulli(random.key(0)).shape == ()
    p = np.array([0.0, 1.0, 0.5])
    bp = random.bernoulli(random.key(0), p)
    assert bp.shape == (3,) and not bp[0] and bp[1]
    many = random.bernoulli(random.key(0), p, (N, 3))
    np.testing.assert_allclose(many.mean(axis=0), p, atol=0.01)


def test_choice():
    k = random.key(0)
    c = random.choice(k, 5, (N,))
    assert c.min() == 0 and c.max() == 4
    a = np.array([10.0, 20.0, 30.0])
    w = random.choice(k, a, (N,), p=[0.2, 0.3, 0.5])
    assert w.dtype == a.dtype
    np.testing.assert_allclose([np.mean(w == v) for v in a], [0.2, 0.3, 0.5], atol=0.01)
    no_rep = random.choice(k, 10, (10,), replace=False)
    np.testing.assert_array_equal(np.sort(no_rep), np.arange(10))
    assert random.choice(k, 5).shape == ()


def test_non_key_errors():
    with pytest.raises(TypeError, match="PRNG key.*got int.*key\\(seed\\)"):
        random.normal(0, (3,))
    with pytest.raises(TypeError, match="PRNG key.*got list"):
        random.split([0, 1])
    with pytest.raises(TypeError, match="dtype uint32.*int64"):
        random.uniform(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"shape \(2,\).*got shape \(3,\)"):
        random.fold_in(np.zeros(3, np.uint32), 1)
    with pytest.raises(ValueError, match="batch of keys"):
        random.normal(random.split(random.key(0), 4))


def test_argument_errors():
    k = random.key(0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        random.key(1.5)
    with pytest.raises(TypeError, match="floating dtype"):
        random.normal(k, (2,), dtype=np.int32)
    with pytest.raises(TypeError, match="floating dtype"):
        random.uniform(k, (2,), dtype="not-a-dtype")
    with pytest.raises(TypeError, match="integer dtype"):
        random.randint(k, (2,), 0, 5, dtype=np.float32)
    with pytest.raises(ValueError, match="non-negative"):
        random.normal(k, (-1, 2))
    with pytest.raises(TypeError, match="shape must be a tuple of ints"):
        random.normal(k, (2.5,))
    with pytest.raises(ValueError, match="minval < maxval"):
        random.randint(k, (2,), 5, 5)
    with pytest.raises(ValueError, match="minval < maxval"):
        random.uniform(k, (2,), minval=1.0, maxval=0.0)
    with pytest.raises(ValueError, match="do not fit dtype"):
        random.randint(k, (2,), 0, 1000, dtype=np.int8)
    with pytest.raises(ValueError, match="num must be >= 0"):
        random.split(k, -1)
    with pytest.raises(TypeError, match="data must be an integer"):
        random.fold_in(k, 1.0)
    with pytest.raises(ValueError, match=r"p must lie in \[0, 1\]"):
        random.bernoulli(k, 1.5)
    with pytest.raises(ValueError, match="without replacement"):
        random.choice(k, 3, (5,), replace=False)
    with pytest.raises(ValueError, match="sum to 1"):
        random.choice(k, 3, (5,), p=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="at least one axis"):
        random.permutation(k, np.float64(3.0))


# ---- the generator, and transpile.random inside transformed functions ------------------------

def test_threefry_known_answers():
    # the known-answer vectors published with Random123 (threefry2x32, 20 rounds)
    from transpile_runtime.prng import threefry2x32
    for key, counter, expected in [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
                                   ((0xFFFFFFFF,) * 2, (0xFFFFFFFF,) * 2, (0x1CB996FC, 0xBB002BE7)),
                                   ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3),
                                    (0xC4923A9C, 0x483DF7A0))]:
        assert tuple(int(w) for w in threefry2x32(*key, *counter)) == expected


def draws_everything(key, x, n):
    k = random.split(key, 6)
    return (random.normal(k[0], (2, 3), np.float32),
            random.normal(k[0], x.shape),
            random.uniform(k[1], (4,), np.float32, -2.0, 3.0),
            random.uniform(key),
            random.randint(k[2], (5,), -3, n),
            random.randint(k[2], 3, 0, 100, np.int32),
            random.permutation(k[3], n),
            random.permutation(k[3], x),
            random.bernoulli(k[4], 0.3, (6,)),
            random.bernoulli(k[4], x / 10.0),
            random.choice(k[5], 10, (3,), False),
            random.choice(k[5], x, (2,), True, np.array([0.1, 0.2, 0.3, 0.4])),
            random.choice(k[5], n, (2, 2)),
            random.choice(k[5], x.reshape(2, 2), (2, 3)),
            random.choice(k[5], x),
            random.bernoulli(k[4], 0.25, shape=None),
            random.randint(k[2], (), 0, 9, np.int8),
            random.fold_in(key, n),
            random.normal(random.PRNGKey(n), ()))


def test_jit_compiles_every_function_with_the_same_numbers():
    from transpile import jit
    key, x = random.key(3), np.arange(4.0)
    f = jit(draws_everything)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no NumPy fallback anywhere
        got = f(key, x, 7)
    assert f.last_tier == "compiled"
    assert "prng.split(" in f.source and "prng.normal(" in f.source
    want = draws_everything(key, x, 7)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


def test_jit_with_a_key_made_inside_and_run_time_bounds():
    from transpile import jit

    def f(seed, lo, hi):
        k1, k2 = random.split(random.key(seed))
        return random.uniform(k1, (5,), minval=lo, maxval=hi), random.randint(k2, (4,), lo, hi)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in [(0, -1, 3), (2**40 + 9, 10, 11)]:
            for g, w in zip(jit(f)(*args), f(*args)):
                np.testing.assert_array_equal(g, w)


def test_jit_refuses_what_transpile_random_refuses_at_the_users_line():
    from transpile import jit

    def f(key, lo, hi):
        return random.uniform(key, (3,), minval=lo, maxval=hi)
    with pytest.raises(ValueError, match="minval < maxval") as e:
        jit(f)(random.key(0), 2.0, 1.0)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}:" in str(e.value)


def test_grad_through_noise_drawn_with_a_fixed_key():
    from transpile import grad, jit
    key, x = random.key(5), np.linspace(-1.0, 1.0, 4)

    def loss(x, key):
        return np.sum((x + 0.5 * random.normal(key, x.shape)) ** 2)
    noise = random.normal(key, x.shape)
    expected = 2.0 * (x + 0.5 * noise)                 # d/dx of sum((x + c)^2), c fixed
    np.testing.assert_allclose(grad(loss)(x, key), expected, rtol=1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(jit(grad(loss))(x, key), expected, rtol=1e-13)
    np.testing.assert_allclose(grad(lambda x: np.sum(x + random.uniform(key, (4,))))(x),
                               np.ones(4))


def test_vmap_over_a_batch_of_keys():
    from transpile import jit, vmap
    keys = random.split(random.key(9), 5)

    def draw(k):
        return random.normal(k, (3,)) + random.uniform(random.fold_in(k, 1), (3,))
    expected = np.stack([draw(k) for k in keys])
    np.testing.assert_array_equal(vmap(draw)(keys), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(jit(vmap(draw))(keys), expected)


def walk(key, x, n):
    for i in range(n):
        key, sub = random.split(key)
        x = x + random.normal(sub, x.shape)
    return x, key


def folded(key, x, n):
    s = np.zeros_like(x)
    for i in range(n):
        s = s + random.uniform(random.fold_in(key, i), x.shape, minval=-i, maxval=i + 1.0)
    return s


@pytest.mark.parametrize("fn", [walk, folded])
def test_jit_draws_in_a_loop_with_a_carried_key_or_the_loop_index(fn):
    from transpile import jit
    key, x = random.key(4), np.arange(3.0)
    f = jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (0, 1, 4):                      # n, and the loop index, known at run time
            got, want = f(key, x, n), fn(key, x, n)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_array_equal(g, w)
            assert f.last_tier == "compiled"


def test_jit_bounds_known_at_run_time_are_checked_against_the_dtype():
    from transpile import jit

    def f(key, hi):
        return random.randint(key, (4,), 0, hi, np.int8)
    j = jit(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(j(random.key(0), 100), f(random.key(0), 100))
        assert j.last_tier == "compiled"
        with pytest.raises(ValueError, match=r"bounds \[0, 1000\) do not fit dtype int8"):
            j(random.key(0), 1000)                # not wrapped around into int8
