"""`assert` and `raise` inside transformed functions behave as in Python: under grad, vmap
(any failing example raises; a raise under an `if` on data runs per example) and jit, where
they compile (Numba raises the same exception; no NumPy fallback).

PYTEST_DONT_REWRITE: the functions under test hold `assert`s, which pytest would rewrite (their
code would no longer match their source).
"""
import warnings

import numpy as np
import pytest

import transpile as tp
from transpile import grad, jit, vmap


def checked(x, n):
    assert x.shape[0] == n, f"expected {n} rows, got {x.shape[0]}"
    s = np.sum(x)
    if s < 0:
        raise ValueError(f"negative sum {s:.2f}")
    assert s < 100, "too big"
    return s * 2.0


CASES = [((np.arange(4.0), 4), None),
         ((np.arange(4.0), 3), (AssertionError, "expected 3 rows, got 4")),
         ((-np.arange(4.0), 4), (ValueError, "negative sum -6.00")),
         ((100 * np.arange(4.0), 4), (AssertionError, "too big"))]


def _outcome(fn, args):
    try:
        return fn(*args)
    except Exception as e:          # noqa: BLE001  (compared with Python's own outcome)
        return (type(e), str(e))


@pytest.mark.parametrize("args,expected", CASES)
def test_plain_python_reference(args, expected):
    out = _outcome(checked, args)
    assert out == expected if expected else out == 12.0


