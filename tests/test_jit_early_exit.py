"""Loops under jit leave at their `break` (optimize/early_exit.py): the iterations after it
used to run with the body skipped, so a search that stops at item k of n cost n iterations.
Numbers are checked against plain Python, and the generated code for the exit."""
import re
import warnings

import numpy as np
import pytest

from fd import numerical_grad
from transpile import grad, jit
from transpile.errors import TranspileWarning


def first_above(X, thresh):
    for i, row in enumerate(X):
        if row.sum() > thresh:
            found = i
            break
    else:
        found = -1
    return found


def nested_search(X):
    tot = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] < 0.1:
                break
            tot += X[i, j]
        if tot > 5:
            break
    return tot, i


def skip_and_stop(x):
    s = 0.0
    count = 0
    for v in x:
        if v < 0.2:
            continue
        if v > 0.9:
            break
        s += v
        count += 1
    return s, count


def last_item_seen(x):
    last = 0.0
    for k in range(x.shape[0]):
        last = x[k]
        if last > 0.8:
            break
    return last, k


def writes_until(x, limit):
    out = np.zeros_like(x)
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
        if total > limit:
            break
        out[i] = total
    return out


def while_inside(x):
    steps = 0
    for i in range(x.shape[0]):
        v = x[i]
        while v > 0.01:
            v = v / 2.0
            steps += 1
        if steps > 30:
            break
    return steps


CASES = [
    (first_above, lambda r: (r.random((40, 3)), 2.2)),
    (first_above, lambda r: (r.random((40, 3)), 9.0)),          # never breaks: the else
    (nested_search, lambda r: (r.random((9, 7)),)),
    (skip_and_stop, lambda r: (r.random(50),)),
    (last_item_seen, lambda r: (r.random(30),)),
    (writes_until, lambda r: (r.random(30), 4.0)),
    (while_inside, lambda r: (r.random(20),)),
]


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                  enumerate(CASES)])
def test_breaking_loops_give_pythons_numbers_compiled(f, make):
    for seed in range(3):
        args = make(np.random.default_rng(seed))
        compiled = jit(f)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TranspileWarning)
            got = compiled(*args)
        assert compiled.last_tier == "compiled"
        _same(got, f(*args))


def test_the_search_loop_leaves_at_its_break():
    from transpile import show
    args = (np.random.default_rng(0).random((40, 3)), 2.2)
    text = show(jit(first_above), *args)
    assert re.search(r"^\s+if _break\w*:\n\s+break$", text, re.M), text


def loss_until(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i]) * x[i]
        if s > 1.5:
            break
    return s


def test_jit_grad_of_a_breaking_loop_matches_finite_differences():
    # derivative code keeps the flag (its reverse pass reads what each iteration saved)
    x = np.linspace(0.2, 1.4, 12)
    want = numerical_grad(loss_until, [x])
    np.testing.assert_allclose(grad(loss_until)(x), want, rtol=1e-6, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        np.testing.assert_allclose(jit(grad(loss_until))(x), want, rtol=1e-6, atol=1e-8)
