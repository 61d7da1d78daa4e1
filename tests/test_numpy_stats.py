"""User-style code with NumPy's statistics, filters, products and piecewise functions (the rows
of transpile/primitives/numpy/stats.py, filters.py, products.py, linalg.py and piecewise.py) under grad,
jvp, vmap(grad) and jit(grad): against central differences in float64 and against JAX
(which has every one of these functions). The row-by-row sweep is tests/test_primitive_sweep.py.
"""
import types
import warnings

import numpy as np
import pytest

import transpile
from transpile import grad, jit, jvp, vmap
from transpile.errors import TranspileWarning
from transpile_runtime import stats_adjoints as SA
import transpile_runtime as rt

from fd import numerical_grad

KNOTS = np.array([-2.0, -0.5, 0.0, 0.7, 2.0])
VALUES = np.array([0.5, -1.0, 0.3, 1.2, 0.1])
AW = np.array([1.0, 2.0, 0.5, 1.5, 1.0, 0.7])
PICK = np.array([1, 0, 1])


def robust_loss(w, x, y):
    """A median-of-squared-residuals regression through a calibration curve."""
    r = np.interp(x @ w, KNOTS, VALUES) - y
    return np.median(r ** 2) + 0.1 * np.percentile(np.abs(r), 90.0) + np.ptp(w)


def curve_loss(fp, t):
    """Fit the values of a piecewise linear curve at sample points t."""
    pred = np.interp(t, KNOTS, fp)
    return np.sum((pred - np.sin(t)) ** 2) + np.quantile(pred, 0.25)


def stats_loss(x, w):
    c = np.cov(x, aweights=AW)
    r = np.corrcoef(x)
    m = np.average(x, axis=1, weights=w)
    return np.sum(c * c) + np.sum(np.triu(r, 1)) + np.sum(m ** 2)


def signal_loss(x, k):
    y = np.convolve(x, k, 'same') + np.correlate(np.append(x, np.array([1.0, 2.0])), k, 'valid')
    return np.sum(np.tanh(y) ** 2) + np.polyval(k, x[0])


def lstsq_loss(a, b):
    sol, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(sol ** 2) + np.sum(res) + np.sum(sv)


def gather_loss(a, b):
    n = np.cross(a, b)
    gx, gy = np.meshgrid(a, b[:2])
    m = np.linalg.multi_dot([gx * gy, np.outer(a, b), n])
    return (np.sum(np.take(m, PICK) ** 2) + np.sum(np.heaviside(a, 0.5) * b)
            + np.sum(np.nan_to_num(np.log(np.abs(a)))))


def level_loss(x, z):
    """Quantile levels that are themselves parameters."""
    levels = 1.0 / (1.0 + np.exp(-z))
    return np.sum(np.quantile(x, levels, axis=0) ** 2) + np.percentile(x, 30.0 + 10.0 * z[0])


def _inputs():
    rng = np.random.default_rng(42)
    return {
        "robust": (robust_loss, [rng.normal(size=3) * 0.5, rng.normal(size=(8, 3)),
                                 rng.normal(size=8) * 0.3]),
        "curve": (curve_loss, [rng.normal(size=5), rng.uniform(-1.9, 1.9, size=7)]),
        "stats": (stats_loss, [rng.normal(size=(3, 6)), rng.uniform(0.5, 2.0, size=6)]),
        "signal": (signal_loss, [rng.normal(size=6), rng.normal(size=3)]),
        "lstsq": (lstsq_loss, [rng.normal(size=(6, 3)), rng.normal(size=(6, 2))]),
        "gather": (gather_loss, [rng.normal(size=3), rng.normal(size=3)]),
        "levels": (level_loss, [rng.normal(size=(7, 2)), np.array([-0.3, 0.4])]),
    }


