"""GPU benchmark: transpile's CuPy backend (generated CUDA C RawKernels + cuBLAS) vs JAX on the
same GPU. Arrays stay on the device: CuPy arrays in and out, no host round trip per call.

Rows: a device-to-device copy (the measured bandwidth ceiling), selu and x*x+2x on 5000x5000
float32, grad of sum_logistic on 5000x5000 float32, norm (sqrt(sum(x*x))) on 5000x5000
float32, and the MLP gradient step jit(grad(loss)) (784-512-10, batch 128, float32).

Timing: each side runs `reps` calls back to back (asynchronous, as a training loop does) and
synchronizes once; the figure is wall time / reps, the median of 7 such runs, after warm-up
calls (compilation excluded). Bandwidth rows count the bytes that must move (every input read
once, every output written once) and show them as % of the nominal peak and % of the copy.

    python3 bench/bench_gpu.py [--small]

Without a GPU it says so and exits 0.
"""
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))

from gpu_cases import grad_sum_logistic, mlp_args, mlp_grad, norm, poly, selu  # noqa: E402

PEAK_GBS = {"H200": 4800.0, "H100 SXM": 3350.0, "H100 80GB HBM3": 3350.0, "H100 PCIe": 2000.0,
            "H100 NVL": 3900.0, "A100-SXM4-80GB": 2039.0, "A100-SXM4-40GB": 1555.0,
            "A100-PCIE-40GB": 1555.0, "A100 80GB PCIe": 1935.0}


