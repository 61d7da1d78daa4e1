"""The primitive sweep: every row of the primitive table, in every mode.

For each case of tests/sweep_cases.py (and tests/sweep_cases_*.py): grad (reverse mode)
against central differences in float64, jvp (forward mode) against a directional difference,
a second derivative (grad of a directional first derivative) against differences of the first,
vmap against a Python loop (of the function and of its gradient), and jit against eager
(no NumPy fallback allowed, except rows listed in JIT_FALLBACK, which must warn). float32
inputs must give float32 gradients; complex inputs follow JAX's convention
(grad of a real f(z) = df/dx - i df/dy).

test_every_row_has_a_case fails when a row of the table has no case (or a mode is skipped
without a reason), so a new row is swept the moment it is added.
"""
import glob
import importlib
import os
import warnings

import numpy as np
import pytest

import transpile
from transpile import grad, jit, jvp, value_and_grad, vmap
from transpile.errors import TranspileWarning
from transpile.primitives import all_primitives

import sweep_cases as SC

for _f in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "sweep_cases_*.py"))):
    importlib.import_module(os.path.basename(_f)[:-3])   # more cases (e.g. scipy rows)

EPS = 1e-6


def _inputs(c, dtype, seed=0):
    rng = np.random.default_rng(1000 + c.index + seed)
    out = []
    for s in c.shapes:
        n = int(np.prod(s)) if s else 1
        if c.domain == "pos":
            v = rng.uniform(0.5, 2.0, n)
        elif c.domain == "unit":
            v = rng.uniform(-0.8, 0.8, n)
        elif c.domain == "prob":
            v = rng.uniform(0.15, 0.85, n)
        elif c.domain == "gt1":
            v = rng.uniform(1.2, 2.5, n)
        elif c.domain == "distinct":
            v = (rng.permutation(n) - n / 2) * 0.37 + rng.uniform(-0.05, 0.05, n) + 0.05
        else:
            v = rng.normal(size=n) * 0.7
        if dtype == "complex128":
            v = v + 1j * rng.normal(size=n) * 0.5
        v = np.reshape(v, s).astype(dtype)
        out.append(v[()] if s == () else v)
    return out


def _weights(c, args):
    out = np.asarray(c.fn()(*args))
    rng = np.random.default_rng(7 + c.index)
    return rng.normal(size=out.shape)


def _fd_grad(f, args, i):
    """Central-difference gradient of the real scalar f with respect to args[i]."""
    x = np.asarray(args[i])
    g = np.zeros(x.shape, dtype=x.dtype)
    parts = [1.0] + ([1j] if np.iscomplexobj(x) else [])
    for idx in np.ndindex(*x.shape):
        for p in parts:
            e = np.zeros(x.shape, dtype=x.dtype)
            e[idx] = p * EPS
            a1 = list(args); a1[i] = (x + e)[()] if x.shape == () else x + e
            a2 = list(args); a2[i] = (x - e)[()] if x.shape == () else x - e
            d = (float(f(*a1)) - float(f(*a2))) / (2 * EPS)
            g[idx] += d if p == 1.0 else -1j * d
    return g


def _close(a, b, tol):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _modes(c):
    """jit (a Numba compile, the slow mode) runs on the first case of each row only."""
    first = next(k for k in SC.CASES if k.prim == c.prim)
    return [m for m in SC.MODES if m != "jit" or c is first or c.jit_always]


def _cases():
    out = []
    for c in SC.CASES:
        for mode in _modes(c):
            for dt in c.dtypes:
                if dt != "float64" and mode not in ("grad",):
                    continue
                out.append(pytest.param(c, mode, dt, id=f"{c.id}-{mode}-{dt}"))
    return out


def _strict():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", TranspileWarning)
    return ctx


