"""Profile one MLP gradient step on the CuPy backend (host-side overhead per plan step)."""
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
import numpy as np  # noqa: E402
import cupy  # noqa: E402
from gpu_cases import mlp_args, mlp_grad  # noqa: E402
from transpile.api.autodiff import flat_example_args  # noqa: E402
from transpile.compile.gpu_programs import gpu_program  # noqa: E402

args = mlp_args(np.float32, batch=128, n_in=784, n_hidden=512, n_out=10)
core, flat = flat_example_args(mlp_grad, *args)
prog = gpu_program(core, flat, "cupy")
dev = [cupy.asarray(a) for a in flat]
for _ in range(5):
    prog(*dev)
cupy.cuda.Device().synchronize()
for s in prog.plan.steps:
    print(type(s).__name__, getattr(getattr(s, "eqn", None), "prim", None) and s.eqn.prim.path)
t0 = time.perf_counter()
for _ in range(200):
    prog(*dev)
cupy.cuda.Device().synchronize()
print("per call ms", (time.perf_counter() - t0) / 200 * 1e3)
g = prog._graphed
print("graphs:", [type(v).__name__ for v in getattr(g, "_graphs", {}).values()],
      "failure:", getattr(g, "failure", None))
pr = cProfile.Profile()
pr.enable()
for _ in range(200):
    prog(*dev)
cupy.cuda.Device().synchronize()
pr.disable()
st = pstats.Stats(pr)
st.sort_stats("tottime").print_stats(25)
st.sort_stats("cumulative").print_stats(40)
entry = next((v for v in getattr(g, "_graphs", {}).values() if v), None)
if entry is not None:
    stream = cupy.cuda.get_current_stream()
    for _ in range(10):
        entry.graph.launch(stream)
    stream.synchronize()
    t0 = time.perf_counter()
    for _ in range(500):
        entry.graph.launch(stream)
    stream.synchronize()
    print("graph replay alone (GPU time of the captured step) ms",
          (time.perf_counter() - t0) / 500 * 1e3)
