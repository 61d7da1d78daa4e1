"""jit compiles loops, branches, while, subscript writes and the reverse-mode tape to Numba.

Every test here turns TranspileWarning (jit's fallback to NumPy) into an error, except the
ones that expect a fallback and say so. Values are checked against NumPy (the same function
run plainly), gradients against central finite differences in float64 and against JAX
(x64), which runs the same Python loops eagerly (`.at[].set` where NumPy writes in place).
"""
import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from fd import numerical_grad
from transpile import TranspileWarning, grad, jit, pmean, psum, vmap

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

pytestmark = pytest.mark.filterwarnings("error::transpile.TranspileWarning")


# -- the six loop shapes of the benchmark (bench/bench_loops.py) ---------------------------------

def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
    return s


def euler(y):
    for t in range(50):
        y = y + 0.01 * (-y * np.abs(y) + np.sin(y))
    return np.sum(y)


def rnn(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


def branch_write(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[i] = x[i] * 2.0
        else:
            out[i] = np.sin(x[i])
    return np.sum(out * out)


def while_data(x):
    s = 0.0
    i = 0
    while s < 3.0 and i < x.shape[0]:
        s = s + x[i] * x[i]
        i = i + 1
    return s


def triangle(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(i + 1):
            s = s + A[i, j] * A[j, i]
    return s


def j_sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
    return s


def j_euler(y):
    for t in range(50):
        y = y + 0.01 * (-y * jnp.abs(y) + jnp.sin(y))
    return jnp.sum(y)


def j_rnn(W, xs):
    h = jnp.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = jnp.tanh(W @ h + xs[t])
    return jnp.sum(h)


def j_branch_write(x):
    out = jnp.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            out = out.at[i].set(x[i] * 2.0)
        else:
            out = out.at[i].set(jnp.sin(x[i]))
    return jnp.sum(out * out)


def j_while_data(x):
    s = 0.0
    i = 0
    while s < 3.0 and i < x.shape[0]:
        s = s + x[i] * x[i]
        i = i + 1
    return s


def j_triangle(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(i + 1):
            s = s + A[i, j] * A[j, i]
    return s


_rng = np.random.default_rng(3)
CASES = {
    "sum_squares": (sum_squares, j_sum_squares, (_rng.standard_normal(7),)),
    "euler": (euler, j_euler, (_rng.standard_normal(5),)),
    "rnn": (rnn, j_rnn, (_rng.standard_normal((4, 4)) * 0.4, _rng.standard_normal((6, 4)))),
    "branch_write": (branch_write, j_branch_write, (_rng.standard_normal(8),)),
    "while_data": (while_data, j_while_data, (_rng.standard_normal(9),)),
    "triangle": (triangle, j_triangle, (_rng.standard_normal((5, 5)),)),
}


def _copies(args):
    return [a.copy() for a in args]


def assert_compiled(j, *args):
    """The specialization for args runs Numba code (not the NumPy fallback)."""
    key = (j.flatten_args(j.bind(args, {}))[1],)
    specs = [c.delegate or c for k, c in j._specs.items() if k[0] == key[0]]
    assert specs and all(not c.eager for c in specs)
    text = j.show_source(*args)
    code = [line.split("#", 1)[0] for line in text.split("def ", 1)[1].splitlines()]
    assert "@njit" in text and not any("rt." in line for line in code)   # (comments may name one)


@pytest.mark.parametrize("name", list(CASES))
def test_jit_of_loop_matches_numpy_and_is_compiled(name):
    f, _, args = CASES[name]
    j = jit(f)
    got = j(*_copies(args))
    np.testing.assert_allclose(got, f(*_copies(args)), rtol=1e-12, atol=1e-14)
    assert_compiled(j, *args)


@pytest.mark.parametrize("name", list(CASES))
def test_jit_of_grad_of_loop_matches_fd_and_jax(name):
    f, jf, args = CASES[name]
    j = jit(grad(f))
    got = j(*_copies(args))
    fd = numerical_grad(f, _copies(args))
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)
    want = jax.grad(jf)(*[jnp.asarray(a) for a in args])
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10, atol=1e-12)
    assert_compiled(j, *args)


@pytest.mark.parametrize("name", ["sum_squares", "euler", "branch_write", "triangle"])
def test_grad_of_jit_matches_fd(name):
    f, _, args = CASES[name]
    got = grad(jit(f))(*_copies(args))
    np.testing.assert_allclose(got, numerical_grad(f, _copies(args)), rtol=1e-6, atol=1e-6)


# jit(vmap(loop)) and jit(vmap(grad(loop))): compiled (the batched code, or one compiled loop over
# the batch where a batched step has no Numba lowering), against a loop over the examples

def _batch_of(args):
    x = args[0]
    return np.stack([x, x * 0.5 - 0.1, x + 0.3]), list(args[1:])


@pytest.mark.parametrize("name", list(CASES))
def test_jit_of_vmap_of_loop_matches_a_loop_and_is_compiled(name):
    f, _, args = CASES[name]
    xs, rest = _batch_of(args)
    j = jit(vmap(f, in_axes=(0,) + (None,) * len(rest)))
    got = j(xs.copy(), *_copies(rest))
    want = np.stack([f(r.copy(), *_copies(rest)) for r in xs])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert_compiled(j, xs, *rest)


@pytest.mark.parametrize("name", list(CASES))
def test_jit_of_vmap_of_grad_of_loop_matches_fd_and_is_compiled(name):
    f, _, args = CASES[name]
    xs, rest = _batch_of(args)
    j = jit(vmap(grad(f), in_axes=(0,) + (None,) * len(rest)))
    got = j(xs.copy(), *_copies(rest))
    want = np.stack([numerical_grad(f, [r.copy()] + _copies(rest)) for r in xs])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert_compiled(j, xs, *rest)


def test_tape_is_preallocated_arrays_sized_by_the_trip_count():
    f, _, args = CASES["euler"]
    text = jit(grad(f)).show_source(*args)
    # 50 steps of a vector whose length is read at run time (y__n0 = y.shape[0])
    assert "tape" in text and "np.empty((50, y__n0), np.float64)" in text
    assert ".pop()" not in text and ".push(" not in text


# -- NumPy semantics in compiled loops -----------------------------------------------------------

def accumulate(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * 1.5
    return s


def test_float32_loop_stays_float32():
    x = np.linspace(-1, 1, 9).astype(np.float32)
    got = jit(accumulate)(x)
    want = accumulate(x)
    assert np.asarray(got).dtype == np.float32 == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    g = jit(grad(accumulate))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.full(9, 1.5, np.float32))


def int_writes(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        out[i] = x[i] * 3.0
    out[0] += 2.7
    return out


def test_float_written_into_int_array_truncates_like_numpy():
    x = np.array([0.9, -1.7, 2.5, -0.2])
    got = jit(int_writes)(x.copy())
    want = int_writes(x.copy())
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def view_writes(x):
    a = x * 1.0
    v = a[1:4]
    for i in range(3):
        v[i] = v[i] * 10.0 + i
    return a


def test_writes_through_a_view_in_a_loop_are_seen_by_the_base():
    x = np.arange(6.0)
    np.testing.assert_array_equal(jit(view_writes)(x.copy()), view_writes(x.copy()))


def writes_argument(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            x[i] = 0.0
    return np.sum(x)


def test_write_into_the_argument_in_a_loop_mutates_the_caller_array():
    x = np.array([1.0, -2.0, 3.0, -4.0])
    want_x = x.copy()
    want = writes_argument(want_x)
    got = jit(writes_argument)(x)
    assert got == want
    np.testing.assert_array_equal(x, want_x)


def early_exit(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < -1.0:
            break
        if x[i] > 1.0:
            continue
        s = s + np.sin(x[i])
    return s


def test_break_and_continue():
    for x in (np.array([0.5, 2.0, -0.3, -1.5, 0.7]), np.array([0.1, 0.2, 3.0])):
        np.testing.assert_allclose(jit(early_exit)(x), early_exit(x), rtol=1e-12)
        np.testing.assert_allclose(jit(grad(early_exit))(x), numerical_grad(early_exit, [x]),
                                   rtol=1e-6, atol=1e-8)


def int_then_float(x):
    k = 0
    for i in range(x.shape[0]):
        k = k + x[i]
    return k


def test_loop_carried_int_that_becomes_float():
    x = np.array([0.5, 1.25, -2.0])
    got = jit(int_then_float)(x)
    assert got == int_then_float(x)


def reciprocal(x):
    return 1.0 / x


def test_division_by_zero_gives_inf_like_numpy():
    with np.errstate(divide="ignore"):
        assert jit(reciprocal)(np.float64(0.0)) == np.inf
        got = jit(reciprocal)(np.zeros(3))
    assert np.all(np.isinf(got))


# -- what still falls back says where and what ----------------------------------------------------

def grows(x):
    y = x[:1]
    for i in range(3):
        y = np.concatenate((y, x[:1] * i))
    return np.sum(y * y), y


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")     # compiled, no NumPy fallback
def test_array_whose_length_changes_per_iteration_compiles():
    x = np.arange(1.0, 4.0)
    got, want = jit(grows)(x), grows(x)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])


def gains_an_axis(x):
    y = x[:1]
    for i in range(3):
        y = np.outer(y, x[:1]).sum(axis=0) if i == 5 else np.outer(y, x[:1])
    return np.sum(y)


GAINS_LINE = gains_an_axis.__code__.co_firstlineno + 3


def test_array_whose_rank_changes_per_iteration_falls_back_naming_line_and_variable():
    x = np.arange(3.0)
    with pytest.warns(TranspileWarning) as rec:
        got = jit(gains_an_axis)(x)
    assert got == gains_an_axis(x)
    msg = str(rec[0].message)
    assert f"{os.path.basename(__file__)}:{GAINS_LINE}" in msg, msg
    assert "'y'" in msg and "rt." not in msg


# -- random programs with loops, branches and writes ----------------------------------------------

sys.path.insert(0, os.path.dirname(__file__))
import random_programs as rp  # noqa: E402


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(rp.programs(kinds=("if", "for", "while", "write", "alias")))
def test_random_programs_compile_and_match_numpy(prog):
    src, _ = prog
    f = rp.load(src).f
    x = np.random.default_rng(1).normal(size=rp.N)
    np.testing.assert_allclose(jit(f)(x.copy()), f(x.copy()), rtol=1e-10, atol=1e-12)
    fd = rp.numgrad(lambda z: f(z.copy()), x)
    if np.allclose(fd, rp.numgrad(lambda z: f(z.copy()), x, eps=1e-5), rtol=1e-4, atol=1e-4):
        np.testing.assert_allclose(jit(grad(f))(x.copy()), fd, rtol=1e-5, atol=1e-5)


# -- collectives under pmap: compiled parts split at the barriers ---------------------------------

def normalize_by_psum(x):
    y = np.sin(x) * 2.0 + 3.0
    s = psum(y, "i")
    m = pmean(y * y, "i")
    return y / s + np.cos(x) * m


def test_pmap_with_collectives_runs_compiled_parts():
    from transpile import pmap
    x = np.linspace(0.1, 1.0, 2 * 3).reshape(2, 3)
    p = pmap(normalize_by_psum, axis_name="i")
    got = p(x.copy())
    y = np.sin(x) * 2.0 + 3.0
    want = y / y.sum(0) + np.cos(x) * (y * y).mean(0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    cells = [c.cell_contents for c in p.shard_function().__closure__]
    j = next(c for c in cells if type(c).__name__ == "Jit")
    (compiled,) = j._specs.values()
    assert not compiled.eager
    text = compiled.plan.text
    assert "rt.psum(" in text and "rt.pmean(" in text and "__part2(" in text


def scalar_alias_then_augassign(x):
    s = x[0]
    alias = s           # a NumPy scalar: `s += ...` below rebinds s, alias keeps the old value
    s += np.sum(x * x)
    t = x * s + alias
    return np.sum(t)


def test_jit_of_grad_keeps_the_zero_of_an_unaliased_scalar_apart_from_a_saved_shape():
    """rt.shape_like (a zero in derivative rules) and the tape's shape-only stand-in are two
    primitives; reading the generated grad again under jit must not mistake one for the other
    (it once added the primal value of s to its adjoint)."""
    x = np.array([0.3, -0.7, 1.1, 0.5])
    want = numerical_grad(scalar_alias_then_augassign, [x])
    np.testing.assert_allclose(grad(scalar_alias_then_augassign)(x), want, rtol=1e-6)
    np.testing.assert_allclose(jit(grad(scalar_alias_then_augassign))(x), want, rtol=1e-6)


# -- fixed-length windows with run-time bounds: x[i:i + 3], x[i - 1:i + 2], A[i:i + 2, j:j + 2] ---

def window_sum(x):
    s = 0.0
    for i in range(x.shape[0] - 2):
        s = s + np.sum(x[i:i + 3] ** 2)
    return s


def centered_smooth(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0] - 1):
        out[i] = np.sum(x[i - 1:i + 2] * np.array([0.25, 0.5, 0.25]))
    return np.sum(out ** 2)


def patch_energy(A):
    s = 0.0
    for i in range(A.shape[0] - 1):
        for j in range(A.shape[1] - 1):
            s = s + np.sum(A[i:i + 2, j:j + 2]) ** 2
    return s


def window_past_the_end(x):
    s = 0.0
    for i in range(x.shape[0]):          # the last two windows are shorter in NumPy
        s = s + np.sum(x[i:i + 3] * x[i:i + 3])
    return s


WINDOWS = {"window_sum": (window_sum, np.linspace(-0.9, 1.3, 7)),
           "centered_smooth": (centered_smooth, np.linspace(-0.9, 1.3, 7)),
           "patch_energy": (patch_energy, np.arange(12.0).reshape(3, 4) / 10 - 0.3)}


@pytest.mark.parametrize("name", list(WINDOWS))
def test_fixed_length_windows_compile_with_their_gradients(name):
    f, x = WINDOWS[name]
    j = jit(f)
    np.testing.assert_allclose(j(x.copy()), f(x.copy()), rtol=1e-12)
    assert_compiled(j, x)
    g = jit(grad(f))
    np.testing.assert_allclose(g(x.copy()), numerical_grad(f, [x.copy()]), rtol=1e-6, atol=1e-6)
    assert_compiled(g, x)


def test_a_window_past_the_end_runs_numpy_for_that_call_and_says_so():
    x = np.linspace(-0.9, 1.3, 7)
    j = jit(window_past_the_end)
    with pytest.warns(TranspileWarning, match=r"test_jit_control.py:\d+: a slice with run-time "
                                              r"bounds reached past an end"):
        got = j(x.copy())
    assert got == window_past_the_end(x.copy())
    g = jit(grad(window_past_the_end))
    with pytest.warns(TranspileWarning, match="reached past an end"):
        got = g(x.copy())
    np.testing.assert_allclose(got, numerical_grad(window_past_the_end, [x.copy()]), rtol=1e-6,
                               atol=1e-6)


# -- boolean-mask writes of a scalar ---------------------------------------------------------------

def clip_negative_2d(A):
    B = A * 2.0 - 1.0
    B[B < 0] = 0
    return B


def cap_argument(x):
    x[x > 1.0] = 1.0          # the caller's array is written, as in NumPy
    return np.sum(x)


def test_mask_writes_compile_and_write_the_callers_array():
    A = np.linspace(0, 1, 12).reshape(3, 4)
    j = jit(clip_negative_2d)
    got = j(A.copy())
    np.testing.assert_array_equal(got, clip_negative_2d(A.copy()))
    assert got.dtype == np.float64
    assert_compiled(j, A)
    x = np.linspace(-1, 1.5, 7)
    mine, theirs = x.copy(), x.copy()
    jc = jit(cap_argument)
    # (the sum may be reordered, as the compiled code's fastmath allows: to the last bit)
    np.testing.assert_allclose(jc(mine), cap_argument(theirs), rtol=1e-15)
    np.testing.assert_array_equal(mine, theirs)
    assert_compiled(jc, x)


@pytest.mark.parametrize("name", ["branch_write", "sum_squares", "triangle", "while_data"])
def test_forward_loop_of_jit_grad_allocates_nothing_per_iteration(name):
    # a dead shape stand-in of a write in a loop once lowered to np.zeros(n) per iteration
    # (jit(grad) of branch_write became O(n^2)); values nothing reads are dropped at any depth
    f, _, args = CASES[name]
    text = jit(grad(f)).show_source(*args)
    entry = text[text.index(f"def {f.__name__}__grad__jit("):]
    forward = entry[entry.index("    for "):entry.index("# adjoint")]
    loop_lines = [l for l in forward.splitlines()[1:] if l.startswith("        ")]
    allocations = [l for l in loop_lines if "tape" not in l and   # (a tape doubles: amortized)
                   any(k in l for k in ("np.zeros(", "np.empty(", "np.full(", ".copy()"))]
    assert not allocations, forward
