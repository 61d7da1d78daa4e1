"""Control flow under vmap and its compositions with grad and jit.

Every case is compared with a Python loop over the batch (the definition of vmap), central
finite differences in float64, and an independent AD library (autograd, which runs Python
control flow example by example; JAX's jax.vmap where the program has no branch on data).
"""
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import random_programs as rp
import transpile as tp
from transpile.errors import TranspileWarning

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
autograd = pytest.importorskip("autograd")

# The functions under test, written once and loaded twice: over NumPy (for transpile) and over
# autograd.numpy (the oracle). Each takes one example, a float64 vector of length 3.
SOURCE = '''
import numpy as np


def if_no_else(x):
    y = np.sin(x)
    if np.sum(x) > 0:
        y = y * 2.0
    return np.sum(y * y)


def if_else(x):
    if np.sum(x) > 0.1:
        y = np.sin(x) * x
    else:
        y = np.cos(x) + 1.0
    return np.sum(y)


def if_elif(x):
    s = np.sum(x)
    if s > 1.0:
        y = np.sin(x)
    elif s > -1.0:
        y = np.cos(x) * x
    else:
        y = x * 3.0
    return np.sum(y * x)


def nested_if(x):
    y = x * 1.0
    if np.sum(x) > 0:
        if x[0] > 0.5:
            y = np.tanh(x) * 3.0
        else:
            y = y * y
    return np.sum(y)


def for_carried(x):
    c = x
    for i in range(3):
        c = np.tanh(c * x + 0.5)
    return np.sum(c)


def while_on_data(x):
    c = x * 1.0
    k = 0
    while np.sum(c * c) < 10.0 and k < 6:
        c = c * 1.5 + 0.1
        k = k + 1
    return np.sum(np.sin(c))


def if_in_loop(x):
    c = x
    for i in range(3):
        if np.sum(c) > 0:
            c = c * 0.5 + np.sin(x)
        else:
            c = np.sin(c)
    return np.sum(c * c)


def sqrt_where_positive(x):
    if np.sum(x) > 0:
        y = np.sqrt(x + 2.0)
    else:
        y = x * 2.0
    return np.sum(y)


def break_in_loop(x):
    c = x * 1.0
    for i in range(5):
        if np.sum(c) > 3.0:
            break
        c = c * 1.3 + 0.2
    return np.sum(c * c)


def loop_in_if(x):
    y = x * 1.0
    if np.sum(x) > 0:
        for i in range(2):
            y = np.sin(y) * x
    return np.sum(y)
'''
NAMES = ["if_no_else", "if_else", "if_elif", "nested_if", "for_carried", "while_on_data",
         "if_in_loop", "loop_in_if", "sqrt_where_positive", "break_in_loop"]
NP_MOD = rp.load(SOURCE)
AG_MOD = rp.load(SOURCE.replace("import numpy as np", "import autograd.numpy as np"))

# examples chosen so that the batch takes different branches and trip counts
XS = np.array([[0.3, -0.2, 0.95], [-0.7, -0.45, 0.1], [1.2, 0.8, 0.6], [-1.5, 0.2, -0.9],
               [0.05, 0.01, -0.03]])


def numgrad(f, x, eps=1e-6):
    return rp.numgrad(lambda z: f(z.copy()), x, eps)


def per_example_grads(f):
    return np.stack([numgrad(f, x) for x in XS])


# Under jit every step lowers to Numba (vmap's run-time helpers specialize to array code, or the
# function compiles as one loop over the batch): no NumPy fallback is allowed.
NOT_LOWERED_YET = ()


def tape_fallback_only(caught):
    msgs = [str(w.message) for w in caught if issubclass(w.category, TranspileWarning)]
    others = [m for m in msgs if not any(k in m for k in NOT_LOWERED_YET)]
    assert not others, others


