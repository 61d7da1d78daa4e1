"""vmap regressions: each case is compared with a Python loop over the batch of the
untransformed function (the definition of vmap), in float64 and, for dtypes, float32;
derivatives with central finite differences (tests/fd.py)."""
import math
import warnings

import numpy as np
import pytest

import transpile as tp
from fd import numerical_grad
from transpile.errors import TranspileError

X = np.array([[1.0, 2.0, -0.5], [-1.0, 0.5, 0.2], [0.3, -0.1, 2.0]])


def per_example(f, xs):
    return np.stack([np.asarray(f(x.copy())) for x in xs])


def quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# -- 1. an `if` on batched data whose sides give a name different per-example shapes -------

def scalar_or_outer(x):
    y = 1.0
    if x[0] > 0:
        y = np.outer(x, x)
    return np.sum(y) + x[1]


def scalar_or_slice(x):
    if x[0] > 0:
        y = x[0]
    else:
        y = x[1:]
    return np.sum(y) * x


def zero_or_array(x):
    if x[0] > 0:
        y = 0.0
    else:
        y = x
    return np.sum(y * x)


def one_or_short(x):
    y = 1.0
    if x[0] > 0:
        y = x[:1] * 2
    return np.sum(y + x)


@pytest.mark.parametrize("f", [scalar_or_outer, scalar_or_slice, zero_or_array, one_or_short])
def test_if_sides_of_different_shapes(f):
    want = per_example(f, X)
    np.testing.assert_allclose(tp.vmap(f)(X), want, rtol=1e-12)
    np.testing.assert_allclose(quiet(lambda: tp.jit(tp.vmap(f))(X)), want, rtol=1e-12)


@pytest.mark.parametrize("f", [scalar_or_outer, zero_or_array, one_or_short])
def test_value_and_grad_of_vmap_if_sides_of_different_shapes(f):
    def total(z):
        return np.sum(tp.vmap(f)(z))
    v, g = tp.value_and_grad(total)(X)
    assert np.isclose(v, sum(f(x) for x in X))
    np.testing.assert_allclose(g, numerical_grad(lambda z: sum(f(x) for x in z), [X]),
                               atol=1e-6)


def test_grad_of_vmap_ragged_values_refused_with_line():
    def f(x):
        if x[0] > 0:
            y = x[0]
        else:
            y = x[1:]
        return np.sum(y) * x[2]
    with pytest.raises(ValueError, match=r"test_vmap_regressions.py:\d+: the examples give"):
        tp.grad(lambda z: np.sum(tp.vmap(f)(z)))(X)


@pytest.mark.parametrize("f", [scalar_or_outer, zero_or_array])
def test_vmap_hessian_if_sides_of_different_shapes(f):
    want = np.stack([numerical_grad(lambda z, i=i: numerical_grad(f, [z], eps=1e-5)[i], [x],
                                    eps=1e-5) for x in X for i in range(3)]).reshape(3, 3, 3)
    np.testing.assert_allclose(tp.vmap(tp.hessian(f))(X), want, atol=1e-4)


def test_vmap_jacobians_if_sides_of_different_shapes():
    want = np.stack([np.stack([numerical_grad(lambda z, i=i: scalar_or_slice(z)[i], [x])
                               for i in range(3)]) for x in X])
    np.testing.assert_allclose(tp.vmap(tp.jacrev(scalar_or_slice))(X), want, atol=1e-6)
    np.testing.assert_allclose(tp.vmap(tp.jacfwd(scalar_or_slice))(X), want, atol=1e-6)


# -- 2. float32 stays float32 ----------------------------------------------------------------

def sum_of_positive_squares(x):
    acc = 0.0
    for v in x:
        if v > 0:
            acc = acc + v ** 2
    return acc


def while_with_return(x):
    k = 0
    v = x[0]
    while k < 10:
        v = v * 1.3 + x[1]
        if v > 3.0:
            return v * x[2]
        k += 1
    return v


def int_or_float_factor(x):
    if x[0] > 0:
        c = 1
    else:
        c = 2.5
    return x * c