@pytest.mark.parametrize("args,expected", CASES)
def test_jit_raises_as_python_and_compiles(args, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a NumPy fallback would warn: an error here
        out = _outcome(jit(checked), args)
    if expected:
        assert out == expected
    else:
        assert out == checked(*args)


@pytest.mark.parametrize("args,expected", CASES)
def test_grad_raises_as_python(args, expected):
    out = _outcome(grad(checked), args)
    if expected:
        assert out == expected
    else:
        np.testing.assert_allclose(out, 2.0 * np.ones(4))


def test_jit_lowered_source_has_the_raise():
    x = np.arange(4.0)
    src = jit(checked).source_for(x, 4)
    assert "raise ValueError(msg_text)" in src
    assert "raise AssertionError('too big')" in src
    line = checked.__code__.co_firstlineno + 5
    assert f"# line {line}: assert s < 100" in src


def test_constant_message_and_bare_class():
    def f(x):
        if x[0] > 1.0:
            raise RuntimeError
        if x[0] < -1.0:
            raise IndexError("constant {braces}")
        return x * 3.0
    for fn in (f, jit(f), grad(lambda x: np.sum(f(x)))):
        with pytest.raises(RuntimeError):
            fn(np.array([2.0]))
        with pytest.raises(IndexError) as info:
            fn(np.array([-2.0]))
        assert str(info.value) == "constant {braces}"     # the user's message, untouched
    np.testing.assert_allclose(jit(f)(np.array([0.5])), [1.5])


def _pos(x):
    if np.sum(x) < 0:
        raise ValueError("negative example")
    assert np.all(x < 10), "example too big"
    return x * 2.0


def test_vmap_raises_if_any_example_fails():
    ok = np.ones((3, 2))
    np.testing.assert_allclose(vmap(_pos)(ok), 2 * ok)
    with pytest.raises(ValueError, match="negative example"):
        vmap(_pos)(np.array([[1.0, 1.0], [-5.0, 1.0]]))
    with pytest.raises(AssertionError, match="example too big"):
        vmap(_pos)(np.array([[1.0, 1.0], [11.0, 1.0]]))
    # the raise under an if on data runs per example (no example raises here)
    src = vmap(_pos).source_for(ok)
    assert "rt.raise_error('ValueError', 'negative example')" in src
    assert "rt.batch_check_assert(" in src


def test_grad_of_vmap_with_assert():
    def loss(x):
        return np.sum(vmap(_pos)(x) ** 2)
    x = np.arange(6.0).reshape(3, 2) / 10
    np.testing.assert_allclose(grad(loss)(x), 8 * x)
    with pytest.raises(AssertionError, match="example too big"):
        grad(loss)(x * 100)


def _neg(x):
    if np.sum(x) < 0:
        raise ValueError("negative example")
    return x * 2.0


def test_jit_of_vmap_with_raise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = jit(vmap(_neg))
        np.testing.assert_allclose(f(np.ones((3, 2))), 2 * np.ones((3, 2)))
        with pytest.raises(ValueError, match="negative example"):
            f(np.array([[1.0, 1.0], [-5.0, 1.0]]))


def test_static_assert_decides_when_generating():
    def f(x):
        assert x.ndim == 1, "need a vector"
        return x + 1.0
    np.testing.assert_allclose(jit(f)(np.zeros(2)), [1.0, 1.0])
    with pytest.raises(AssertionError, match="need a vector"):
        jit(f)(np.zeros((2, 2)))
    with pytest.raises(AssertionError, match="need a vector"):
        grad(lambda x: np.sum(f(x)))(np.zeros((2, 2)))


def test_code_after_a_static_false_assert_is_not_compiled():
    # normalize(X) of a 1-D X: the assert fails for every call of that rank, so `Z[:, j]`
    # (invalid for a vector) is never compiled and no NumPy fallback is warned about.
    def normalize(X, eps):
        assert X.ndim == 2, "X must be 2-D"
        sd = X.std(axis=0, ddof=1)
        Z = (X - X.mean(axis=0)) / (sd + eps)
        for j in range(Z.shape[1]):
            if sd[j] == 0:
                Z[:, j] = 0.0
        return np.sum(Z ** 3)
    X = np.random.default_rng(0).standard_normal((6, 3))
    jf = jit(normalize)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(jf(X, 1e-9), normalize(X, 1e-9))
        with pytest.raises(AssertionError, match="X must be 2-D"):
            jf(np.ones(3), 1e-9)


def test_refusals_name_the_line():
    class MyError(Exception):
        pass

    def custom(x):
        if x[0] > 0:
            raise MyError("no")
        return x

    def reraise(x):
        raise

    for fn, text in [(custom, "built-in exception"), (reraise, "bare `raise`")]:
        with pytest.raises(tp.TranspileError) as info:
            grad(lambda x: np.sum(fn(x)))(np.ones(2))
        assert text in str(info.value)
        assert "test_assert_raise.py:" in str(info.value)


# ---- the optimizers inside jit (they check their arguments with raise) ----------------------

def _loss(params, x, y):
    w, b = params
    return np.mean((x @ w + b - y) ** 2)


@pytest.mark.parametrize("make", [lambda: tp.optimizers.adam(1e-2),
                                  lambda: tp.optimizers.momentum(0.05, mass=0.8),
                                  lambda: tp.optimizers.sgd(0.1)])
def test_optimizers_compile_inside_jit(make):
    opt_init, opt_update, get_params = make()

    def step(i, state, x, y):
        g = grad(_loss)(get_params(state), x, y)
        return opt_update(i, g, state)

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=8)
    params = (rng.normal(size=3), np.full((), 0.5))
    s_ref, s_jit = opt_init(params), opt_init(params)
    jstep = jit(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # fallback to NumPy is an error here
        for i in range(4):
            s_ref = step(i, s_ref, x, y)
            s_jit = jstep(i, s_jit, x, y)
    for a, b in zip(tp.tree_leaves(s_ref), tp.tree_leaves(s_jit)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert "def step__jit" in jstep.source and "@njit" in jstep.source


def test_optimizer_argument_check_inside_jit():
    opt_init, opt_update, get_params = tp.optimizers.sgd(0.1)

    def step(i, state, g):
        return opt_update(i, g, state)

    state = opt_init((np.ones(3),))
    # the check runs before the mismatching update: its message, not the mismatch, from
    # compiled code (no fallback warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"gradient leaf 0 has shape \(2,\), parameter "
                                             r"has shape \(3,\)"):
            jit(step)(0, state, (np.ones(2),))


def test_tp_random_and_optimizers_are_attributes():
    import subprocess
    import sys
    code = ("import transpile as tp; tp.optimizers.adam(1e-3); tp.random.PRNGKey(0); "
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def _log_entropy(x):
    assert np.min(x) > 0, "needs positive"
    if np.sum(x) > 100:
        raise ValueError(f"too big: {np.sum(x):.1f}")
    return np.sum(np.log(x) * x)


@pytest.mark.parametrize("name", ["jvp", "hessian", "jit_grad", "vmap_grad", "jit_hessian"])
def test_checks_under_higher_order_transforms(name):
    x = np.array([1.0, 2.0, 3.0])
    make = {"jvp": lambda: (lambda v: tp.jvp(_log_entropy, (v,), (np.ones(3),))[1]),
            "hessian": lambda: tp.hessian(_log_entropy),
            "jit_grad": lambda: jit(grad(_log_entropy)),
            "vmap_grad": lambda: (lambda v: vmap(grad(_log_entropy))(v[None])[0]),
            "jit_hessian": lambda: jit(tp.hessian(_log_entropy))}[name]
    want = {"jvp": np.sum(np.log(x) + 1), "hessian": np.diag(1 / x),
            "jit_grad": np.log(x) + 1, "vmap_grad": np.log(x) + 1,
            "jit_hessian": np.diag(1 / x)}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn = make()
        np.testing.assert_allclose(fn(x), want, rtol=1e-12)
        with pytest.raises(AssertionError, match="needs positive"):
            fn(-x)
        with pytest.raises(ValueError, match=r"too big: 600\.0"):
            fn(x * 100)