def peak_bandwidth(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    for key, gbs in PEAK_GBS.items():
        if key in name:
            return name, gbs, "datasheet peak"
    clock_khz = props.get("memoryClockRate", 0)
    bus_bits = props.get("memoryBusWidth", 0)
    return name, 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9, "from memory clock x bus width"


def per_call(run, sync, reps):
    """Median over 7 runs of (wall time of `reps` back-to-back calls, one sync) / reps."""
    for _ in range(3):
        run()
    sync()
    times = []
    for _ in range(7):
        sync()
        t0 = time.perf_counter()
        for _ in range(reps):
            out = run()
        sync(out)
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def jax_gpu():
    try:
        import jax
        return jax if jax.devices("gpu") else None
    except Exception:
        return None


def jax_versions(jax):
    import jax.numpy as jnp

    def jselu(x):
        return 1.0507009873554805 * jnp.where(x > 0, x, 1.6732632423543772 * (jnp.exp(x) - 1))

    def jloss(W1, b1, W2, b2, x, y):
        h = jnp.tanh(x @ W1 + b1)
        return jnp.mean((h @ W2 + b2 - y) ** 2)
    return {"selu": jselu, "poly": lambda x: x * x + 2 * x,
            "grad_sum_logistic": jax.grad(lambda x: jnp.sum(1.0 / (1.0 + jnp.exp(-x)))),
            "norm": lambda x: jnp.sqrt(jnp.sum(x * x)),
            "mlp_grad": jax.grad(jloss, argnums=(0, 1, 2, 3))}


def workloads(small):
    side = 1000 if small else 5000
    n = side * side
    rng = np.random.default_rng(0)
    x = rng.standard_normal((side, side), dtype=np.float32)
    return [(f"selu {side}^2 f32", "selu", selu, [x], 8 * n),
            (f"x*x+2x {side}^2 f32", "poly", poly, [x], 8 * n),
            (f"grad sum_logistic {side}^2 f32", "grad_sum_logistic", grad_sum_logistic, [x],
             8 * n),
            (f"norm {side}^2 f32", "norm", norm, [x], 4 * n),
            ("MLP grad 784-512-10 b=128 f32", "mlp_grad", mlp_grad,
             mlp_args(np.float32, batch=128, n_in=784, n_hidden=512, n_out=10), None),
            ("  same, CUDA graphs off", "mlp_grad_nograph", mlp_grad,
             mlp_args(np.float32, batch=128, n_in=784, n_hidden=512, n_out=10), None)]


def main():
    small = "--small" in sys.argv
    try:
        from transpile.lowering.gpu.cupy_backend import GPUUnavailable, require_device
        cupy = require_device()
    except Exception as e:
        print(f"no GPU: {e}")
        print("bench_gpu: nothing to measure without a CUDA device (show() still prints kernels)")
        return 0
    from transpile.api.autodiff import flat_example_args
    from transpile.compile.gpu_programs import gpu_program
    name, peak, how = peak_bandwidth(cupy)
    print(f"device: {name}; nominal HBM bandwidth {peak:.0f} GB/s ({how})")
    jax = jax_gpu()
    if jax is None:
        print("JAX: no GPU backend installed (pip install jax[cuda13]); JAX column left empty")
    jfs = jax_versions(jax) if jax is not None else {}

    def cusync(out=None):
        cupy.cuda.Device().synchronize()

    def jsync(out=None):
        if out is not None:
            jax.block_until_ready(out)

    side = 1000 if small else 5000
    src = cupy.random.standard_normal((side, side), dtype=cupy.float32)
    dst = cupy.empty_like(src)
    t_copy = per_call(lambda: cupy.copyto(dst, src), cusync, 50)
    copy_gbs = 2 * src.nbytes / t_copy / 1e9
    print(f"device-to-device copy {side}^2 f32: {1e3 * t_copy:.3f} ms, {copy_gbs:.0f} GB/s "
          f"({100 * copy_gbs / peak:.1f}% of nominal): the measured ceiling")
    head = (f"{'workload':32s} {'ours ms':>8s} {'GB/s':>6s} {'%peak':>6s} {'%copy':>6s} "
            f"{'jax ms':>8s} {'GB/s':>6s} {'%peak':>6s} {'ours/jax':>8s}")
    lines = [head]
    extra = []
    print(head)
    for label, key, fn, args, nbytes in workloads(small):
        core, flat = flat_example_args(fn, *args)
        prog = gpu_program(core, flat, "cupy")
        dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in flat]
        reps = 200 if nbytes is None else 50
        if key.endswith("_nograph"):
            os.environ["TRANSPILE_CUDA_GRAPHS"] = "0"
        t_ours = per_call(lambda: prog(*dev), cusync, reps)
        os.environ.pop("TRANSPILE_CUDA_GRAPHS", None)
        t_jax = None
        if key in jfs:
            jf = jax.jit(jfs[key])
            jargs = [jax.device_put(a) for a in args]
            t_jax = per_call(lambda: jf(*jargs), jsync, reps)
            if key == "mlp_grad":   # JAX's default float32 matmul on this GPU may use TF32
                with jax.default_matmul_precision("highest"):
                    jf32 = jax.jit(jfs[key])
                    t_full = per_call(lambda: jf32(*jargs), jsync, reps)
                extra.append(f"MLP grad: JAX with matmul precision 'highest' (full float32, "
                             f"as ours): {1e3 * t_full:.3f} ms; ours/jax = "
                             f"{t_ours / t_full:.2f}")

        def bw(t):
            if nbytes is None or t is None:
                return "", "", ""
            gbs = nbytes / t / 1e9
            return f"{gbs:6.0f}", f"{100 * gbs / peak:5.1f}%", f"{100 * gbs / copy_gbs:5.1f}%"
        ob, op, oc = bw(t_ours)
        jb, jp, _ = bw(t_jax)
        jt = f"{1e3 * t_jax:8.3f}" if t_jax else f"{'-':>8s}"
        ratio = f"{t_ours / t_jax:8.2f}" if t_jax else f"{'-':>8s}"
        line = (f"{label:32s} {1e3 * t_ours:8.3f} {ob:>6s} {op:>6s} {oc:>6s} {jt} {jb:>6s} "
                f"{jp:>6s} {ratio}")
        lines.append(line)
        print(line)
    print("\nsummary (ours/jax < 1: transpile faster)")
    print("\n".join(lines + extra))
    return 0


if __name__ == "__main__":
    sys.exit(main())
