"""pmap scaling on CPU: 1 vs 2 virtual devices, each shard doing the same compute-bound work.

    python3 bench/bench_pmap.py [--size N] [--repeats R] [--devices D]

Weak scaling: shard work is fixed, so a perfect runtime takes the same wall time for D
shards on D devices as for 1 shard on 1 device.
    speedup    = D * t(1 shard, 1 device) / t(D shards, D devices)
    efficiency = speedup / D
Two workloads: a Numba `nogil=True` loop (the kind of code jit will generate) and a NumPy
matmul with BLAS pinned to one thread (so the parallelism measured is pmap's, not BLAS's).
"""
import argparse
import os
import sys
import time

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from transpile_runtime.devices import reset_cpu_devices  # noqa: E402
from transpile.api.pmap import pmap  # noqa: E402


@numba.njit(nogil=True, cache=False)
def numba_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(20):
            v = np.sin(v) * 0.5 + np.cos(v) * 0.5
        total += v
    return total


def numpy_matmul(a):
    return (a @ a).sum()


def best_time(fn, repeats):
    fn()  # warm up (Numba compile, worker start)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def scaling(name, shard_fn, make_shard, devices, repeats):
    reset_cpu_devices(devices)
    f = pmap(shard_fn)
    one = np.stack([make_shard()])
    many = np.stack([make_shard() for _ in range(devices)])
    t1 = best_time(lambda: f(one), repeats)
    td = best_time(lambda: f(many), repeats)
    speedup = devices * t1 / td
    print(f"{name:24s} 1 device: {t1 * 1e3:8.1f} ms   {devices} devices: {td * 1e3:8.1f} ms   "
          f"time ratio {td / t1:5.2f}   speedup {speedup:4.2f}x   "
          f"efficiency {100 * speedup / devices:5.1f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2_000_000, help="elements per Numba shard")
    parser.add_argument("--matrix", type=int, default=700, help="matrix side per NumPy shard")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--devices", type=int, default=2)
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}   devices compared: 1 vs {args.devices}   "
          f"best of {args.repeats}")
    rng = np.random.default_rng(0)
    scaling("numba nogil loop", numba_loop, lambda: rng.random(args.size), args.devices,
            args.repeats)
    scaling("numpy matmul (1 BLAS thr)", numpy_matmul,
            lambda: rng.random((args.matrix, args.matrix)), args.devices, args.repeats)
    reset_cpu_devices(None)


if __name__ == "__main__":
    main()