@pytest.mark.parametrize("c,mode,dtype", _cases())
def test_sweep(c, mode, dtype):
    if mode in c.skip:
        pytest.skip(c.skip[mode])
    tol = c.tol or (2e-3 if dtype == "float32" else 1e-5)
    args64 = _inputs(c, "complex128" if dtype == "complex128" else "float64")
    w = _weights(c, args64)
    loss = c.loss()
    fn = c.fn()
    ctx = _strict()
    try:
        if mode == "grad":
            args = [np.asarray(a).astype(dtype)[()] for a in args64]
            for i in range(len(args)):
                g = grad(loss, argnums=i)(*args, w)
                want = _fd_grad(loss, args64 + [w], i)
                _close(g, want, tol)
                if dtype == "float32":
                    assert np.asarray(g).dtype == np.float32, "float32 in, float32 gradient out"
        elif mode == "jvp":
            rng = np.random.default_rng(3)
            tans = [np.asarray(rng.normal(size=np.shape(a)))[()] for a in args64]
            out, tan = jvp(fn, tuple(args64), tuple(tans))
            _close(out, fn(*args64), 1e-12)
            plus = fn(*[a + EPS * t for a, t in zip(args64, tans)])
            minus = fn(*[a - EPS * t for a, t in zip(args64, tans)])
            _close(tan, (np.asarray(plus) - np.asarray(minus)) / (2 * EPS), tol)
        elif mode == "second":
            rng = np.random.default_rng(5)
            v = rng.normal(size=np.shape(args64[0]))
            h = c.second()
            _close(grad(h)(*args64, w, v), _fd_grad(h, args64 + [w, v], 0), max(tol, 1e-4))
        elif mode == "vmap":
            batch = [np.stack([a, _inputs(c, "float64", seed=1)[i]])
                     for i, a in enumerate(args64)]
            got = vmap(fn)(*batch)
            _close(got, np.stack([fn(*[b[k] for b in batch]) for k in range(2)]), 1e-10)
            gl = vmap(grad(loss), in_axes=tuple([0] * len(batch) + [None]))(*batch, w)
            want = np.stack([grad(loss)(*[b[k] for b in batch], w) for k in range(2)])
            _close(gl, want, 1e-10)
        elif mode == "jit":
            # one compile checks both: the loss value reads every output of the case
            # (random weights) and the gradient runs its derivative rules
            expect_fallback = c.prim in SC.JIT_FALLBACK
            if expect_fallback:
                warnings.simplefilter("always", TranspileWarning)
            with warnings.catch_warnings(record=True) as seen:
                if expect_fallback:
                    warnings.simplefilter("always", TranspileWarning)
                got = jit(value_and_grad(loss, argnums=tuple(range(len(args64)))))(*args64, w)
            want = value_and_grad(loss, argnums=tuple(range(len(args64))))(*args64, w)
            _close(got[0], want[0], 1e-10)
            for a, b in zip(got[1], want[1]):
                _close(a, b, 1e-10)
            if expect_fallback:
                assert any(issubclass(m.category, TranspileWarning) for m in seen), \
                    f"{c.prim} now lowers under jit: remove it from JIT_FALLBACK"
    finally:
        ctx.__exit__(None, None, None)


def _kind(p):
    if p.nondiff:
        return "nondiff"
    if p.path.startswith("rt.") and not getattr(p, "aliases", ()):
        return "runtime helper"   # no user-facing name (scipy rows have aliases: swept)
    if p.batch == "collective":
        return "collective"
    if p.name in ("setitem", "assign"):
        return "control"
    return None


def test_every_row_has_a_case():
    covered = {c.prim for c in SC.CASES}
    missing = []
    for p in all_primitives(builtin_only=True):
        if p.name in covered or p.name in SC.EXEMPT or _kind(p) in SC.EXEMPT_KINDS:
            continue
        missing.append(p.name)
    assert not missing, f"rows of the primitive table with no sweep case: {sorted(missing)}"
    assert not (set(SC.EXEMPT) & covered), "a row is both exempt and covered"
    for c in SC.CASES:
        for mode, why in c.skip.items():
            assert mode in SC.MODES and why, f"{c.id}: skip of {mode!r} needs a reason"
    # every swept row is checked in every mode by at least one of its cases
    lacking = []
    for prim in sorted(covered):
        cases = [c for c in SC.CASES if c.prim == prim]
        for mode in SC.MODES:
            if not any(mode in _modes(c) and mode not in c.skip for c in cases) and \
                    (prim, mode) not in SC.MODE_EXEMPT:
                lacking.append(f"{prim}: {mode}")
    assert not lacking, f"rows swept without a mode: {lacking}"
    assert set(SC.JIT_FALLBACK) <= covered, "JIT_FALLBACK names a row with no case"


def test_svd_vectors_refused():
    # full_matrices=True of a non-square matrix: U's extra columns are not unique
    with pytest.raises(NotImplementedError, match=r"full_matrices=True\) of a non-square"):
        grad(lambda a: np.sum(np.abs(np.linalg.svd(a)[0])))(np.ones((3, 2)) + np.eye(3, 2))
    with pytest.raises(NotImplementedError, match=r"svd\(hermitian=True\) of a complex"):
        grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False, hermitian=True)))(
            np.eye(2) + 0.1j)
