"""Loops under jit: ours vs NumPy (the plain Python function), the same loop hand-written with
@numba.njit, and JAX (jit of the lax.fori_loop / scan / while_loop rewrite); and jit(grad(f))
vs JAX's jit(grad(...)).

    python bench/bench_loops.py [scale]      # scale 1 (default) ~ a minute on a quiet machine

Six loop shapes: a sum of squares over x[i], explicit Euler steps, an RNN
h = tanh(W @ h + xs[t]), an `if` + subscript write per element, a `while` on data, and a
triangular double loop over A[i, j]. Each time is the best of a few runs after a warm-up call
(compilation excluded). Ratios below 1 mean ours is faster. The last lines are geometric means.
A fallback to NumPy is reported (it would make the ratio meaningless).
"""
import math
import os
import sys
import time
import warnings

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # steady-state times: calls wait for the compiler

os.environ.setdefault("TRANSPILE_CACHE_DIR", "/tmp/tp-bench-loops")

import transpile as tp  # noqa: E402
from transpile.errors import TranspileWarning  # noqa: E402

try:
    import numba
except ImportError:          # pragma: no cover
    numba = None
try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax
except ImportError:          # pragma: no cover
    jax = None

EULER_STEPS = 200


# -- the user's loops (NumPy) ---------------------------------------------------------------------

def sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
    return s


def euler(y):
    for t in range(EULER_STEPS):
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
    while s < 1e9 and i < x.shape[0]:
        s = s + x[i] * x[i]
        i = i + 1
    return s


def triangle(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(i + 1):
            s = s + A[i, j] * A[j, i]
    return s


# -- the same loops by hand with @numba.njit ------------------------------------------------------

def _hand():
    nj = numba.njit(cache=False, error_model="numpy")

    @nj
    def h_sum_squares(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i]
        return s

    @nj
    def h_euler(y0):
        y = y0.copy()
        for t in range(EULER_STEPS):
            for k in range(y.shape[0]):
                y[k] = y[k] + 0.01 * (-y[k] * abs(y[k]) + math.sin(y[k]))
        return y.sum()

    @nj
    def h_rnn(W, xs):
        n = W.shape[0]
        h = np.zeros(n)
        hn = np.empty(n)
        for t in range(xs.shape[0]):
            for a in range(n):
                acc = xs[t, a]
                for b in range(n):
                    acc += W[a, b] * h[b]
                hn[a] = math.tanh(acc)
            h, hn = hn, h
        return h.sum()

    @nj
    def h_branch_write(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            if x[i] > 0:
                out[i] = x[i] * 2.0
            else:
                out[i] = math.sin(x[i])
        return (out * out).sum()

    @nj
    def h_while_data(x):
        s = 0.0
        i = 0
        while s < 1e9 and i < x.shape[0]:
            s += x[i] * x[i]
            i += 1
        return s

    @nj
    def h_triangle(A):
        s = 0.0
        for i in range(A.shape[0]):
            for j in range(i + 1):
                s += A[i, j] * A[j, i]
        return s
    return dict(sum_squares=h_sum_squares, euler=h_euler, rnn=h_rnn,
                branch_write=h_branch_write, while_data=h_while_data, triangle=h_triangle)


# -- JAX rewrites (lax loops) ---------------------------------------------------------------------

def _jax():
    def j_sum_squares(x):
        return lax.fori_loop(0, x.shape[0], lambda i, s: s + x[i] * x[i], 0.0)

    def j_euler(y):
        step = lambda t, y: y + 0.01 * (-y * jnp.abs(y) + jnp.sin(y))   # noqa: E731
        return jnp.sum(lax.fori_loop(0, EULER_STEPS, step, y))

    def j_rnn(W, xs):
        h, _ = lax.scan(lambda h, x: (jnp.tanh(W @ h + x), None), jnp.zeros(W.shape[0]), xs)
        return jnp.sum(h)

    def j_branch_write(x):
        def body(i, out):
            v = lax.cond(x[i] > 0, lambda: x[i] * 2.0, lambda: jnp.sin(x[i]))
            return out.at[i].set(v)
        out = lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))
        return jnp.sum(out * out)

    def j_while_data(x):
        def cond(c):
            return (c[0] < 1e9) & (c[1] < x.shape[0])
        return lax.while_loop(cond, lambda c: (c[0] + x[c[1]] * x[c[1]], c[1] + 1),
                              (0.0, 0))[0]

    def j_triangle(A):
        def row(i, s):
            return lax.fori_loop(0, i + 1, lambda j, s: s + A[i, j] * A[j, i], s)
        return lax.fori_loop(0, A.shape[0], row, 0.0)

    def j_triangle_masked(A):
        # JAX cannot reverse-differentiate a fori_loop with a dynamic bound (j <= i): the
        # gradient's rewrite runs the full square with a mask
        n = A.shape[0]

        def row(i, s):
            return lax.fori_loop(0, n, lambda j, s: s + jnp.where(j <= i, A[i, j] * A[j, i],
                                                                   0.0), s)
        return lax.fori_loop(0, n, row, 0.0)
    fns = dict(sum_squares=j_sum_squares, euler=j_euler, rnn=j_rnn,
               branch_write=j_branch_write, while_data=j_while_data, triangle=j_triangle)
    grads = dict(fns, triangle=j_triangle_masked)
    del grads["while_data"]            # JAX cannot reverse-differentiate a while_loop
    return fns, grads


