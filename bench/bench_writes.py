"""Cost of subscript writes, and the memory eager grad needs (issue 11).

Run: python bench/bench_writes.py        Two tables:
  1. a loop writing one row per iteration, n and 10n writes, under plain eager code, grad, jit
     and jit(grad): the time ratio t(10n)/t(n) should be ~10 (it was 20-30 when every write
     copied the whole array). jit lines say when jit fell back to NumPy.
  2. a recurrence (reads h[t], writes h[t + 1]) under eager code, grad, jvp and vmap;
  3. peak traced memory (tracemalloc) of eager grad of sum_logistic on 10^7 float64, against
     NumPy evaluating the function itself (and autograd's grad when installed).
"""
import os
import time
import tracemalloc
import warnings

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # steady-state times: calls wait for the compiler

from transpile import grad, jit
from transpile.api.autodiff import Plain
from transpile.errors import TranspileWarning


def fill(x, n):
    out = np.zeros((n, x.shape[0]))
    for i in range(n):
        out[i] = np.sin(x * i)
        out[i, 0] = x[1] * i
    return np.sum(out * out)


def seconds(fn, *args, repeat=3):
    fn(*args)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def writes_table(n=1000, width=64):
    x = np.random.default_rng(0).standard_normal(width)
    print(f"writes: one row of {width} per iteration; ratio = t({10 * n} writes) / t({n} writes)")
    print(f"{'transform':<12} {'t(n) ms':>10} {'t(10n) ms':>10} {'ratio':>7}  note")
    for label, make in [("eager", lambda: Plain(fill)), ("grad", lambda: grad(fill)),
                        ("jit", lambda: jit(fill, static_argnums=1)),
                        ("jit(grad)", lambda: jit(grad(fill), static_argnums=1))]:
        fn = make()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TranspileWarning)
            t1 = seconds(fn, x, n)
            t10 = seconds(fn, x, 10 * n)
        note = "NumPy fallback" if any(issubclass(w.category, TranspileWarning)
                                       for w in caught) else ""
        print(f"{label:<12} {t1 * 1e3:10.2f} {t10 * 1e3:10.2f} {t10 / t1:7.1f}  {note}")


def rnn(x, W, n):
    h = np.zeros((n + 1, x.shape[1]))
    for t in range(n):
        h[t + 1] = np.tanh(W @ h[t] + x[t])      # reads h[t], writes h[t + 1]
    return np.sum(h ** 2)


def rnn_table(n=500, width=16):
    """A recurrence reading one row and writing the next, under grad, jvp and vmap."""
    from transpile import jvp, vmap
    rng = np.random.default_rng(0)
    W = rng.standard_normal((width, width)) * 0.3
    print(f"\nrnn: h[t + 1] = tanh(W @ h[t] + x[t]), width {width}; "
          f"ratio = t({10 * n} steps) / t({n} steps)")
    print(f"{'transform':<12} {'t(n) ms':>10} {'t(10n) ms':>10} {'ratio':>7}")
    rows = [("eager", Plain(rnn)), ("grad", grad(rnn)),
            ("jvp", lambda x, W, n: jvp(lambda z: rnn(z, W, n), (x,), (np.ones_like(x),))),
            ("vmap", lambda x, W, n: vmap(rnn, in_axes=(None, 0, None))(x, np.stack([W, W]),
                                                                        n))]
    for label, fn in rows:
        ts = [seconds(fn, rng.standard_normal((m, width)), W, m, repeat=2) for m in (n, 10 * n)]
        print(f"{label:<12} {ts[0] * 1e3:10.2f} {ts[1] * 1e3:10.2f} {ts[1] / ts[0]:7.1f}")


def sum_logistic(x):
    return np.sum(1 / (1 + np.exp(-x)))


def peak_bytes(fn, x):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def memory_table(n=10 ** 7):
    x = np.random.default_rng(0).standard_normal(n)
    g = grad(sum_logistic)
    g(x[:10])
    base = peak_bytes(sum_logistic, x)
    print(f"\npeak memory on sum_logistic, {n:.0e} float64 (x itself not counted)")
    print(f"{'':<28} {'MB':>8} {'x NumPy f':>10}")
    print(f"{'NumPy evaluating f':<28} {base / 1e6:8.0f} {1.0:10.2f}")
    got = peak_bytes(g, x)
    print(f"{'transpile grad (eager)':<28} {got / 1e6:8.0f} {got / base:10.2f}")
    try:
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(lambda v: anp.sum(1 / (1 + anp.exp(-v))))
        a = peak_bytes(ag, x)
        print(f"{'autograd grad':<28} {a / 1e6:8.0f} {a / base:10.2f}")
    except ImportError:
        pass


if __name__ == "__main__":
    writes_table()
    rnn_table()
    memory_table()
