"""The foreign-style corpus (tests/foreign_kernels.py) under jit, grad and jit(grad).

jit: each kernel runs twice under `jit` (a compile, then the cached signature) on fresh
arguments and once as plain NumPy; the results and everything left in the arguments must be
equal: exactly for integers and booleans (dtype kind included), within 1e-9 for floats. A
TranspileWarning (jit falling back to NumPy) is an error.

grad: where a kernel is differentiable, its scalar wrapper's gradient under `grad` and
`jit(grad)` must match central finite differences in float64.

Kernels the compiler does not handle yet are marked xfail(strict=True) with the error they give
now (XFAIL_JIT / XFAIL_GRAD below): once fixed they fail as XPASS and must be un-marked.
"""
import warnings

import numpy as np
import pytest

import foreign_kernels as fk
from fd_helpers import numgrad
from transpile import grad, jit
from transpile.errors import TranspileError, TranspileWarning

# kernel name -> (exception type, the current error), from devtools/foreign_kernels_status.py
# on the lead's compiler; regenerate (and un-mark what passes) after each compiler change
XFAIL_JIT = {
    "heat_swap": (TranspileError, "TranspileError: foreign_kernels.py:104: 'un' is written into in this loop and ends the body holding the array 'u' held at its start, which another name (or the caller) also holds: the transforms cannot follow which buffer each name holds from one iteration to the next"),
    # a dict used as a counter with keys known only at run time (session python)
    "dict_counts": (TranspileError, "dict.get(key[, default]) needs a key known when the code is generated"),
}
# (transform, kernel name) -> (exception type, the current error)
# (jit(grad) of sir_euler compiles since its adjoint resets of run-time shape became
# broadcastable zeros: optimize/specialize_control.py zero_tolerant)
XFAIL_GRAD = {}


def _params(names_to_xfail, kernels, transform=None):
    out = []
    for k in kernels:
        key = k.name if transform is None else (transform, k.name)
        if key in names_to_xfail:
            exc, reason = names_to_xfail[key]
            out.append(pytest.param(k, id=k.name, marks=pytest.mark.xfail(
                strict=True, raises=exc, reason=reason)))
        else:
            out.append(pytest.param(k, id=k.name))
    return out


def same(got, want, where="result"):
    """got equals want: structure, dtype kind, shape; exact for ints/bools, close for floats."""
    if want is None:
        assert got is None, f"{where}: expected None, got {type(got).__name__}"
        return
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{where}: expected a sequence, got {got!r}"
        assert len(got) == len(want), f"{where}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys differ"
        for key in want:
            same(got[key], want[key], f"{where}[{key!r}]")
        return
    if isinstance(want, str):
        assert got == want, f"{where}: {got!r} != {want!r}"
        return
    if isinstance(want, np.random.Generator):
        assert isinstance(got, np.random.Generator), f"{where}: not a Generator"
        assert got.bit_generator.state == want.bit_generator.state, \
            f"{where}: the generator's state differs (draws consumed differently)"
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{where}: shape {g.shape} != {w.shape}"
    assert g.dtype.kind == w.dtype.kind, f"{where}: dtype {g.dtype} != {w.dtype}"
    if isinstance(want, np.ndarray):
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype} != {w.dtype}"
    if w.dtype.kind in "biu":
        assert np.array_equal(g, w), f"{where}: {g} != {w}"
    else:
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, err_msg=where)


def _strict(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return fn(*args)


@pytest.mark.parametrize("k", _params(XFAIL_JIT, fk.KERNELS))
def test_jit_matches_numpy(k):
    compiled = jit(k.fn)
    for attempt in ("first call", "cached call"):
        want_args = k.args(k.size)
        want = k.fn(*want_args)
        got_args = k.args(k.size)
        got = _strict(compiled, *got_args)
        same(got, want, f"{k.name} {attempt}: result")
        for i, (g, w) in enumerate(zip(got_args, want_args)):
            same(g, w, f"{k.name} {attempt}: argument {i} after the call")


DIFFERENTIABLE = [k for k in fk.KERNELS if k.loss is not None]


def _fd(k):
    args = list(k.args(k.size))

    def along(z):
        a = list(k.args(k.size))
        a[k.wrt] = z
        return k.loss(*a)
    return args, numgrad(along, args[k.wrt])


def _check_grad(k, transform):
    args, want = _fd(k)
    g = grad(k.loss, argnums=k.wrt)
    fn = g if transform == "grad" else jit(g)
    got = _strict(fn, *args)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                               err_msg=f"{transform}({k.loss.__name__})")


@pytest.mark.parametrize("k", _params(XFAIL_GRAD, DIFFERENTIABLE, "grad"))
def test_grad_matches_finite_differences(k):
    _check_grad(k, "grad")


@pytest.mark.parametrize("k", _params(XFAIL_GRAD, DIFFERENTIABLE, "jit(grad)"))
def test_jit_grad_matches_finite_differences(k):
    _check_grad(k, "jit(grad)")


def test_corpus_is_big_and_checks_what_it_claims():
    """At least 45 kernels, each with fresh deterministic arguments from its factory."""
    assert len(fk.KERNELS) >= 45
    assert len(fk.BY_NAME) == len(fk.KERNELS)
    for k in fk.KERNELS:
        a, b = k.args(k.size), k.args(k.size)
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                assert x is not y and np.array_equal(x, y), k.name
    # the comparison is not vacuous: a wrong float, int or argument write is caught
    with pytest.raises(AssertionError):
        same(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-6]))
    with pytest.raises(AssertionError):
        same(np.array([1, 2]), np.array([1.0, 2.0]))
    with pytest.raises(AssertionError):
        same(None, np.zeros(2))