@pytest.mark.parametrize("f", [sum_of_positive_squares, while_with_return,
                               int_or_float_factor])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_as_per_example(f, dtype):
    xs = np.array([[0.3, 1.2, -0.7], [1.0, 0.1, 0.2]], dtype=dtype)
    want = per_example(f, xs)
    for fn in (tp.vmap(f), tp.jit(tp.vmap(f))):
        got = quiet(lambda: fn(xs))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_inexact_constant_keeps_float64():
    def f(x):
        acc = 0.1
        for v in x:
            if v > 0:
                acc = acc + v
        return acc
    xs = np.array([[0.3, 1.2], [1.0, -0.1]], dtype=np.float32)
    np.testing.assert_allclose(tp.vmap(f)(xs), per_example(f, xs), rtol=1e-6)


# -- 3. `and` in a while condition short-circuits --------------------------------------------

def count_positive_prefix(x):
    i = 0
    while i < x.shape[0] and x[i] > 0.0:
        i += 1
    return np.sum(x ** 2) * i


def count_positive_prefix_or(x):
    i = 0
    while not (i >= x.shape[0] or x[i] <= 0.0):
        i += 1
    return np.sum(x ** 2) * i


@pytest.mark.parametrize("f", [count_positive_prefix, count_positive_prefix_or])
def test_while_short_circuit(f):
    xs = np.array([[1.0, -1.0, 2.0], [1.0, 2.0, 3.0]])
    want = per_example(f, xs)
    np.testing.assert_allclose(tp.vmap(f)(xs), want)
    np.testing.assert_allclose(quiet(lambda: tp.jit(tp.vmap(f))(xs)), want)
    grads = np.stack([numerical_grad(f, [x]) for x in xs])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(xs), grads, atol=1e-6)
    np.testing.assert_allclose(tp.grad(f)(xs[1]), grads[1], atol=1e-6)


# -- 4. jit(vmap) of a while nested in a for that runs zero times for one example ----------

def nested_while(x):
    s = 0.0
    for i in range(x.shape[0]):
        t = np.abs(x[i])
        while t < 2.0:
            t = t * 1.5 + 0.1
            s = s + t * x[i]
    return s


def test_jit_vmap_nested_while_zero_trips():
    xs = np.array([[0.3, 2.5], [1.0, 0.1]])
    want = per_example(nested_while, xs)
    np.testing.assert_allclose(tp.vmap(nested_while)(xs), want, rtol=1e-12)
    np.testing.assert_allclose(quiet(lambda: tp.jit(tp.vmap(nested_while))(xs)), want,
                               rtol=1e-12)


# -- 5. jacobians of a tuple output inside vmap: a clear refusal -----------------------------

def test_vmap_jacobian_of_tuple_output_matches_jax():
    # (refused once: "needs a function with one array output"; a tuple output's Jacobian is
    # a tuple of Jacobians, as in JAX)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)

    def f(x):
        return x[0] * x[1], x * 2.0
    for jac, jjac in ((tp.jacrev, jax.jacrev), (tp.jacfwd, jax.jacfwd)):
        got = tp.vmap(jac(f))(X[:, :2])
        want = jax.vmap(jjac(f))(X[:, :2])
        assert len(got) == len(want) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)


# -- 6. second derivatives of a vmap that fell back to a loop over the batch -----------------

def cubes_above_half(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc = acc + x[i] ** 3
    return acc


def branch_on_first(x):
    if x[0] > 0.5:
        return np.sum(x ** 3)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [cubes_above_half, branch_on_first])
def test_hessian_of_sum_of_vmap(f):
    xs = np.array([[0.3, 1.2], [1.0, 0.1]])

    def total(z):
        return np.sum(tp.vmap(f)(z))

    def grad_total(z):
        return numerical_grad(lambda w: sum(f(x) for x in w), [z], eps=1e-5)
    want = np.stack([numerical_grad(lambda z, k=k: grad_total(z).reshape(-1)[k], [xs],
                                    eps=1e-5).reshape(-1) for k in range(4)])
    np.testing.assert_allclose(tp.hessian(total)(xs).reshape(4, 4), want, atol=1e-4)


