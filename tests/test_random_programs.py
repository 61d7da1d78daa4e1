"""Differential tests on random NumPy programs (tests/random_programs.py): straight-line code,
branches on data, for/while loops, subscript writes, aliases and views, helper calls.

Every transform is compared with the program itself: jit with NumPy, grad / jvp with central
finite differences in float64 and (for programs without in-place writes) with jax.grad, vmap,
vmap(grad), jit(vmap) and jit(vmap(grad)) with a loop over the batch. A transform may refuse a program only with a
TranspileError that names the user's file; it may never return a wrong number, and jit may not
silently fall back to NumPy.
"""
import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
import random_programs as rp  # noqa: E402

import transpile as tp  # noqa: E402
from transpile.errors import TranspileError, TranspileWarning  # noqa: E402

SETTINGS = settings(max_examples=int(os.environ.get("TP_RANDOM_EXAMPLES", "25")), deadline=None,
                    database=None, derandomize=True, suppress_health_check=list(HealthCheck))
POINT = st.lists(st.floats(-1.5, 1.5), min_size=rp.N, max_size=rp.N).map(np.array)


def _smooth(f, x):
    """Central differences, or None near a kink (abs, maximum, a branch): one-sided differences
    must agree with each other and central differences at two step sizes must agree."""
    g1 = rp.numgrad(f, x, 1e-6)
    g2 = rp.numgrad(f, x, 1e-5)
    fx, eps = f(x), 1e-6
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        if not np.isclose((f(x + e) - fx) / eps, (fx - f(x - e)) / eps, rtol=1e-4, atol=1e-4):
            return None
    return g1 if np.allclose(g1, g2, rtol=1e-5, atol=1e-5) else None


def _run(fn, src):
    """fn() with TranspileWarnings as errors; a refusal must be a TranspileError naming the file."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        try:
            return fn()
        except TranspileError as e:
            assert "tp_random_" in str(e), f"refusal does not name the user's file: {e}\n{src}"
            return None
        except TranspileWarning as w:
            pytest.fail(f"jit fell back to NumPy: {w}\n{src}")


def _check(got, want, src, what, tol):
    if got is None:
        return
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == np.shape(want), f"{what}: shape {got.shape} != {np.shape(want)}\n{src}"
    assert np.allclose(got, want, rtol=tol, atol=tol), f"{what}: {got} != {want}\n{src}"


@SETTINGS
@given(rp.programs(), POINT)
def test_jit_matches_numpy(prog, x):
    src, _ = prog
    f = rp.load(src).f
    want = f(x.copy())
    _check(_run(lambda: tp.jit(f)(x.copy()), src), want, src, "jit", 1e-9)


@SETTINGS
@given(rp.programs(), POINT)
def test_grad_and_jvp_match_finite_differences(prog, x):
    src, _ = prog
    f = rp.load(src).f
    fd = _smooth(lambda z: f(z.copy()), x)
    if fd is None:
        return
    _check(_run(lambda: tp.grad(f)(x.copy()), src), fd, src, "grad", 1e-5)
    t = np.linspace(-1.0, 1.0, rp.N)
    _check(_run(lambda: tp.jvp(f, (x.copy(),), (t,))[1], src), fd @ t, src, "jvp", 1e-5)
    _check(_run(lambda: tp.jit(tp.grad(f))(x.copy()), src), fd, src, "jit(grad)", 1e-5)


@SETTINGS
@given(rp.programs(kinds=("assign", "if", "for", "while", "call")), POINT)
def test_grad_matches_jax(prog, x):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    src, writes = prog
    assert not writes
    f = rp.load(src).f
    if _smooth(lambda z: f(z.copy()), x) is None:
        return
    try:
        jf = rp.load(rp.jax_version(src)).f
        want = np.asarray(jax.grad(jf)(x.copy()))
    except Exception:                  # noqa: BLE001 - data-dependent Python control flow: JAX can't
        return
    _check(_run(lambda: tp.grad(f)(x.copy()), src), want, src, "grad vs jax.grad", 1e-8)


@SETTINGS
@given(rp.programs(), POINT)
def test_vmap_and_vmap_grad_match_a_loop(prog, x):
    src, _ = prog
    f = rp.load(src).f
    xs = np.stack([x, x * 0.5 - 0.1, x[::-1] + 0.3])
    want = np.array([f(r.copy()) for r in xs])
    _check(_run(lambda: tp.vmap(f)(xs.copy()), src), want, src, "vmap", 1e-9)
    _check(_run(lambda: tp.jit(tp.vmap(f))(xs.copy()), src), want, src, "jit(vmap)", 1e-9)
    fds = [_smooth(lambda z: f(z.copy()), r) for r in xs]
    if any(g is None for g in fds):
        return
    _check(_run(lambda: tp.vmap(tp.grad(f))(xs.copy()), src), np.stack(fds), src, "vmap(grad)",
           1e-5)
    _check(_run(lambda: tp.jit(tp.vmap(tp.grad(f)))(xs.copy()), src), np.stack(fds), src,
           "jit(vmap(grad))", 1e-5)
