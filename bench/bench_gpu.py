"""GPU benchmark: transpile's CuPy backend (generated RawKernels + cuBLAS) vs JAX on the same GPU.

Rows: selu on 100M float32, x*x+2x on 10000x10000 float32, grad of sum_logistic on 100M
float32, the MLP gradient step (784-512-10, batch 1024, float32). For the elementwise rows it
prints achieved memory bandwidth (bytes that must move: inputs read + outputs written) as a
fraction of the device's peak HBM bandwidth. Without a GPU it says so and exits 0.

    PYTHONPATH=. python3 bench/bench_gpu.py [--small]
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

from gpu_cases import grad_sum_logistic, mlp_args, mlp_grad, mlp_loss, poly, selu, sum_logistic  # noqa

PEAK_GBS = {"H200": 4800.0, "H100 SXM": 3350.0, "H100 80GB HBM3": 3350.0, "H100 PCIe": 2000.0,
            "H100 NVL": 3900.0, "A100-SXM4-80GB": 2039.0, "A100-SXM4-40GB": 1555.0,
            "A100-PCIE-40GB": 1555.0, "A100 80GB PCIe": 1935.0}


def peak_bandwidth(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    for key, gbs in PEAK_GBS.items():
        if key in name:
            return name, gbs, "known peak"
    clock_khz = props.get("memoryClockRate", 0)
    bus_bits = props.get("memoryBusWidth", 0)
    return name, 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9, "from memory clock x bus width"


def timeit(fn, sync, reps=20):
    fn()
    sync()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def jax_gpu():
    try:
        import jax
        devs = jax.devices("gpu")
        return jax if devs else None
    except Exception:
        return None


def main():
    small = "--small" in sys.argv
    try:
        from transpile.lowering.cupy_backend import GPUUnavailable, require_device
        cupy = require_device()
    except Exception as e:
        print(f"no GPU: {e}")
        print("bench_gpu: nothing to measure without a CUDA device (show() still prints kernels)")
        return 0
    from transpile.lowering.gpu import flat_example_args, gpu_program
    name, peak, how = peak_bandwidth(cupy)
    print(f"device: {name}; peak HBM bandwidth {peak:.0f} GB/s ({how})")
    jax = jax_gpu()
    if jax is None:
        print("JAX: no GPU backend installed (pip install jax[cuda13]); JAX column left empty")
    n = 1_000_000 if small else 100_000_000
    side = 1000 if small else 10_000
    rng = np.random.default_rng(0)
    rows = [("selu 100M f32", selu, [rng.standard_normal(n, dtype=np.float32)], 8 * n),
            ("x*x+2x 10000^2 f32", poly, [rng.standard_normal((side, side), dtype=np.float32)],
             8 * side * side),
            ("grad sum_logistic 100M f32", grad_sum_logistic,
             [rng.standard_normal(n, dtype=np.float32)], 8 * n),
            ("MLP grad step b=1024 f32", mlp_grad,
             mlp_args(np.float32, batch=1024, n_in=784, n_hidden=512, n_out=10), None)]
    print(f"{'workload':30s} {'ours ms':>9s} {'GB/s':>7s} {'%peak':>6s} {'jax ms':>9s} "
          f"{'GB/s':>7s} {'%peak':>6s} {'ours/jax':>8s}")
    sync = cupy.cuda.Device().synchronize
    for label, fn, args, nbytes in rows:
        core, flat = flat_example_args(fn, *args)
        prog = gpu_program(core, flat, "cupy")
        dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in flat]
        t_ours = timeit(lambda: prog(*dev), sync)
        t_jax = None
        if jax is not None:
            import jax.numpy as jnp
            jf = {"selu": lambda x: 1.0507009873554805 * jnp.where(
                      x > 0, x, 1.6732632423543772 * (jnp.exp(x) - 1)),
                  "poly": lambda x: x * x + 2 * x}.get(getattr(fn, "__name__", ""))
            if fn is grad_sum_logistic:
                jf = jax.grad(lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x))))
            if fn is mlp_grad:
                def jl(W1, b1, W2, b2, x, y):
                    h = jnp.tanh(x @ W1 + b1)
                    return jnp.mean((h @ W2 + b2 - y) ** 2)
                jf = jax.grad(jl, argnums=(0, 1, 2, 3))
            jf = jax.jit(jf)
            jargs = [jax.device_put(a) for a in args]
            t_jax = timeit(lambda: jax.block_until_ready(jf(*jargs)), lambda: None)

        def bw(t):
            if nbytes is None or t is None:
                return "", ""
            gbs = nbytes / t / 1e9
            return f"{gbs:7.0f}", f"{100 * gbs / peak:5.1f}%"
        ob, op = bw(t_ours)
        jb, jp = bw(t_jax)
        jt = f"{1e3 * t_jax:9.3f}" if t_jax else f"{'-':>9s}"
        ratio = f"{t_ours / t_jax:8.2f}" if t_jax else f"{'-':>8s}"
        print(f"{label:30s} {1e3 * t_ours:9.3f} {ob:>7s} {op:>6s} {jt} {jb:>7s} {jp:>6s} {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