def test_grad_of_grad_of_sum_of_vmap():
    xs = np.array([[0.3, 1.2], [1.0, 0.1]])

    def total(z):
        return np.sum(tp.vmap(cubes_above_half)(z))

    def grad_total(z):
        return numerical_grad(lambda w: sum(cubes_above_half(x) for x in w), [z], eps=1e-5)
    got = tp.grad(lambda z: np.sum(tp.grad(total)(z) ** 2))(xs)
    want = numerical_grad(lambda z: np.sum(grad_total(z) ** 2), [xs], eps=1e-4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# -- 7. effects under an untaken branch ------------------------------------------------------

def test_print_only_where_taken(capsys):
    def f(x):
        if x > 100.0:
            print("big", x)
        return x * 2.0

    def g(a):
        acc = 0.0
        while acc < 2.0:
            acc = acc + a
            print("acc", acc)
        return acc
    np.testing.assert_allclose(tp.vmap(f)(np.array([1.0, 200.0])), [2.0, 400.0])
    assert capsys.readouterr().out.strip() == "big 200.0"
    tp.vmap(tp.grad(f))(np.array([1.0, 2.0]))
    assert "big" not in capsys.readouterr().out
    tp.vmap(g)(np.array([0.5, 1.5]))
    got = capsys.readouterr().out.split()
    for a in (0.5, 1.5):
        g(a)
    assert got == capsys.readouterr().out.split()


def test_breakpoint_untaken_under_vmap_grad(monkeypatch):
    import sys
    hits = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: hits.append(1))

    def f(x):
        if np.sum(x) > 100.0:
            breakpoint()
        return np.sum(x ** 2)
    xs = np.ones((2, 3))
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(xs), 2 * xs)
    assert hits == []


def nonzero_gather(x):
    idx = np.nonzero(x > 0.5)[0]
    return idx, x[idx]


def test_data_dependent_lengths_that_agree_across_examples_stack():
    """np.nonzero / np.argwhere per example (its rank is 2, it was taken for 0 and the
    gather x[idx] then failed with NumPy's IndexError); lengths that differ are refused."""
    Xs = np.array([[0.1, 0.7, 0.9], [0.6, 0.2, 0.8], [0.8, 0.1, 0.6]])
    idx, vals = tp.vmap(nonzero_gather)(Xs)
    want = [nonzero_gather(r) for r in Xs]
    np.testing.assert_array_equal(idx, np.stack([w[0] for w in want]))
    np.testing.assert_array_equal(vals, np.stack([w[1] for w in want]))
    assert idx.dtype == want[0][0].dtype
    np.testing.assert_array_equal(tp.vmap(lambda x: np.argwhere(x.reshape(1, 3) > 0.5))(Xs),
                                  np.stack([np.argwhere(r.reshape(1, 3) > 0.5) for r in Xs]))
    with pytest.raises(ValueError, match="different shapes"):
        tp.vmap(nonzero_gather)(np.array([[0.1, 0.7, 0.9], [0.6, 0.2, 0.3]]))


def grow_append(x):
    out = np.empty(0)
    for v in x:
        if v > 0.3:
            out = np.append(out, v * 2)
    return out


def joins_under_a_branch(x):
    out = x[:1] * 1.0
    if x[0] > 0.3:
        out = np.concatenate([out, x[1:2]])
    else:
        out = np.concatenate([x[2:3], out * 2])
    return np.sum(out * out) + out


