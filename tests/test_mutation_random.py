"""Random NumPy programs that write into arrays, through views, second names and the function's
own argument, and element by element in loops (issue 11), under every transform.

Programs come from tests/random_programs.py (MUTATION_KINDS). Oracles: NumPy running the same
function (its value, and what it leaves in the caller's array), central finite differences in
float64 for grad, jvp and jit(grad), a Python loop over examples for vmap, and JAX for the
programs that happen to have no in-place write (JAX has none).

jit: Numba lowering of subscript writes, copies and tapes is the jit-loops work (issue 12).
Until it lands, jit runs these programs as NumPy code with one TranspileWarning that says
"no Numba lowering" and names the construct; the tests below accept exactly that fallback
(JIT_FALLBACK) and still check the numbers. Any other warning fails.
"""
import warnings

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import random_programs as rp
from transpile import grad, jit, jvp, vmap
from transpile.api.autodiff import Plain
from transpile.errors import TranspileWarning

JIT_FALLBACK = "no Numba lowering"      # known, explicit: see the module docstring
SETTINGS = dict(max_examples=20, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
inputs = st.lists(st.floats(-1.5, 1.5, allow_nan=False), min_size=rp.N, max_size=rp.N).map(
    lambda v: np.array(v, dtype=np.float64))


def _load(prog):
    src, writes = prog
    return rp.load(src).f, src, writes


def _smooth_grad(f, x):
    """Central differences at x, or None where f is not smooth near x (abs, maximum, a branch
    condition close to its threshold): one-sided differences then disagree."""
    g = rp.numgrad(lambda z: f(z.copy()), x)
    fx, h = f(x.copy()), 1e-4
    # a kink between x - 1e-5 and x + 1e-5 (a branch on a tie, x[i + 1] > x[i] with equal
    # items) where the gradient is too small for the one-sided test below: central differences
    # of two steps then disagree
    coarse = rp.numgrad(lambda z: f(z.copy()), x, eps=1e-5)
    if not np.allclose(g, coarse, rtol=1e-3, atol=1e-6 * max(1.0, abs(float(fx)))):
        return None
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        right = (f(x + e) - fx) / h
        left = (fx - f(x - e)) / h
        if not np.isclose(right, left, rtol=1e-2, atol=1e-2) or \
                not np.isclose(g[i], (right + left) / 2, rtol=1e-3, atol=1e-3):
            return None
    return g


def _jit_call(fn, x, src):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TranspileWarning)
        out = fn(x)
    for w in caught:
        if issubclass(w.category, TranspileWarning):
            assert JIT_FALLBACK in str(w.message), f"{w.message}\n{src}"
    return out


@settings(**SETTINGS)
@given(rp.programs(kinds=tuple(rp.MUTATION_KINDS)), inputs)
def test_eager_and_jit_compute_what_numpy_computes(prog, x):
    f, src, _ = _load(prog)
    x_numpy = x.copy()
    want = f(x_numpy)                 # NumPy may write into its argument: keep what it left
    x_eager = x.copy()
    np.testing.assert_allclose(Plain(f)(x_eager), want, rtol=1e-12, atol=1e-12, err_msg=src)
    np.testing.assert_allclose(x_eager, x_numpy, rtol=1e-12, atol=1e-12, err_msg=src)
    x_jit = x.copy()
    np.testing.assert_allclose(_jit_call(jit(f), x_jit, src), want, rtol=1e-10, atol=1e-10,
                               err_msg=src)
    np.testing.assert_allclose(x_jit, x_numpy, rtol=1e-12, atol=1e-12, err_msg=src)


@settings(**SETTINGS)
@given(rp.programs(kinds=tuple(rp.MUTATION_KINDS)), inputs)
def test_grad_and_jit_grad_match_finite_differences(prog, x):
    f, src, writes = _load(prog)
    fd = _smooth_grad(f, x)
    if fd is None:
        return                         # not differentiable at x: nothing to compare
    np.testing.assert_allclose(grad(f)(x.copy()), fd, rtol=1e-5, atol=1e-5, err_msg=src)
    np.testing.assert_allclose(_jit_call(jit(grad(f)), x.copy(), src), fd, rtol=1e-5,
                               atol=1e-5, err_msg=src)
    if not writes:                     # an independent oracle where JAX can run the program
        import jax
        jax.config.update("jax_enable_x64", True)
        fj = rp.load(rp.jax_version(src)).f
        np.testing.assert_allclose(grad(f)(x.copy()), np.asarray(jax.grad(fj)(x.copy())),
                                   rtol=1e-9, atol=1e-9, err_msg=src)


@settings(**SETTINGS)
@given(rp.programs(kinds=tuple(rp.MUTATION_KINDS)), inputs, inputs)
def test_jvp_matches_finite_differences(prog, x, t):
    f, src, _ = _load(prog)
    if _smooth_grad(f, x) is None:
        return
    value, tangent = jvp(lambda z: f(z.copy()), (x.copy(),), (t,))
    eps = 1e-6
    fd = (f(x + eps * t) - f(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12, atol=1e-12, err_msg=src)
    np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-5, err_msg=src)


