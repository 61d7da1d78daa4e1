"""Reverse and forward mode through Python control flow, subscript writes and calls,
checked against central finite differences in float64."""
import numpy as np
import pytest

import transpile

from fd_helpers import numgrad
from transpile import TranspileError, grad, jit, jvp, show, value_and_grad

RNG = np.random.default_rng(0)


def check(f, x, *rest, atol=1e-6):
    x = np.asarray(x, dtype=np.float64)
    g = grad(f)(x, *rest)
    want = numgrad(lambda v: f(v, *rest), x)
    np.testing.assert_allclose(g, want, atol=atol, rtol=1e-6)
    t = RNG.standard_normal(np.shape(x))
    # (an integer primal takes a float0 tangent, as in JAX)
    zeros = tuple(np.zeros(np.shape(r), dtype=transpile.float0)
                  if np.asarray(r).dtype.kind in "biu" else np.zeros_like(r) for r in rest)
    _, tan = jvp(f, (x,) + rest, (t,) + zeros)
    np.testing.assert_allclose(tan, np.sum(want * t), atol=atol, rtol=1e-6)
    return g


def branches(x):
    if np.sum(x) > 0:
        y = x * 2.0
    elif np.sum(x) > -1:
        y = np.sin(x)
    else:
        y = x ** 3
    return np.sum(y * x)


@pytest.mark.parametrize("x", [[0.5, 1.0], [-0.2, -0.3], [-2.0, -1.0]])
def test_if_elif_else_on_data(x):
    check(branches, x)


def ifexp(x):
    y = x * x if x > 1.0 else -x
    return y * 3.0


def test_conditional_expression():
    check(ifexp, 2.0)
    check(ifexp, 0.5)