CASES = _inputs()


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _on_jax(f):
    """The same function reading jax.numpy as `np`."""
    import jax.numpy as jnp
    return types.FunctionType(f.__code__, dict(f.__globals__, np=jnp), f.__name__)


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_differences_and_jax(name):
    f, args = CASES[name]
    jax = _jax()
    fj = _on_jax(f)
    for i in range(len(args)):
        g = grad(f, argnums=i)(*args)
        _close(g, numerical_grad(f, args, argnum=i))
        _close(g, jax.jit(jax.grad(fj, argnums=i))(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_differences(name):
    f, args = CASES[name]
    rng = np.random.default_rng(1)
    tans = tuple(rng.normal(size=np.shape(a)) for a in args)
    out, tan = jvp(f, tuple(args), tans)
    eps = 1e-6
    plus = f(*[a + eps * t for a, t in zip(args, tans)])
    minus = f(*[a - eps * t for a, t in zip(args, tans)])
    _close(out, f(*args), 1e-12)
    _close(tan, (plus - minus) / (2 * eps), 1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_grad_is_the_loop(name):
    f, args = CASES[name]
    rng = np.random.default_rng(2)
    batch = np.stack([args[0], args[0] + 0.01 * rng.normal(size=np.shape(args[0])),
                      args[0] - 0.02 * rng.normal(size=np.shape(args[0]))])
    in_axes = (0,) + (None,) * (len(args) - 1)
    got = vmap(grad(f), in_axes=in_axes)(batch, *args[1:])
    want = np.stack([grad(f)(b, *args[1:]) for b in batch])
    _close(got, want, 1e-10)
    _close(got[0], numerical_grad(f, args, argnum=0))


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_of_grad(name):
    f, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)   # rows without Numba: NumPy runs
        got = jit(grad(f, argnums=tuple(range(len(args)))))(*args)
    for i, g in enumerate(got):
        _close(g, grad(f, argnums=i)(*args), 1e-10)
        _close(g, numerical_grad(f, args, argnum=i))


def test_float32_in_float32_gradients_out():
    f, args = CASES["robust"]
    args32 = [a.astype(np.float32) for a in args]
    g = grad(f)(*args32)
    assert g.dtype == np.float32
    _close(g, grad(f)(*args), 2e-3)
    g = grad(curve_loss)(*[a.astype(np.float32) for a in CASES["curve"][1]])
    assert g.dtype == np.float32


def test_mixed_second_derivative_of_interp():
    """d/dfp of the gradient in the sample points goes through the slope's rule."""
    jax = _jax()
    fp, t = CASES["curve"][1]

    def slope_sum(fp, t):
        return np.sum(grad(curve_loss, argnums=1)(fp, t) * np.cos(t))

    def slope_sum_jax(fp, t):
        import jax.numpy as jnp
        return jnp.sum(jax.grad(_on_jax(curve_loss), argnums=1)(fp, t) * jnp.cos(t))
    _close(grad(slope_sum)(fp, t), jax.grad(slope_sum_jax)(fp, t))


# ---- the conventions the rules choose, checked against the math --------------------------


def test_median_shares_ties_and_halves_the_middle_pair():
    _close(grad(np.median)(np.array([1.0, 2.0, 2.0, 3.0, 5.0])), [0, 0.5, 0.5, 0, 0])
    _close(grad(np.median)(np.array([4.0, 1.0, 3.0, 2.0])), [0, 0, 0.5, 0.5])
    _close(grad(np.ptp)(np.array([3.0, 1.0, 3.0, 1.0, 2.0])), [0.5, -0.5, 0.5, -0.5, 0])


@pytest.mark.parametrize("method", SA.QUANTILE_METHODS)
def test_quantile_weights_reproduce_numpy(method):
    """sum(w * x) over the axis is np.quantile's value, ties and repeated q included."""
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(4, 7, 3)), 1)          # ties
    for q in (0.5, 0.0, 1.0, np.array([0.1, 0.5, 0.51, 0.75, 0.875])):
        for axis in (None, 1, (0, 2), -1):
            w = SA.quantile_mask(x, q, axis, method)
            axes = tuple(range(np.ndim(q), np.ndim(w))) if axis is None else \
                tuple(np.ndim(q) + (a % x.ndim) for a in np.atleast_1d(axis))
            _close(np.sum(w * x, axis=axes), np.quantile(x, q, axis=axis, method=method), 1e-12)


def test_conv_pad_width_reproduces_numpy_modes():
    rng = np.random.default_rng(4)
    for n in range(1, 7):
        for m in range(1, 7):
            x, y = rng.normal(size=n), rng.normal(size=m)
            for kind, f in (("convolve", np.convolve), ("correlate", np.correlate)):
                full = f(x, y, "full")
                for mode in ("full", "same", "valid"):
                    ((lo, hi),) = SA.conv_pad_width(n, m, mode, kind)
                    _close(full[lo:full.size - hi], f(x, y, mode), 1e-12)


# ---- refusals name the user's line ----------------------------------------------------------


def _periodic(x):
    return np.sum(np.interp(x, KNOTS, VALUES, period=3.0))


def _weibull(x):
    return np.quantile(x, 0.3, method="weibull")


def _returned(x):
    return np.average(x, returned=True)[0]


@pytest.mark.parametrize("f, what", [(_periodic, "period"), (_weibull, "weibull"),
                                     (_returned, "returned")])
def test_unsupported_arguments_are_refused(f, what):
    with pytest.raises(transpile.TranspileError, match=what) as e:
        grad(f)(np.linspace(0.1, 1.0, 5))
    assert f"test_numpy_stats.py:{f.__code__.co_firstlineno + 1}" in str(e.value)


def _cross_2d(x, y):
    return np.sum(np.cross(x, y) ** 2)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cross_of_two_entry_vectors_is_refused():
    """NumPy 2 deprecates them; the derivative says so instead of a shape error."""
    with pytest.raises(NotImplementedError, match="3-entry vectors"):
        grad(_cross_2d)(np.array([1.0, 2.0]), np.array([0.5, -1.0]))


# ---- in-place ufuncs keep NumPy's result dtype (found by np.percentile's rule) ----------------


def _scaled(x, q):
    return np.sum(x * (np.asarray(q) / 100))


def test_integer_true_divide_is_not_written_into_an_integer_buffer():
    _close(grad(_scaled)(np.ones(2), np.array([10, 75])), [0.1, 0.75])
    buf = np.array([10, 75])
    out = rt.compute_into(buf, np.divide, buf, 100)
    assert out.dtype == np.float64 and out is not buf
    fbuf = np.array([1.0, 3.0])
    assert rt.compute_into(fbuf, np.greater, fbuf, 2.0).dtype == np.bool_
