"""Python int arguments under jit: cost of a call with a new int value, dynamic (the default)
vs specialized on the value (static_argnums, the old behaviour), vs plain NumPy.

    python bench/bench_dynamic_ints.py [calls]
"""
import os
import sys
import time

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # steady-state times: calls wait for the compiler

import transpile as tp


def step(i, x):
    lr = 0.1 / (1 + i)
    return x - lr * np.tanh(x)


def per_call(f, calls, x):
    f(0, x)
    start = time.perf_counter()
    for i in range(1, calls + 1):
        f(i, x)
    return (time.perf_counter() - start) / calls


def main(calls=20):
    x = np.linspace(-1, 1, 1000)
    rows = [("numpy", per_call(step, calls, x)),
            ("jit, int dynamic", per_call(tp.jit(step), calls, x)),
            ("jit, int static", per_call(tp.jit(step, static_argnums=0), min(calls, 5), x))]
    base = rows[0][1]
    for name, t in rows:
        print(f"{name:20s} {t * 1e3:10.3f} ms/call  ({t / base:8.1f}x numpy)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
