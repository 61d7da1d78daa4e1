"""Launch-configuration sweep for the generated elementwise/reduction kernels (device only)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import numpy as np  # noqa: E402
import cupy  # noqa: E402
from bench_gpu import per_call  # noqa: E402
from gpu_cases import grad_sum_logistic, norm, poly, selu  # noqa: E402
from transpile.api.autodiff import flat_example_args  # noqa: E402
from transpile.compile.gpu_programs import gpu_program  # noqa: E402

x = np.random.default_rng(0).standard_normal((5000, 5000), dtype=np.float32)
dx = cupy.asarray(x)
n = x.size


def sync(out=None):
    cupy.cuda.Device().synchronize()


for per_sm, red in [("64", "16"), ("128", "8"), ("32", "32"), ("64", "16")]:
    os.environ["TRANSPILE_GPU_BLOCKS_PER_SM"] = per_sm
    os.environ["TRANSPILE_GPU_REDUCE_BLOCKS_PER_SM"] = red
    row = []
    for fn, nbytes in ((selu, 8 * n), (poly, 8 * n), (grad_sum_logistic, 8 * n), (norm, 4 * n)):
        core, flat = flat_example_args(fn, x)
        prog = gpu_program(core, flat, "cupy")
        t = per_call(lambda: prog(dx), sync, 50)
        row.append(f"{getattr(fn, '__name__', 'grad_sum_logistic')[:18]:>18s} "
                   f"{1e3 * t:.4f}ms {nbytes / t / 1e9:5.0f}GB/s")
    print(f"blocks/SM {per_sm:>3s} reduce {red:>3s}: " + " | ".join(row))
