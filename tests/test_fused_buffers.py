"""A fused loop writes its result into the buffer of an input that dies there (optimize/fusion.py
`store_into_dying_inputs`): `out += part` in a loop and `h = np.maximum(h * s, 0)` allocate no
new array. Never where the old value is still read: a view of the input, a transpose of it, the
input returned, read again later, or read at another index. Each case is compared with NumPy,
with any fallback an error."""
import warnings

import numpy as np
import pytest

from transpile import jit, show
from transpile.errors import TranspileWarning


def accumulate_parts(x, w):
    out = np.zeros((x.shape[0], w.shape[1]))
    for k in range(3):
        out += np.tanh(x * (k + 1.0)) @ w
    return out


def scale_then_relu(x, w, s):
    h = x @ w
    h = np.maximum(h * s, 0.0)
    return h - 1.0


def view_still_read(x):
    a = x * 2.0
    b = a[1:]               # shares a's buffer, read after the loop that reads a
    c = a + 1.0
    return c, b


def transpose_read_too(x):
    a = x * 2.0
    return a + a.T          # a and a.T share one buffer


def input_returned(x):
    a = x * 2.0
    c = a + 1.0
    return a, c


def read_again_later(x):
    a = np.sin(x)
    c = a * 3.0
    return np.sum(c) + np.sum(a)


def shifted_neighbour(x):
    a = x * 2.0
    a = a[1:] + a[:-1]      # two reads at other indices
    return a * 0.5


def alias_rebound_in_loop(x):
    a = x + 0.0
    keep = a
    for _ in range(3):
        a = a * 0.5 + 1.0   # keep still holds the first buffer
    return a, keep


CASES = [
    (accumulate_parts, lambda r: (r.standard_normal((50, 4)), r.standard_normal((4, 3))), True),
    (scale_then_relu, lambda r: (r.standard_normal((30, 5)), r.standard_normal((5, 4)),
                                 r.random(4)), True),
    (view_still_read, lambda r: (r.standard_normal(20),), False),
    (transpose_read_too, lambda r: (r.standard_normal((6, 6)),), False),
    (input_returned, lambda r: (r.standard_normal(20),), False),
    (read_again_later, lambda r: (r.standard_normal(20),), False),
    (shifted_neighbour, lambda r: (r.standard_normal(20),), False),
    (alias_rebound_in_loop, lambda r: (r.standard_normal(20),), False),
]


def _same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0].__name__ for c in CASES])
def test_a_loop_writing_into_a_dying_input_gives_numpys_values(case):
    f, make, reused = CASES[case]
    args = make(np.random.default_rng(case))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TranspileWarning)
        got = jit(f)(*[np.copy(a) for a in args])
    _same(got, f(*[np.copy(a) for a in args]))
    if reused:
        code = [ln.strip() for ln in show(jit(f), *args).splitlines()
                if not ln.strip().startswith("#")]
        # the loop's result named as the input's buffer (`v = a` before the kernel call),
        # and no new array for it
        calls = [k for k, ln in enumerate(code) if "__fused" in ln and "def " not in ln]
        assert any(" = " in code[k - 1] and code[k - 1].split(" = ")[1].isidentifier()
                   for k in calls), "\n".join(code)