@settings(**SETTINGS)
@given(rp.programs(kinds=tuple(rp.MUTATION_KINDS)), inputs)
def test_vmap_matches_a_loop_over_examples(prog, x):
    f, src, _ = _load(prog)
    X = np.stack([x, 0.5 * x - 0.1, -x + 0.3])
    X_numpy = X.copy()
    want = np.array([f(row) for row in X_numpy])   # each example writes into its own row
    X_vmap = X.copy()
    np.testing.assert_allclose(vmap(f)(X_vmap), want, rtol=1e-12, atol=1e-12, err_msg=src)
    np.testing.assert_allclose(X_vmap, X_numpy, rtol=1e-12, atol=1e-12, err_msg=src)


# ---- the constructs of foreign code (issue 22): rp.FOREIGN_KINDS ---------------------------
# views of locals written through their base in loops, slice-writes into the argument,
# [:, None] / np.newaxis, constant integer-array subscripts, int -> float accumulators, bitwise
# masks. Here a jit fallback (TranspileWarning) is an error, as in tests/test_foreign_kernels.py.

FOREIGN_SETTINGS = dict(SETTINGS, phases=[Phase.explicit, Phase.generate])   # no shrinking:
# every shrink step would compile again; the failing program is printed as it was drawn


def _strict(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        return fn(*args)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.FOREIGN_KINDS)), inputs)
def test_foreign_constructs_jit_matches_numpy_without_fallback(prog, x):
    f, src, _ = _load(prog)
    x_numpy = x.copy()
    want = f(x_numpy)
    x_jit = x.copy()
    np.testing.assert_allclose(_strict(jit(f), x_jit), want, rtol=1e-10, atol=1e-10,
                               err_msg=src)
    np.testing.assert_allclose(x_jit, x_numpy, rtol=1e-12, atol=1e-12, err_msg=src)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.FOREIGN_KINDS)), inputs)
def test_foreign_constructs_grad_and_vmap(prog, x):
    f, src, _ = _load(prog)
    X = np.stack([x, 0.5 * x - 0.1, -x + 0.3])
    X_numpy = X.copy()
    want = np.array([f(row) for row in X_numpy])
    X_vmap = X.copy()
    np.testing.assert_allclose(vmap(f)(X_vmap), want, rtol=1e-12, atol=1e-12, err_msg=src)
    np.testing.assert_allclose(X_vmap, X_numpy, rtol=1e-12, atol=1e-12, err_msg=src)
    fd = _smooth_grad(f, x)
    if fd is None:
        return
    np.testing.assert_allclose(grad(f)(x.copy()), fd, rtol=1e-5, atol=1e-5, err_msg=src)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.FOREIGN_KINDS)), inputs)
def test_foreign_constructs_jit_grad_without_fallback(prog, x):
    f, src, _ = _load(prog)
    fd = _smooth_grad(f, x)
    if fd is None:
        return
    np.testing.assert_allclose(_strict(jit(grad(f)), x.copy()), fd, rtol=1e-5, atol=1e-5,
                               err_msg=src)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.FILL_KINDS)), inputs)
def test_fill_diagonal_jit_and_jit_grad_without_fallback(prog, x):
    f, src, _ = _load(prog)
    want = f(x.copy())
    np.testing.assert_allclose(_strict(jit(f), x.copy()), want, rtol=1e-10, atol=1e-10,
                               err_msg=src)
    fd = _smooth_grad(f, x)
    if fd is None:
        return
    np.testing.assert_allclose(_strict(jit(grad(f)), x.copy()), fd, rtol=1e-5, atol=1e-5,
                               err_msg=src)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.COMPLEX_KINDS)), inputs)
def test_complex_values_inside_jit_grad_gives_a_real_gradient(prog, x):
    """Complex intermediates between a real argument and a real result: jit(grad) gives the
    real gradient of finite differences (it once returned the complex cotangent, and grad
    let the imaginary part of a real value's cotangent into .real / .imag / np.abs). Some of
    these adjoints still run in NumPy between compiled parts (a cotangent that turns complex
    in a loop or branch): that warning is accepted here, a wrong or complex number is not."""
    f, src, _ = _load(prog)
    fd = _smooth_grad(f, x)
    if fd is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        got = jit(grad(f))(x.copy())
    assert np.asarray(got).dtype == np.float64, src
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5, err_msg=src)


# ---- the Python-language constructs bugs came from (session python): rp.PYTHON_ALL_KINDS ---
# short-circuit operands that draw or index, enumerate's start, reversed(), loops over arrays
# written inside them, the loop variable after a break, returns from nested loops, negative
# literal powers, lists appended in zip loops or under ifs on the data, loop variables whose
# length changes. jit's NumPy version (backend='numpy') checks the Python layer itself; the
# compiled jit may run a construct Numba cannot lower in NumPy (a warning), never another number.

@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.PYTHON_ALL_KINDS)), inputs)
def test_python_constructs_jit_matches_numpy(prog, x):
    f, src, _ = _load(prog)
    want = f(x.copy())
    np.testing.assert_allclose(_strict(jit(f, backend="numpy"), x.copy()), want, rtol=1e-12,
                               atol=1e-12, err_msg=src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        got = jit(f)(x.copy())
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=src)


@settings(**FOREIGN_SETTINGS)
@given(rp.programs(kinds=tuple(rp.PYTHON_ALL_KINDS)), inputs)
def test_python_constructs_grad(prog, x):
    f, src, _ = _load(prog)
    fd = _smooth_grad(f, x)
    if fd is None:
        return
    np.testing.assert_allclose(grad(f)(x.copy()), fd, rtol=1e-5, atol=1e-5, err_msg=src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranspileWarning)
        got = jit(grad(f))(x.copy())
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5, err_msg=src)
