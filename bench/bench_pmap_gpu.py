"""pmap on the GPU: shards on separate CuPy streams (one GPU) or on separate GPUs.

    python3 bench/bench_pmap_gpu.py

Weak scaling: every shard does the same compute-bound elementwise work (a chain of sin/cos,
one generated CUDA kernel through jit(backend="cupy")) on its own slice of a CuPy array that is
already on the device. For D = 1, 2, 4 stream devices (TRANSPILE_GPU_STREAMS lanes; several
GPUs: one per GPU):
    speedup    = D * t(1 shard on 1 device) / t(D shards on D devices)
    efficiency = speedup / D
Two shard sizes: a small one (one shard's kernel fills a fraction of the GPU, so streams can
overlap shards) and a large one (one shard already fills the GPU: on ONE GPU the ideal is
speedup 1, the streams only hide launch gaps; linear scaling needs one GPU per shard).
Without a GPU it says so and exits 0.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def heavy(x):
    y = np.sin(x) * 0.75 + np.cos(x) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    return y


def timed(fn, reps=20):
    fn()
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    try:
        from transpile.lowering.gpu.cupy_backend import require_device
        cupy = require_device()
    except Exception as e:
        print(f"no GPU: {e}; bench_pmap_gpu has nothing to measure")
        return 0
    from transpile.api.pmap import pmap
    from transpile_runtime import devices as rd
    n_gpus = cupy.cuda.runtime.getDeviceCount()
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    devs = rd.devices("gpu")
    print(f"{n_gpus} x {name}; pmap devices: {devs}")
    f = pmap(heavy, backend="gpu")
    print(f"{'shard elements':>14s} {'D':>2s} {'t(1) ms':>8s} {'t(D) ms':>8s} {'speedup':>8s} "
          f"{'eff':>5s}")
    for m in (32_768, 4_194_304):
        rng = np.random.default_rng(0)
        xs = cupy.asarray(rng.standard_normal((len(devs), m), dtype=np.float32))
        ref = heavy(cupy.asnumpy(xs[:1]).astype(np.float64))
        one = pmap(heavy, backend="gpu", devices=devs[:1])
        got = cupy.asnumpy(one(xs[:1]))
        err = float(np.max(np.abs(got - ref)))
        assert err < 1e-4, f"shard result differs from float64 NumPy by {err}"
        t1 = timed(lambda: one(xs[:1]))
        for d in (2, 4):
            if d > len(devs):
                break
            fd = pmap(heavy, backend="gpu", devices=devs[:d])
            out = cupy.asnumpy(fd(xs[:d]))
            assert np.allclose(out[0], got[0], rtol=1e-6, atol=1e-6)
            td = timed(lambda: fd(xs[:d]))
            speedup = d * t1 / td
            print(f"{m:14d} {d:2d} {1e3 * t1:8.3f} {1e3 * td:8.3f} {speedup:8.2f} "
                  f"{speedup / d:5.2f}")
    del f
    return 0


if __name__ == "__main__":
    sys.exit(main())
