"""The vectorizable scalar math of fused Numba loops (runtime/backends/numba_math.py) against
NumPy's: exp32/exp64 and tanh32/tanh64 within a few ulp over their whole range, special values
(±0, ±inf, NaN) exactly; and a fused jit loop of np.tanh uses them and equals NumPy."""
import warnings

import numpy as np
import pytest
from numba import njit

from transpile import jit
from transpile.errors import TranspileWarning
from transpile_runtime.backends.numba_math import exp32, exp64, tanh32, tanh64


def _loop(fn):
    @njit(error_model="numpy", fastmath={"reassoc", "contract"})
    def run(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
    return run


_LOOPS = {(f, dt): _loop(f) for f, dt in ((exp64, np.float64), (exp32, np.float32),
                                         (tanh64, np.float64), (tanh32, np.float32))}


def _ulps(got, want):
    unit = np.spacing(np.abs(want)).astype(np.float64)     # one ulp in the values' own dtype
    got, want = got.astype(np.float64), want.astype(np.float64)
    same = (got == want) | np.isnan(got) & np.isnan(want)
    gap = np.abs(got - want) / unit
    return np.max(np.where(same, 0.0, gap))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lo, hi", [(-1e-6, 1e-6), (-0.35, 0.35), (-1, 1), (-6, 6), (-40, 40),
                                    (-900, 900)])
def test_tanh_within_3_ulp_of_numpy(dtype, lo, hi):
    x = np.random.default_rng(int(hi * 10)).uniform(lo, hi, 200_000).astype(dtype)
    out = np.empty_like(x)
    _LOOPS[(tanh64 if dtype == np.float64 else tanh32, dtype)](x, out)
    assert _ulps(out, np.tanh(x)) <= 3


@pytest.mark.parametrize("f, dtype", [(tanh64, np.float64), (tanh32, np.float32)])
def test_tanh_special_values_are_numpys(f, dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.3, -0.3, 20.0, -20.0, 1e-30], dtype)
    out = np.empty_like(x)
    _LOOPS[(f, dtype)](x, out)
    want = np.tanh(x)
    assert np.array_equal(np.signbit(out), np.signbit(want))
    assert _ulps(out, want) <= 3


@pytest.mark.parametrize("f, dtype, lo, hi", [(exp64, np.float64, -700, 700),
                                              (exp32, np.float32, -87, 88)])
def test_exp_within_2_ulp_of_numpy(f, dtype, lo, hi):
    x = np.random.default_rng(3).uniform(lo, hi, 200_000).astype(dtype)
    out = np.empty_like(x)
    _LOOPS[(f, dtype)](x, out)
    assert _ulps(out, np.exp(x)) <= 2


def mlp_layer(X, W, b):
    return np.tanh(X @ W + b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_fused_tanh_loop_uses_the_vectorizable_form_and_equals_numpy(dtype):
    r = np.random.default_rng(4)
    X, W, b = (r.standard_normal(s).astype(dtype) for s in ((3000, 5), (5, 4), (4,)))
    j = jit(mlp_layer, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = j(X, W, b)
    want = mlp_layer(X, W, b)
    assert got.dtype == want.dtype
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert ("tanh64(" if dtype == np.float64 else "tanh32(") in j.source_for(X, W, b)


def masked_tanh_energy(X):
    sel = X[X[:, 0] > 0.0]                      # rows of run-time count
    return np.sum(np.tanh(sel[:, 1])) + np.sum(np.exp(-sel ** 2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_elementwise_rows_of_run_time_length_use_the_vectorizable_form(dtype):
    X = np.random.default_rng(5).standard_normal((4000, 3)).astype(dtype)
    j = jit(masked_tanh_energy, wait=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = j(X)
    want = masked_tanh_energy(X)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol)
    src = j.source_for(X)
    suffix = "64(" if dtype == np.float64 else "32("
    assert "tanh" + suffix in src and "exp" + suffix in src