def test_a_branch_that_changes_a_length_is_never_broadcast():
    """Both sides of an `if` on the data are computed for every example and selected with
    np.where: a side one element longer was broadcast against an empty one, and vmap
    returned [] (silently). Now the shapes are checked; sides of equal shapes still select."""
    Xs = np.array([[0.1, 0.5, 0.9], [0.6, 0.2, 0.9]])
    with pytest.raises(ValueError, match=r"shapes \(1,\) and \(0,\) per example"):
        tp.vmap(grow_append)(Xs)
    with pytest.raises(ValueError, match=r"shapes"):
        quiet(lambda: tp.jit(tp.vmap(grow_append))(Xs))
    np.testing.assert_allclose(tp.vmap(joins_under_a_branch)(Xs),
                               per_example(joins_under_a_branch, Xs), rtol=1e-14)
    loss = lambda x: np.sum(joins_under_a_branch(x) ** 2)
    np.testing.assert_allclose(tp.vmap(tp.grad(loss))(Xs),
                               np.stack([numerical_grad(loss, [r]) for r in Xs]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tp.grad(lambda X: np.sum(tp.vmap(joins_under_a_branch)(X)))(Xs),
                               numerical_grad(lambda X: np.sum(per_example(
                                   joins_under_a_branch, X)), [Xs]), rtol=1e-6, atol=1e-8)


def rows_then_element_writes(x):
    rows = []
    for i in range(4):              # unrolled (appends under an if); i ends at 3
        if x[i] > 0.5:
            rows.append(x * x[i])
    t1 = x + (rows[0] if rows else x)
    t2 = x * 1.0
    for i in range(4):              # the same name as a compiled loop's index
        t2[i] = t2[i] * t1[i]
    return np.sum(t2)


def test_jit_of_vmap_reads_a_loop_index_named_like_an_unrolled_loops():
    """jit's specializer kept the unrolled loop's last index (3) as a constant for the name
    and substituted it inside the second loop, which then wrote t2[3] four times."""
    x = np.array([-0.159, 0.541, 0.215, 0.355])
    Xs = np.stack([x, x * 0.5 - 0.1, x + 0.3])
    want = per_example(rows_then_element_writes, Xs)
    np.testing.assert_allclose(quiet(lambda: tp.jit(tp.vmap(rows_then_element_writes))(Xs)),
                               want, rtol=1e-12)
    np.testing.assert_allclose(tp.jit(rows_then_element_writes, wait=True)(x),
                               rows_then_element_writes(x), rtol=1e-12)


# -- in_axes with one entry per argument passed (JAX's rule) ----------------------------------
# vmap(f, in_axes=(0,)) of f(a, x0=1.0) was refused ("in_axes has 1 entries but f takes 2
# arguments"); JAX counts the arguments the caller passes, and the others keep their defaults.

def newton_sqrt(a, x0=1.0, iters=20):
    x = x0
    for _ in range(iters):
        x = x - (x * x - a) / (2 * x)
    return x


def weighted_norm(x, w, p=2.0):
    return np.sum(np.abs(x * w) ** p)


def test_in_axes_counts_the_arguments_passed():
    vmap, jit = tp.vmap, tp.jit
    a = np.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(vmap(newton_sqrt, in_axes=(0,))(a), np.sqrt(a), rtol=1e-12)
    np.testing.assert_allclose(jit(vmap(newton_sqrt, in_axes=(0,)), wait=True)(a), np.sqrt(a),
                               rtol=1e-12)
    X = np.random.default_rng(0).random((4, 3))
    w = np.array([1.0, 0.5, 2.0])
    np.testing.assert_allclose(vmap(weighted_norm, in_axes=(0, None))(X, w),
                               [weighted_norm(r, w) for r in X], rtol=1e-12)
    with pytest.raises(ValueError, match="also passes 'p' of weighted_norm"):
        vmap(weighted_norm, in_axes=(0, None))(X, w, 3.0)
    with pytest.raises(ValueError, match="has 1 entries but weighted_norm takes 3"):
        vmap(weighted_norm, in_axes=(0,))


# jit(vmap(f)) of f with a defaulted scalar parameter ran the batched code in NumPy (a
# segment break: "batch_axes(...) (unknown result shape)"): jit did not tell vmap the ranks
# where a parameter has a default. A defaulted parameter whose leaves are scalars is now taken
# as not mapped, and vmap picks its batching rules.

def cube_root(a, x0=1.0):
    x = x0
    while abs(x ** 3 - a) > 1e-9:
        x = x - (x ** 3 - a) / (3.0 * x ** 2)
    return x


def p_norm(x, p=3.0):
    return np.sum(np.abs(x) ** p) ** (1.0 / p)


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")
def test_jit_of_vmap_with_a_defaulted_scalar_parameter_compiles():
    A = np.array([2.0, 5.0, 27.0])
    np.testing.assert_allclose(tp.jit(tp.vmap(cube_root), wait=True)(A),
                               [cube_root(a) for a in A], rtol=1e-12)
    X = np.arange(6.0).reshape(2, 3) - 2.5
    np.testing.assert_allclose(tp.jit(tp.vmap(p_norm), wait=True)(X), [p_norm(r) for r in X],
                               rtol=1e-12)
    np.testing.assert_allclose(tp.jit(tp.vmap(p_norm, in_axes=(0, None)), wait=True)(X, 1.5),
                               [p_norm(r, 1.5) for r in X], rtol=1e-12)
    g = tp.jit(tp.vmap(tp.grad(p_norm)), wait=True)(X)
    np.testing.assert_allclose(g, np.stack([numerical_grad(p_norm, [r]) for r in X]),
                               rtol=1e-6, atol=1e-8)


# a while loop whose condition short-circuits (`a and b`) on batched values, inside a for
# loop: the per-example branch that computes the condition lost the condition itself (vmap:
# NameError in the generated code; jit(vmap): Numba's "liveness info missing")

def pop_while_and(x):
    k = 0
    for i in range(x.shape[0]):
        while k > 0 and x[i] < 0.0:
            k -= 1
        k += 1
    return k * 1.0


def running_max_by_deque(x, w=2):
    out = np.zeros(x.shape[0])
    q = np.zeros(x.shape[0], dtype=np.int64)
    head = 0
    tail = 0
    for i in range(x.shape[0]):
        while tail > head and x[q[tail - 1]] <= x[i]:
            tail -= 1
        q[tail] = i
        tail += 1
        if q[head] <= i - w:
            head += 1
        out[i] = x[q[head]]
    return out


@pytest.mark.parametrize("f", [pop_while_and, running_max_by_deque], ids=lambda f: f.__name__)
def test_vmap_of_a_short_circuit_while_in_a_loop(f):
    xs = np.random.default_rng(2).normal(size=(5, 6)) * 3
    want = per_example(f, xs)
    np.testing.assert_array_equal(tp.vmap(f)(xs), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # compiled, no NumPy fallback
        np.testing.assert_array_equal(tp.jit(tp.vmap(f), wait=True)(xs), want)


# math.floor / math.ceil / math.trunc of a value that differs per example: the generated
# code called math.floor on the whole batch (TypeError); now np.floor of it, as int64

def times_floor(x):
    return x * math.floor(x) + math.ceil(-x) - math.trunc(x)


def bilinear_lookup(img, xs):
    out = np.zeros(xs.shape[0])
    for k in range(xs.shape[0]):
        i = int(math.floor(xs[k]))
        t = xs[k] - i
        out[k] = (1 - t) * img[i] + t * img[i + 1]
    return out


def test_vmap_of_math_floor():
    xs = np.array([0.5, 1.5, -2.5, 3.0, -0.25])
    want = per_example(times_floor, xs)
    np.testing.assert_array_equal(tp.vmap(times_floor)(xs), want)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(tp.jit(tp.vmap(times_floor), wait=True)(xs), want)
    np.testing.assert_array_equal(tp.vmap(tp.grad(times_floor))(xs), np.floor(xs))
    img = np.arange(6.0) ** 2
    X = np.array([[0.5, 1.2], [2.7, 3.1], [4.0, 0.0]])
    want = np.stack([bilinear_lookup(img, x) for x in X])
    np.testing.assert_allclose(tp.vmap(bilinear_lookup, in_axes=(None, 0))(img, X), want,
                               rtol=1e-15)


def flat_sort_loss(x):
    return np.sum(np.sort(x, axis=None) * np.arange(1.0, 7.0))


def test_vmap_of_a_sort_of_every_element():
    # np.sort(x, axis=None) is 1-D: vmap took it for x's rank (AxisError)
    X = np.random.default_rng(2).standard_normal((3, 2, 3))
    np.testing.assert_allclose(tp.vmap(flat_sort_loss)(X), [flat_sort_loss(x) for x in X],
                               rtol=1e-12)


def weighted_args(*args):
    return sum(a * (i + 1) for i, a in enumerate(args))


def test_in_axes_of_a_star_args_function_has_one_entry_per_argument_passed():
    # (refused: "in_axes has 3 entries but weighted_args takes 1 argument")
    X = np.arange(12.0).reshape(4, 3)
    x = np.arange(3.0)
    got = tp.vmap(weighted_args, in_axes=(0, None, 1))(X, x, X.T)
    np.testing.assert_allclose(got, [weighted_args(X[i], x, X[i]) for i in range(4)])
    g = tp.vmap(tp.grad(lambda *a: np.sum(weighted_args(*a) ** 2)), in_axes=(0, None))(X, x)
    np.testing.assert_allclose(g, [2 * (X[i] + 2 * x) for i in range(4)])
    with pytest.raises(ValueError, match="one per argument passed"):
        tp.vmap(weighted_args, in_axes=(0, None))(X, x, X)


def test_vmap_of_nancumsum_over_the_whole_array_flattens_each_example():
    # (AxisError: the axis=None form was batched as a reduction along axis 1)
    xs = np.random.default_rng(3).normal(size=(3, 2, 3))
    xs[0, 1, 2] = np.nan
    f = lambda x: np.sum(np.nancumsum(x) * np.arange(6.0))      # noqa: E731
    np.testing.assert_allclose(tp.vmap(lambda x: np.nancumsum(x))(xs),
                               [np.nancumsum(x) for x in xs])
    np.testing.assert_allclose(tp.vmap(tp.grad(f))(xs), [tp.grad(f)(x) for x in xs])
