"""Warnings point at the user's call (file and line), not at a file inside transpile, and
TranspileWarning is public (transpile.TranspileWarning, one class for transpile and its runtime)."""
import os
import sys
import warnings

import numpy as np
import pytest

import transpile
from transpile import grad, jit
from transpile.errors import TranspileWarning as FromErrors
from transpile.lowering import backends
from transpile_runtime import diagnostics

PKG_DIRS = (os.path.dirname(transpile.__file__), os.path.dirname(diagnostics.__file__))


def f(x):
    return np.sum(np.sin(x) ** 2)


def _no_backend(plan):
    raise ImportError("the test's backend library is missing")


def test_transpile_warning_is_exported_and_unique():
    assert transpile.TranspileWarning is FromErrors is diagnostics.TranspileWarning
    assert "TranspileWarning" in transpile.__all__
    assert issubclass(transpile.TranspileWarning, UserWarning)


def test_jit_fallback_warning_names_the_callers_line():
    backends.register("test-missing", _no_backend)
    try:
        g = jit(f, backend="test-missing")
        x = np.linspace(-1, 1, 5)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            out = g(x)
        np.testing.assert_allclose(out, f(x), rtol=1e-12)      # the NumPy version ran
        ws = [w for w in rec if issubclass(w.category, transpile.TranspileWarning)]
        assert len(ws) == 1 and "running the NumPy version" in str(ws[0].message)
        assert (ws[0].filename, ws[0].lineno) == (__file__, line)
    finally:
        backends.BACKENDS.pop("test-missing", None)


def _users_helper(g, x):
    return g(x) * 2.0           # the warning belongs here: the innermost user frame


def test_warning_inside_grad_of_jit_points_at_the_user_frame():
    backends.register("test-missing2", _no_backend)
    try:
        h = grad(jit(f, backend="test-missing2"))
        x = np.linspace(-1, 1, 3)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            d = jit(f, backend="test-missing2")
            out = _users_helper(d, x)
            gx = h(x)
        np.testing.assert_allclose(out, 2 * f(x), rtol=1e-12)
        np.testing.assert_allclose(gx, 2 * np.sin(x) * np.cos(x), rtol=1e-12)
        ws = [w for w in rec if issubclass(w.category, transpile.TranspileWarning)]
        assert ws, "expected the fallback warning"
        for w in ws:
            assert not w.filename.startswith(PKG_DIRS), w.filename
            assert w.filename == __file__
        helper_line = _users_helper.__code__.co_firstlineno + 1
        assert ws[0].lineno == helper_line
    finally:
        backends.BACKENDS.pop("test-missing2", None)


def test_warn_filters_apply_to_the_users_module():
    # a filter on the user's module works, because the warning is attributed to it
    backends.register("test-missing3", _no_backend)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", category=transpile.TranspileWarning,
                                    module=__name__)
            with pytest.raises(transpile.TranspileWarning):
                jit(f, backend="test-missing3")(np.ones(2))
    finally:
        backends.BACKENDS.pop("test-missing3", None)


def column_norms_gram(A):
    """np.dot of column slices: Numba warns that np.dot is faster on contiguous arrays, about a
    line of the generated module the user never wrote."""
    out = np.zeros(A.shape[1])
    for k in range(A.shape[1]):
        out[k] = np.dot(A[:, k], A[:, k]) + 0.5
    return out


def test_numba_performance_hints_on_generated_code_are_not_shown():
    from numba.core.errors import NumbaPerformanceWarning
    A = np.arange(12.0).reshape(4, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = jit(column_norms_gram, wait=True)(A)
    np.testing.assert_allclose(got, (A * A).sum(axis=0) + 0.5)
    assert not [w for w in caught if issubclass(w.category, NumbaPerformanceWarning)], \
        [str(w.message) for w in caught]