@pytest.mark.parametrize("name", NAMES)
def test_vmap_of_control_flow_matches_a_loop(name):
    f = getattr(NP_MOD, name)
    want = np.array([f(x.copy()) for x in XS])
    np.testing.assert_allclose(tp.vmap(f)(XS.copy()), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_of_grad_with_control_flow(name):
    f, f_ag = getattr(NP_MOD, name), getattr(AG_MOD, name)
    got = tp.vmap(tp.grad(f))(XS.copy())
    np.testing.assert_allclose(got, per_example_grads(f), rtol=1e-5, atol=1e-6)
    oracle = np.stack([autograd.grad(f_ag)(x.copy()) for x in XS])
    np.testing.assert_allclose(got, oracle, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_grad_of_vmap_with_control_flow(name):
    f, f_ag = getattr(NP_MOD, name), getattr(AG_MOD, name)
    batched = tp.vmap(f)

    def total(z):
        return np.sum(batched(z))
    got = tp.grad(total)(XS.copy())
    np.testing.assert_allclose(got, per_example_grads(f), rtol=1e-5, atol=1e-6)
    oracle = np.stack([autograd.grad(f_ag)(x.copy()) for x in XS])
    np.testing.assert_allclose(got, oracle, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_jit_of_vmap_of_grad_with_control_flow(name):
    f, f_ag = getattr(NP_MOD, name), getattr(AG_MOD, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TranspileWarning)
        got = tp.jit(tp.vmap(tp.grad(f)))(XS.copy())
    tape_fallback_only(caught)
    oracle = np.stack([autograd.grad(f_ag)(x.copy()) for x in XS])
    np.testing.assert_allclose(got, oracle, rtol=1e-10, atol=1e-12)


def test_branch_without_else_is_a_select_not_a_loop():
    src = tp.show(tp.vmap(NP_MOD.if_no_else), XS)
    assert "np.where" in src and "for " not in src, src


def test_per_example_gradient_of_a_loop_batches_its_tape():
    # a for loop with unbatched bounds: one tape holding batched values, no loop over the batch
    src = tp.show(tp.vmap(tp.grad(NP_MOD.for_carried)), XS)
    push = re.search(r"tape\w*\.push", src)      # (one tape per pushed name)
    assert push and "batch_size" not in src[:push.start()].split("for")[0]
    assert "loop over the batch" not in src, src


def test_data_dependent_trip_count_under_vmap_of_grad_loops_over_the_batch_visibly():
    # per-example trip counts with a tape: the whole function runs once per example, and the
    # generated source says why and where
    src = tp.show(tp.vmap(tp.grad(NP_MOD.while_on_data)), XS)
    assert "loop over the batch" in src, src
    why = [ln for ln in src.splitlines() if "loop over the batch" in ln][0]
    assert "mapped axis" in why and re.search(r"\(line \d+\)", why), why   # the user's line
    # and the result is right
    np.testing.assert_allclose(tp.vmap(tp.grad(NP_MOD.while_on_data))(XS.copy()),
                               per_example_grads(NP_MOD.while_on_data), rtol=1e-6, atol=1e-8)


def test_vmap_of_grad_float32_keeps_dtype():
    xs = XS.astype(np.float32)
    got = tp.vmap(tp.grad(NP_MOD.if_in_loop))(xs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, per_example_grads(NP_MOD.if_in_loop), rtol=1e-3, atol=1e-4)


def test_in_axes_none_with_branch_on_mapped_data():
    def scaled(w, x):
        if np.sum(x * w) > 0:
            return np.sum(np.sin(x) * w)
        else:
            return np.sum(x * x)
    w = np.array([0.5, -1.0, 2.0])
    got = tp.vmap(tp.grad(scaled), in_axes=(None, 0))(w, XS)
    want = np.stack([numgrad(lambda v: scaled(v, x), w) for x in XS])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---- random programs ---------------------------------------------------------------------------

RNG = np.random.default_rng(7)
BATCH = np.stack([RNG.normal(size=rp.N) for _ in range(3)])


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(prog=rp.programs(), scale=st.sampled_from([0.5, 1.0, 2.0]))
def test_random_programs_under_vmap_and_grad(prog, scale):
    src, writes = prog
    f = rp.load(src).f
    xs = BATCH * scale
    want = np.stack([f(x.copy()) for x in xs])
    np.testing.assert_allclose(tp.vmap(f)(xs.copy()), want, rtol=1e-9, atol=1e-9)
    fd = np.stack([numgrad(f, x) for x in xs])
    fd2 = np.stack([numgrad(f, x, 1e-5) for x in xs])
    if not np.allclose(fd, fd2, rtol=1e-4, atol=1e-4):
        return                      # a kink (abs, maximum, a branch) next to an example
    got = tp.vmap(tp.grad(f))(xs.copy())
    np.testing.assert_allclose(got, fd, rtol=1e-4, atol=1e-4)
    batched = tp.vmap(f)

    def total(z):
        return np.sum(batched(z))
    np.testing.assert_allclose(tp.grad(total)(xs.copy()), got, rtol=1e-9, atol=1e-9)
    if writes:
        return                      # JAX has no in-place writes
    jf = rp.load(rp.jax_version(src)).f
    jax_grads = np.stack([np.asarray(jax.grad(jf)(x)) for x in xs])
    np.testing.assert_allclose(got, jax_grads, rtol=1e-9, atol=1e-9)
    if "if " not in src and "while " not in src:      # jax.vmap cannot branch on data
        np.testing.assert_allclose(got, np.asarray(jax.vmap(jax.grad(jf))(xs)), rtol=1e-9,
                                   atol=1e-9)


def test_while_on_data_runs_masked_not_per_example():
    src = tp.show(tp.vmap(NP_MOD.while_on_data), XS)
    assert "loop over the batch" not in src and "np.where" in src and "rt.batch_any" in src, src
    # trip counts differ across the batch (0 for the examples already past the bound)
    big = np.vstack([XS, np.full((1, 3), 5.0)])
    np.testing.assert_allclose(tp.vmap(NP_MOD.while_on_data)(big),
                               [NP_MOD.while_on_data(x) for x in big], rtol=1e-12)


def test_nested_vmap_of_while_on_data():
    xss = np.stack([XS, XS * 0.5, XS * -1.3])
    got = tp.vmap(tp.vmap(NP_MOD.while_on_data))(xss)
    want = np.array([[NP_MOD.while_on_data(x) for x in xs] for xs in xss])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_of_vmap_never_mixes_in_the_untaken_branch():
    # sqrt(x + 2) is nan for x < -2, where the other branch is taken: a select would
    # evaluate it anyway and 0 * nan = nan would reach the gradient
    xs = np.array([[1.0, 2.0, 0.5], [-1.0, -3.0, -0.5]])
    batched = tp.vmap(NP_MOD.sqrt_where_positive)

    def total(z):
        return np.sum(batched(z))
    with np.errstate(all="ignore"):
        got = tp.grad(total)(xs)
    want = np.stack([autograd.grad(AG_MOD.sqrt_where_positive)(x) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("name", ["if_elif", "for_carried", "while_on_data", "if_in_loop"])
def test_more_compositions_with_control_flow(name):
    f, f_ag = getattr(NP_MOD, name), getattr(AG_MOD, name)
    grads = np.stack([autograd.grad(f_ag)(x.copy()) for x in XS])
    hessians = np.stack([autograd.hessian(f_ag)(x.copy()) for x in XS])
    values, g = tp.vmap(tp.value_and_grad(f))(XS.copy())
    np.testing.assert_allclose(values, [f(x.copy()) for x in XS], rtol=1e-12)
    np.testing.assert_allclose(g, grads, rtol=1e-10, atol=1e-12)
    _, tangent = tp.jvp(tp.vmap(f), (XS.copy(),), (np.ones_like(XS),))
    np.testing.assert_allclose(tangent, grads.sum(axis=1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tp.vmap(tp.vmap(tp.grad(f)))(np.stack([XS, XS * 0.5])),
                               np.stack([grads, [autograd.grad(f_ag)(x * 0.5) for x in XS]]),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tp.vmap(tp.hessian(f))(XS.copy()), hessians, rtol=1e-9,
                               atol=1e-10)
    np.testing.assert_allclose(tp.vmap(tp.jacrev(tp.grad(f)))(XS.copy()), hessians, rtol=1e-9,
                               atol=1e-10)
