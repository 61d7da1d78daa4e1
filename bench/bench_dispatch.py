"""Per-call overhead of jit(f) over a direct call of the Numba function it compiled.

    python bench/bench_dispatch.py

For 1, 3 and 8 flat arguments (one small array, the rest floats), 8 arrays, and a dict pytree
of 3 arrays: the time per call of jit(f), of the compiled Numba dispatcher called directly
with the flat arguments, of the same function under numba.njit written by hand, and of plain
NumPy; then the overhead (jit - direct) in microseconds. Best of several repeats, measured
side by side in one process (the machine is shared and noisy: read the ratios).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("TRANSPILE_TIERS", "0")     # compiled tier from the first call here

from transpile import jit  # noqa: E402


def f1(x):
    return x * 2.0


def f3(x, a, b):
    return x * a + b


def f8(x, a, b, c, d, e, g, h):
    return x * a + b - c * d + e * g - h


def f8a(x, a, b, c, d, e, g, h):
    return x + a + b + c + d + e + g + h


def fdict(p, x):
    return np.tanh(x * p["w"] + p["b"]) * p["s"]


def per_call(fn, args, n=20000, repeats=7, kw=None):
    best = float("inf")
    kw = kw or {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args, **kw)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def direct_of(j, args):
    """The compiled Numba dispatcher behind jit j for these arguments, and its flat args."""
    values = j.bind(args, {})
    c, leaves = j.compiled_for_values(values)
    assert not c.eager and c.checked, "not compiled"
    return c.fn, tuple(leaves)


def main():
    import numba
    x = np.ones(10)
    cases = [
        ("1 array", f1, (x,)),
        ("1 array + 2 floats", f3, (x, 1.5, 2.5)),
        ("1 array + 7 floats", f8, (x,) + tuple(float(k) for k in range(1, 8))),
        ("8 arrays", f8a, tuple(np.ones(10) * k for k in range(8))),
        ("dict of 3 arrays + 1 array", fdict,
         ({"w": np.ones(10), "b": np.zeros(10), "s": np.full(10, 2.0)}, x)),
    ]
    print(f"{'arguments':28s} {'jit':>9s} {'direct':>9s} {'njit':>9s} {'numpy':>9s} "
          f"{'overhead':>9s} {'jit/njit':>9s}")
    for name, f, args in cases:
        j = jit(f)
        j(*args)
        fn, flat = direct_of(j, args)
        hand = numba.njit(f) if f is not fdict else None
        if hand is not None:
            hand(*args)
        t_jit = per_call(j, args)
        t_direct = per_call(fn, flat)
        t_hand = per_call(hand, args) if hand is not None else float("nan")
        t_np = per_call(f, args)
        print(f"{name:28s} {t_jit:8.2f}µs {t_direct:8.2f}µs {t_hand:8.2f}µs {t_np:8.2f}µs "
              f"{t_jit - t_direct:8.2f}µs {t_jit / t_hand:9.2f}")
    j, hand = jit(f3), numba.njit(f3)
    kw = {"a": 1.5, "b": 2.5}
    j(x, **kw)
    hand(x, **kw)
    fn, flat = direct_of(j, (x, 1.5, 2.5))
    t_jit, t_direct = per_call(j, (x,), kw=kw), per_call(fn, flat)
    t_hand, t_np = per_call(hand, (x,), kw=kw), per_call(f3, (x,), kw=kw)
    print(f"{'1 array + 2 floats by name':28s} {t_jit:8.2f}µs {t_direct:8.2f}µs {t_hand:8.2f}µs "
          f"{t_np:8.2f}µs {t_jit - t_direct:8.2f}µs {t_jit / t_hand:9.2f}")
    print("(overhead = jit - direct call of the compiled dispatcher; target <= 2 µs for flat "
          "arguments; njit: numba.njit of the same function by hand)")


def row_sum(x):
    return np.sum(np.tanh(x) * 2.0, axis=1)


def busy_core():
    """The issue's one-core-busy test: a fused row sum of 600x600 with and without another
    process spinning on one core, with the parallel loop's adaptive thread count
    (transpile.compile.specialization.AdaptiveThreads) and with all threads forced."""
    import subprocess
    import numba
    x = np.random.default_rng(0).standard_normal((600, 600))
    j = jit(row_sum)
    j(x)
    c = next(iter(j._specs.values()))
    fn = c.fn
    raw = getattr(fn, "fn", fn)

    def all_threads(*a):
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        return raw(*a)

    def timed(call):
        for _ in range(50):
            call()
        return per_call(call, (), n=200) / 1e3
    res = {}
    for label in ("quiet", "one core busy"):
        spinner = None
        if label != "quiet":
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            time.sleep(0.5)
        try:
            res[label, "adaptive"] = timed(lambda: j(x))
            res[label, "all threads"] = timed(lambda: all_threads(x))
            numba.set_num_threads(1)
            res[label, "one thread"] = timed(lambda: raw(x))
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
    best_quiet = min(v for (lab, _), v in res.items() if lab == "quiet")
    print(f"\nfused row sum 600x600 (parallel loop; {numba.config.NUMBA_NUM_THREADS} threads, "
          f"loadavg {os.getloadavg()[0]:.1f} before the spinner)")
    print(f"{'':16s} {'adaptive':>10s} {'all threads':>12s} {'one thread':>11s}")
    for label in ("quiet", "one core busy"):
        print(f"{label:16s} {res[label, 'adaptive']:9.3f}ms {res[label, 'all threads']:11.3f}ms "
              f"{res[label, 'one thread']:10.3f}ms")
    print(f"one core busy, adaptive / best quiet: {res['one core busy', 'adaptive'] / best_quiet:.2f}"
          f" (target <= 1.5); all threads / best quiet: "
          f"{res['one core busy', 'all threads'] / best_quiet:.2f}")


if __name__ == "__main__":
    main()
    busy_core()
