"""Batched loops under jit: jit(vmap(f)) and jit(vmap(grad(f))) vs a hand-written Numba loop over
the batch, JAX's jit(vmap(...)) of the lax loop rewrite, and NumPy (a Python loop over the
examples calling the plain function).

    python bench/bench_vmap_loops.py [scale]     # scale 1 (default) ~ a minute

The workloads are the loop shapes of bench/bench_loops.py with a batch of 32 examples.
jit(vmap(f)) of a loop compiles either the batched code or, where a batched step has no Numba
lowering, one loop over the batch whose body is the per-example compiled code. Each time is
the best of a few runs after a warm-up call; ratios below 1 mean ours is faster. A fallback to
NumPy is reported (it would make the ratio meaningless).
"""
import math
import os
import sys
import warnings

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # steady-state times: calls wait for the compiler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TRANSPILE_CACHE_DIR", "/tmp/tp-bench-vmap-loops")

import bench_loops as BL  # noqa: E402
import transpile as tp  # noqa: E402
from transpile.errors import TranspileWarning  # noqa: E402

BATCH = 32
NAMES = ["sum_squares", "euler", "branch_write", "while_data", "triangle"]


def _hand_batched(hand):
    """A Numba loop over the batch calling the hand-written per-example function."""
    import numba
    out = {}
    for name in NAMES:
        one = hand[name]

        def make(one):
            @numba.njit(cache=False, error_model="numpy")
            def batched(xs):
                res = np.empty(xs.shape[0])
                for b in range(xs.shape[0]):
                    res[b] = one(xs[b])
                return res
            return batched
        out[name] = make(one)
    return out


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rng = np.random.default_rng(0)
    n = int(10_000 * scale)
    m = int(60 * math.sqrt(scale))
    inputs = {
        "sum_squares": rng.standard_normal((BATCH, n)),
        "euler": rng.standard_normal((BATCH, int(100 * scale))),
        "branch_write": rng.standard_normal((BATCH, n)),
        "while_data": rng.standard_normal((BATCH, n)),
        "triangle": rng.standard_normal((BATCH, m, m)),
    }
    users = {k: getattr(BL, k) for k in NAMES}
    hand = _hand_batched(BL._hand()) if BL.numba is not None else {}
    jx, jgrads = BL._jax() if BL.jax is not None else ({}, {})
    rows, fallbacks = [], []
    print(f"batch {BATCH}")
    print(f"{'workload':13} {'numpy ms':>9} {'jit(vmap)':>9} {'numba ms':>8} {'jax ms':>8} "
          f"{'/numpy':>7} {'/numba':>7} {'/jax':>6} | {'jit(vmap(grad))':>15} {'jax':>8} "
          f"{'/jax':>6}")
    for name, f in users.items():
        xs = inputs[name]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", TranspileWarning)
            jv, jg = tp.jit(tp.vmap(f)), tp.jit(tp.vmap(tp.grad(f)))
            np.testing.assert_allclose(jv(xs), [f(x) for x in xs], rtol=1e-9)
            jg(xs)
        fb = [str(x.message) for x in w if issubclass(x.category, TranspileWarning)]
        if fb:
            fallbacks.append((name, fb[0]))

        def loop(xs, f=f):
            return np.array([f(x) for x in xs])
        t_np = BL.best(loop, (xs,), repeat=2, budget=1.0)
        t_jit = BL.best(jv, (xs,))
        t_hand = BL.best(hand[name], (xs,)) if hand else None
        t_grad = BL.best(jg, (xs,))
        t_jax = t_jgrad = None
        if jx:
            jxs = BL.jnp.asarray(xs)
            t_jax = BL.best(BL.jax.jit(BL.jax.vmap(jx[name])), (jxs,))
            if name in jgrads:     # (no while_loop: JAX cannot reverse-differentiate it)
                t_jgrad = BL.best(BL.jax.jit(BL.jax.vmap(BL.jax.grad(jgrads[name]))), (jxs,))
        rows.append((name, t_np, t_jit, t_hand, t_jax, t_grad, t_jgrad))
        print(f"{name:13} {BL._ms(t_np):>9} {BL._ms(t_jit):>9} {BL._ms(t_hand)} "
              f"{BL._ms(t_jax)} {BL._ratio(t_jit, t_np):>7} {BL._ratio(t_jit, t_hand):>7} "
              f"{BL._ratio(t_jit, t_jax):>6} | {BL._ms(t_grad):>15} {BL._ms(t_jgrad)} "
              f"{BL._ratio(t_grad, t_jgrad):>6}", flush=True)

    gmean = BL.gmean
    print(f"\ngeometric means: jit(vmap)/numpy {gmean([(r[2], r[1]) for r in rows]):.3f}   "
          f"jit(vmap)/hand-numba {gmean([(r[2], r[3]) for r in rows]):.3f}   "
          f"jit(vmap)/jax {gmean([(r[2], r[4]) for r in rows]):.3f}   "
          f"jit(vmap(grad))/jax {gmean([(r[5], r[6]) for r in rows]):.3f}")
    for name, msg in fallbacks:
        print(f"FALLBACK {name}: {msg}")


if __name__ == "__main__":
    main()