def best(fn, args, repeat=5, budget=2.0):
    fn(*args)                                  # warm-up (compiles)
    times = []
    start = time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        r = fn(*args)
        if jax is not None and hasattr(r, "block_until_ready"):
            r.block_until_ready()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget:
            break
    return min(times)


def _ms(t):
    return "     n/a" if t is None else f"{t * 1e3:8.3f}"


def _ratio(a, b):
    return "   n/a" if a is None or b is None else f"{a / b:6.2f}"


def gmean(pairs):
    """Geometric mean of the ratios a / b over the pairs where both were measured."""
    vals = [a / b for a, b in pairs if a is not None and b is not None]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else float("nan")


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rng = np.random.default_rng(0)
    n = int(100_000 * scale)
    m = int(200 * math.sqrt(scale))
    inputs = {
        "sum_squares": (rng.standard_normal(n),),
        "euler": (rng.standard_normal(int(1000 * scale)),),
        "rnn": (rng.standard_normal((32, 32)) * 0.2, rng.standard_normal((int(500 * scale), 32))),
        "branch_write": (rng.standard_normal(n),),
        "while_data": (rng.standard_normal(n),),
        "triangle": (rng.standard_normal((m, m)),),
    }
    users = dict(sum_squares=sum_squares, euler=euler, rnn=rnn, branch_write=branch_write,
                 while_data=while_data, triangle=triangle)
    hand = _hand() if numba is not None else {}
    jx, jgrads = _jax() if jax is not None else ({}, {})
    rows, fallbacks = [], []
    print(f"{'workload':13} {'numpy ms':>9} {'jit ms':>8} {'numba ms':>8} {'jax ms':>8} "
          f"{'jit/numpy':>9} {'jit/numba':>9} {'jit/jax':>7} | {'grad ms':>8} {'jaxgrad':>8} "
          f"{'grad/jit':>8} {'grad/jax':>8}")
    for name, f in users.items():
        args = inputs[name]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", TranspileWarning)
            jf, jg = tp.jit(f), tp.jit(tp.grad(f))
            jf(*args)
            jg(*args)
        fb = [str(x.message) for x in w if issubclass(x.category, TranspileWarning)]
        if fb:
            fallbacks.append((name, fb[0]))
        t_np = best(f, args, repeat=2, budget=1.0)
        t_jit = best(jf, args)
        t_hand = best(hand[name], args) if hand else None
        t_grad = best(jg, args)
        t_jax = t_jgrad = None
        if jx:
            jj = jax.jit(jx[name])
            jargs = [jnp.asarray(a) for a in args]
            t_jax = best(jj, jargs)
            if name in jgrads:
                t_jgrad = best(jax.jit(jax.grad(jgrads[name])), jargs)
        rows.append((name, t_np, t_jit, t_hand, t_jax, t_grad, t_jgrad))
        print(f"{name:13} {_ms(t_np):>9} {_ms(t_jit)} {_ms(t_hand)} {_ms(t_jax)} "
              f"{_ratio(t_jit, t_np):>9} {_ratio(t_jit, t_hand):>9} {_ratio(t_jit, t_jax):>7} | "
              f"{_ms(t_grad)} {_ms(t_jgrad)} {_ratio(t_grad, t_jit):>8} "
              f"{_ratio(t_grad, t_jgrad):>8}", flush=True)

    print(f"\ngeometric means: jit/numpy {gmean([(r[2], r[1]) for r in rows]):.3f}   "
          f"jit/hand-numba {gmean([(r[2], r[3]) for r in rows]):.3f}   "
          f"jit/jax {gmean([(r[2], r[4]) for r in rows]):.3f}   "
          f"jit(grad)/jit {gmean([(r[5], r[2]) for r in rows]):.3f}   "
          f"jit(grad)/jax-grad {gmean([(r[5], r[6]) for r in rows]):.3f}")
    for name, msg in fallbacks:
        print(f"FALLBACK {name}: {msg}")


if __name__ == "__main__":
    main()