def loop_with_if(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + x[i] ** 3
        else:
            s = s - np.sin(x[i])
    return s


def test_for_range_with_if():
    g = check(loop_with_if, [1.0, -2.0, 3.0], 3)
    np.testing.assert_allclose(g, [3.0, -np.cos(-2.0), 27.0])


def arange_loop(x):
    s = 0.0
    for i in np.arange(1, 4):
        s = s + x[i] * x[i - 1]
    return s


def test_for_arange():
    check(arange_loop, RNG.standard_normal(5))


def over_rows(x):
    s = 0.0
    for row in x:
        s = s + np.sum(np.tanh(row)) * row[0]
    return s


def test_for_over_array_rows():
    check(over_rows, RNG.standard_normal((3, 2)))


def zipped(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * np.exp(b)
    for i, a in enumerate(x):
        s = s + i * a * a
    return s


def test_zip_and_enumerate():
    y = RNG.standard_normal(3)
    check(zipped, RNG.standard_normal(3), y)


def mlp(params, x):
    h = x
    for W, b in params:
        h = np.tanh(W @ h + b)
    return np.sum(h)


def test_unrolled_loop_over_list_of_params():
    params = [(RNG.standard_normal((3, 2)), RNG.standard_normal(3)),
              (RNG.standard_normal((1, 3)), RNG.standard_normal(1))]
    x = RNG.standard_normal(2)
    g = grad(mlp)(params, x)
    W0 = params[0][0]

    def f(w):
        return mlp([(w, params[0][1]), params[1]], x)
    np.testing.assert_allclose(g[0][0], numgrad(f, W0), atol=1e-6)


def rnn(W, h0, xs):
    T = xs.shape[0]
    h = np.zeros((T + 1, h0.shape[0]))
    h[0] = h0
    for t in range(T):
        h[t + 1] = np.tanh(W @ h[t] + xs[t])
    return np.sum(h ** 2)


def test_rnn_writes_h_t_plus_1():
    W, h0, xs = RNG.standard_normal((3, 3)), RNG.standard_normal(3), RNG.standard_normal((4, 3))
    gW, gh0 = grad(rnn, argnums=(0, 1))(W, h0, xs)
    np.testing.assert_allclose(gW, numgrad(lambda w: rnn(w, h0, xs), W), atol=1e-6)
    np.testing.assert_allclose(gh0, numgrad(lambda h: rnn(W, h, xs), h0), atol=1e-6)
    src = grad(rnn).source_for(W, h0, xs)
    assert "tape.push(" in src and "tape.pop()" in src and "rt.setitem(" in src
    compile(src, "<generated>", "exec")


def triangular(A, rows, cols):
    s = 0.0
    for i in np.arange(rows):
        for j in np.arange(i, cols):
            s = s + A[i, j] * A[i, j] * (j + 1)
    return s


def test_triangular_double_loop():
    A = RNG.standard_normal((3, 4))
    g = check(triangular, A, 3, 4)
    want = np.triu(2 * A * (np.arange(4) + 1))
    np.testing.assert_allclose(g, want, atol=1e-8)


def halve(a):
    while np.abs(a) > 0.1:
        a = a / 2 + 0.01 * a * a
    return a


def test_while_halving():
    for a0 in (3.0, -5.0, 0.05):
        check(halve, a0)


def break_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        s = s + np.sqrt(x[i]) * s + x[i]
        if s > 3.0:
            break
    return s


def test_break_and_continue():
    check(break_continue, [0.5, -1.0, 0.7, 2.5, 4.0, 1.0])
    check(break_continue, [0.1, 0.2, -0.3])


def while_break(x):
    k = 0.0
    while True:
        x = x * 1.5
        k = k + 1.0
        if x > 10.0:
            break
    return x * k


def test_while_true_with_break():
    check(while_break, 1.3)


def innermost(o):
    while isinstance(o, tuple):     # known at each step while generating code: unrolled
        o = o[0]
    return o


def nested_first(x):
    return np.sum(innermost(((x * 2.0, 1), 3)) ** 2) + innermost(x[0])


def popped_total(x):
    s = [x, 2.0 * x, np.sin(x)]
    t = 0.0
    while len(s) > 0:
        t = t + np.sum(s.pop() * x)
    return t


@pytest.mark.filterwarnings("error::transpile.TranspileWarning")
def test_while_on_the_structure_of_values():
    """A while loop whose condition reads only the structure of values (isinstance, the
    length of a list) is decided at each step while generating code; a condition on a
    number known at entry (`i = 0; while i < 3`) still becomes a compiled loop."""
    x = np.array([0.5, -1.0, 2.0])
    for f in (nested_first, popped_total):
        check(f, x)
        assert jit(f, wait=True)(x) == pytest.approx(f(x), rel=1e-14)
        np.testing.assert_allclose(jit(grad(f), wait=True)(x), grad(f)(x), rtol=1e-14)

    def forever(x):
        o = (x,)
        while isinstance(o, tuple):
            o = (o,)
        return o
    with pytest.raises(TranspileError, match="known when the code is generated and still "
                                             "true after 64 steps"):
        jit(forever, wait=True)(x)

    def counted(x):
        i = 0
        while i < 3:
            x = x * 2.0
            i += 1
        return np.sum(x)
    assert "while " in show(jit(counted), x)


def helper(a, b):
    return np.sin(a) * b


def calls_in_loop(x):
    s = x[0]
    for i in range(1, x.shape[0]):
        s = helper(s, x[i]) + s
    return s


def test_user_function_called_in_loop():
    check(calls_in_loop, RNG.standard_normal(4))


def aug_subscript(x):
    y = np.zeros(4)
    y[1:3] = x[:2] * 2.0
    y[0] += x[2] ** 2
    y[3] = np.sum(y[:3])
    y[1:3] *= x[1]
    return np.sum(y * y)


def test_slice_writes_and_augmented_subscripts():
    check(aug_subscript, RNG.standard_normal(3))


def closures(x, n):
    scale = 3.0

    def inner(v):
        return np.tanh(v) * scale + x[0]
    sq = lambda v: v * v  # noqa: E731
    s = 0.0
    for i in range(n):
        s = s + inner(sq(x[i]))
    return s


def test_nested_def_lambda_and_closure():
    check(closures, RNG.standard_normal(3), 3)


def comprehension(x):
    parts = [x[i] * (i + 1.0) for i in range(3)]
    return np.sum(np.stack(parts) ** 2) + np.sum(np.stack([p * 2.0 for p in parts if True]))


def test_list_comprehension():
    check(comprehension, RNG.standard_normal(3))


def test_value_and_grad_through_loop():
    v, g = value_and_grad(loop_with_if)(np.array([1.0, -2.0, 3.0]), 3)
    assert np.isclose(v, loop_with_if(np.array([1.0, -2.0, 3.0]), 3))


def test_float32_preserved_through_loop():
    x = np.array([0.5, -0.25, 2.0], dtype=np.float32)
    g = grad(loop_with_if)(x, 3)
    assert g.dtype == np.float32


def test_aliasing_keeps_old_value():
    def f(x):
        z = x
        x = x * 2
        return z + x
    assert grad(f)(1.0) == 3.0


# ---- refusals ---------------------------------------------------------------------------------

G = np.zeros(3)


def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_generator(x):
    def gen():
        yield x
    return x


def recursive(x):
    return recursive(x * 0.5) if x > 1 else x


def mutates_global(x):
    G[0] = x
    return x


def uses_global_stmt(x):
    global G
    return x


def return_in_loop(x):
    for i in range(3):
        for j in range(2):     # a return in a loop nested in a loop: each loop breaks
            return x * (i + j + 2.0)
    return x


def test_return_in_nested_loop():
    assert grad(return_in_loop)(2.0) == pytest.approx(2.0)
    assert jit(return_in_loop, wait=True)(2.0) == pytest.approx(4.0)


@pytest.mark.parametrize("fn, text", [
    (uses_try, "try/except"), (uses_generator, "generator"), (recursive, "recursive"),
    (mutates_global, "global"), (uses_global_stmt, "global")])
def test_unsupported_constructs_name_file_and_line(fn, text):
    with pytest.raises(TranspileError) as info:
        grad(fn)(2.0)
    msg = str(info.value)
    assert text in msg
    assert "test_control_flow.py:" in msg


def test_generated_control_flow_source_is_plain_python():
    src = show(loop_with_if, np.ones(3), 3)
    assert "for i in range(" in src and "if " in src
    src = grad(halve).source_for(3.0)
    assert "while True:" in src and "tape.push(" in src and "= tape.pop()" in src
    compile(src, "<generated>", "exec")
