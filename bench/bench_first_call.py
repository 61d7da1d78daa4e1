"""What a user meets first: transpile jit vs JAX jit, each figure from fresh processes.

    python bench/bench_first_call.py            # all workloads (several minutes)
    python bench/bench_first_call.py mlp selu   # some of them
    python bench/bench_first_call.py --breakdown   # where the MLP's compile time goes
    python bench/bench_first_call.py --worker [--repeat 3] [workloads]
                                      # tiers: compile in a worker process vs in a thread

Per workload, in fresh Python processes (imports and argument set-up excluded, an empty
temporary cache directory for the cold runs):

* first call, empty cache: ours with tiers (the default: the NumPy tier runs while Numba
  compiles in a worker process; `--worker` compares that with compiling in a thread), ours
  with wait=True (compile, then run), JAX;
* compiled ready: from the first call until the compiled tier is ready (ours), for JAX the
  first call (trace + compile); "ready, 1 s set-up first": the same where the program works
  1 s between jit(f) and its first call (the worker started at jit(f) imports Numba meanwhile);
* first call from the disk cache: a second process on the same cache directory (ours with
  wait=True: the compiled code loaded from Numba's cache; JAX with its persistent compilation
  cache);
* new batch size, same process: the first call with another batch size (ours tiered and
  wait=True, JAX);
* first 100 calls from cold: wall time of the first 100 calls in a fresh process (ours tiered
  and wait=True, JAX);
* steady: best per-call time once compiled.

Ratios are ours/JAX; the geometric means are over the workloads. Numbers on a shared machine
vary by ±20%: read them side by side.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SETUP_SECONDS = 1.0   # "set-up first": the program works this long between jit(f) and its
#                       first call (loading data), as scripts do; the worker started at jit(f)
#                       imports Numba meanwhile
WORKLOADS = ["mlp", "euler", "selu", "hessian", "vmap_grad"]
DESCRIBE = {
    "mlp": "jit(value_and_grad(loss)) 3-layer MLP 64-128-128-10, dict params, batch 200 (new: 150)",
    "euler": "jit(grad) 50 Euler steps writing traj[t] = y, 1000 values (new: 1500)",
    "selu": "jit(selu) 1M float32 (new: 500k)",
    "hessian": "jit(hessian) sum_logistic, n=100 (new: 150)",
    "vmap_grad": "jit(vmap(grad)) per-example grads, 200 examples x 10 (new: 300)",
}


# -- the workloads, for both frameworks ------------------------------------------------------

def make(fw, name, size=None):
    """(function to call, argument tuple builder(size), default size, new size)."""
    if fw == "jax":
        import jax
        import jax.numpy as np
        jax.config.update("jax_enable_x64", name == "euler")
    else:
        import numpy as np
    import numpy as onp
    rng = onp.random.default_rng(0)

    if name == "mlp":
        def loss(p, x, y):
            h = np.tanh(x @ p["W1"] + p["b1"])
            h = np.tanh(h @ p["W2"] + p["b2"])
            out = h @ p["W3"] + p["b3"]
            return np.mean((out - y) ** 2)
        sizes = [(64, 128), (128, 128), (128, 10)]
        params = {}
        for k, (a, b) in enumerate(sizes, 1):
            params[f"W{k}"] = (rng.standard_normal((a, b)) / math.sqrt(a)).astype("float32")
            params[f"b{k}"] = onp.zeros(b, "float32")

        def args(n):
            return (params, rng.standard_normal((n, 64)).astype("float32"),
                    rng.standard_normal((n, 10)).astype("float32"))
        return ("value_and_grad", loss), args, 200, 150

    if name == "euler":
        if fw == "jax":
            from jax import lax

            def euler(y0, k):
                def step(t, st):
                    y, traj = st
                    y = y + 0.01 * (-k * y + np.sin(y))
                    return y, traj.at[t].set(y)
                traj = np.zeros((50, y0.shape[0]), y0.dtype)
                y, traj = lax.fori_loop(0, 50, step, (y0, traj))
                return np.sum(traj ** 2)
        else:
            def euler(y0, k):
                traj = np.zeros((50, y0.shape[0]))
                y = y0
                for t in range(50):
                    y = y + 0.01 * (-k * y + np.sin(y))
                    traj[t] = y
                return np.sum(traj ** 2)

        def args(n):
            return (rng.standard_normal(n), 0.5)
        return ("grad", euler), args, 1000, 1500

    if name == "selu":
        def selu(x, alpha=1.67, lmbda=1.05):
            return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)

        def args(n):
            return (rng.standard_normal(n).astype("float32"),)
        return ("plain", selu), args, 1_000_000, 500_000

    if name == "hessian":
        def sum_logistic(x):
            return np.sum(1.0 / (1.0 + np.exp(-x)))

        def args(n):
            return (rng.standard_normal(n).astype("float32"),)
        return ("hessian", sum_logistic), args, 100, 150

    if name == "vmap_grad":
        def lossi(w, x, y):
            return (np.tanh(np.dot(x, w)) - y) ** 2

        def args(n):
            return (rng.standard_normal(10).astype("float32"),
                    rng.standard_normal((n, 10)).astype("float32"),
                    rng.standard_normal(n).astype("float32"))
        return ("vmap_grad", lossi), args, 200, 300
    raise ValueError(name)


def transformed(fw, kind, f, wait=None):
    if fw == "jax":
        import jax
        inner = {"plain": lambda: f, "grad": lambda: jax.grad(f),
                 "value_and_grad": lambda: jax.value_and_grad(f),
                 "hessian": lambda: jax.hessian(f),
                 "vmap_grad": lambda: jax.vmap(jax.grad(f), in_axes=(None, 0, 0))}[kind]()
        return jax.jit(inner)
    import transpile as tp
    inner = {"plain": lambda: f, "grad": lambda: tp.grad(f),
             "value_and_grad": lambda: tp.value_and_grad(f),
             "hessian": lambda: tp.hessian(f),
             "vmap_grad": lambda: tp.vmap(tp.grad(f), in_axes=(None, 0, 0))}[kind]()
    return tp.jit(inner, wait=wait)


def _block(out):
    jax = sys.modules.get("jax")       # (never imported here: that would time the import)
    if jax is not None:
        jax.block_until_ready(out)
    return out


def child(fw, name, mode, cache):
    """One fresh process: prints a JSON dict of timings (seconds)."""
    if fw == "jax":
        import jax
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    else:
        os.environ["TRANSPILE_CACHE_DIR"] = cache
        import transpile  # noqa: F401
    (kind, f), args, n0, n1 = make(fw, name)
    a0, a1 = args(n0), args(n1)
    wait = {"tiered": None, "setup": None, "thread": None, "wait": True}.get(mode) \
        if fw == "ours" else None
    if fw == "ours" and mode in ("tiered", "setup", "thread"):
        os.environ["TRANSPILE_TIERS"] = "1"
        # tiered: Numba compiles in a worker process (the default); thread: in a thread
        os.environ["TRANSPILE_COMPILE_WORKER"] = "0" if mode == "thread" else "1"
    j = transformed(fw, kind, f, wait)
    if mode == "setup":
        time.sleep(SETUP_SECONDS)      # the program's own set-up between jit(f) and its call
    res = {}
    t0 = time.perf_counter()
    _block(j(*a0))
    res["first"] = time.perf_counter() - t0
    if fw == "ours":
        res["first_tier"] = j.last_tier
    for _ in range(99):
        _block(j(*a0))
    res["first100"] = time.perf_counter() - t0
    if fw == "ours":
        res["tier100"] = j.last_tier
        j.wait()
        res["ready"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    _block(j(*a1))
    res["new_size"] = time.perf_counter() - t1
    if fw == "ours":
        res["new_size_tier"] = j.last_tier
        res["compiles"] = j.compile_count
        j.wait()
    # steady: best per-call time
    _block(j(*a0))
    best = float("inf")
    reps = max(3, min(1000, int(0.05 / max(res["first100"] / 100, 1e-6))))
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            _block(j(*a0))
        best = min(best, (time.perf_counter() - t) / reps)
    res["steady"] = best
    if fw == "ours":
        res["steady_tier"] = j.last_tier
    print(json.dumps(res))


def run_child(*argv):
    env = dict(os.environ)
    env.pop("TRANSPILE_TIERS", None)
    env.pop("TRANSPILE_COMPILE_WORKER", None)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *argv],
                       capture_output=True, text=True, env=env, timeout=900)
    if p.returncode != 0:
        print(f"  child {argv} failed:\n{p.stderr[-3000:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(t):
    if t is None:
        return "–"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def measure(name):
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-first-ours-") as d1:
        out["tiered"] = run_child("ours", name, "tiered", d1)
    with tempfile.TemporaryDirectory(prefix="bench-first-ours-setup-") as d4:
        out["setup"] = run_child("ours", name, "setup", d4)
    with tempfile.TemporaryDirectory(prefix="bench-first-ours-wait-") as d2, \
            tempfile.TemporaryDirectory(prefix="bench-first-jax-") as d3:
        out["wait"] = run_child("ours", name, "wait", d2)
        out["disk"] = run_child("ours", name, "wait", d2)
        out["jax"] = run_child("jax", name, "cold", d3)
        out["jax_disk"] = run_child("jax", name, "cold", d3)
    return out


def breakdown():
    """Where the compile time of the MLP's jit(value_and_grad) goes (one fresh process)."""
    code = r"""
import os, sys, time, tempfile, json
os.environ["TRANSPILE_CACHE_DIR"] = tempfile.mkdtemp()
sys.path.insert(0, sys.argv[1])
from bench_first_call import make, transformed
import transpile.api.jit as J
from numba.core import event
(kind, f), args, n0, _ = make("ours", "mlp")
a = args(n0)
j = transformed("ours", kind, f, wait=True)
t = {}
def timed(name, fn):
    def w(*x, **k):
        t0 = time.perf_counter()
        try:
            return fn(*x, **k)
        finally:
            t[name] = t.get(name, 0) + time.perf_counter() - t0
    return w
j._core_for = timed("core (parse, normalize, grad)", j._core_for)
j._plan = timed("specialize + fuse", j._plan)
from transpile.lowering.cpu import module as numba_cpu
numba_cpu.lower = timed("lower to Numba text", numba_cpu.lower)
numba_cpu.compile_module = timed("exec module", numba_cpu.compile_module)
from transpile.compile.specialization import Compiled
Compiled.precompile = timed("Numba compile (total)", Compiled.precompile)
from numba.core.registry import cpu_target
t0 = time.perf_counter(); cpu_target.target_context.refresh(); import scipy.linalg.cython_blas
t["Numba runtime init"] = time.perf_counter() - t0
with event.install_timer("numba:llvm_lock", lambda dt: t.__setitem__("  of which LLVM (llvm lock)", t.get("  of which LLVM (llvm lock)", 0) + dt)):
    t0 = time.perf_counter(); j.compile(*a); total = time.perf_counter() - t0
t["total compile()"] = total
print(json.dumps(t))
"""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", code, HERE], capture_output=True, text=True,
                       env=env, timeout=900)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        return
    t = json.loads(p.stdout.strip().splitlines()[-1])
    print("MLP jit(value_and_grad) compile time, one fresh process:")
    for k, v in t.items():
        print(f"  {k:36s} {v:7.2f} s")


def worker_vs_thread(names, repeat):
    """Tiers with Numba compiling in a worker process (the default) and in a thread
    (TRANSPILE_COMPILE_WORKER=0), alternating fresh processes with empty caches, `repeat`
    times each; JAX once per workload for the ratios. Prints the median and the range."""
    keys = [("first", "first call"), ("first100", "first 100 calls"),
            ("ready", "compiled tier ready")]
    print(f"tiers: worker process vs thread, {repeat} alternating runs each (median, range)")
    for name in names:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        runs = {"tiered": [], "thread": []}
        for _ in range(repeat):
            for mode in ("tiered", "thread"):
                with tempfile.TemporaryDirectory(prefix=f"bench-first-{mode}-") as d:
                    r = run_child("ours", name, mode, d)
                if r is not None:
                    runs[mode].append(r)
        with tempfile.TemporaryDirectory(prefix="bench-first-jax-") as d:
            jax = run_child("jax", name, "cold", d)
        print(f"\n## {DESCRIBE[name]}")
        print(f"  {'':22s} {'worker':>24s} {'thread':>24s} {'JAX':>9s} "
              f"{'worker/JAX':>10s} {'thread/JAX':>10s}")
        for k, label in keys:
            cells, med = [], {}
            for mode in ("tiered", "thread"):
                v = sorted(r[k] for r in runs[mode])
                if not v:
                    cells.append("–")
                    continue
                med[mode] = v[len(v) // 2]
                cells.append(f"{fmt(med[mode])} ({fmt(v[0])}–{fmt(v[-1])})")
            j = jax and jax["first100" if k == "first100" else "first"]
            ratios = [f"{med[m] / j:10.2f}" if j and m in med else f"{'–':>10s}"
                      for m in ("tiered", "thread")]
            print(f"  {label:22s} {cells[0]:>24s} {cells[1]:>24s} {fmt(j):>9s} "
                  f"{ratios[0]} {ratios[1]}")
        tiers = [(r["first_tier"], r["tier100"]) for r in runs["tiered"]]
        print(f"  (worker runs: tier of call 1 and call 100: {tiers})")


def main(argv):
    if argv and argv[0] == "--child":
        return child(*argv[1:])
    if argv and argv[0] == "--breakdown":
        return breakdown()
    if argv and argv[0] == "--worker":
        repeat = 3
        if "--repeat" in argv:
            repeat = int(argv[argv.index("--repeat") + 1])
        names = [a for a in argv if a in WORKLOADS] or WORKLOADS
        return worker_vs_thread(names, repeat)
    names = [a for a in argv if a in WORKLOADS] or WORKLOADS
    rows = {}
    for name in names:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        rows[name] = measure(name)
    cols = [
        ("first call (tiers)", lambda r: r["tiered"]["first"], lambda r: r["jax"]["first"]),
        ("first call (wait=True)", lambda r: r["wait"]["first"], lambda r: r["jax"]["first"]),
        ("compiled ready (tiers)", lambda r: r["tiered"]["ready"], lambda r: r["jax"]["first"]),
        (f"ready, {SETUP_SECONDS:g} s set-up first", lambda r: r["setup"]["ready"],
         lambda r: r["jax"]["first"]),
        ("first call, disk cache (wait)", lambda r: r["disk"]["first"],
         lambda r: r["jax_disk"]["first"]),
        ("new batch size (tiers)", lambda r: r["tiered"]["new_size"], lambda r: r["jax"]["new_size"]),
        ("new batch size (wait=True)", lambda r: r["wait"]["new_size"],
         lambda r: r["jax"]["new_size"]),
        ("first 100 calls (tiers)", lambda r: r["tiered"]["first100"],
         lambda r: r["jax"]["first100"]),
        ("first 100 calls (wait=True)", lambda r: r["wait"]["first100"],
         lambda r: r["jax"]["first100"]),
        ("steady per call", lambda r: r["wait"]["steady"], lambda r: r["jax"]["steady"]),
    ]
    for name in names:
        r = rows[name]
        print(f"\n## {DESCRIBE[name]}")
        if any(v is None for v in r.values()):
            print("  (a run failed; see above)")
            continue
        print(f"  {'':32s} {'ours':>10s} {'JAX':>10s} {'ours/JAX':>9s}")
        for label, ours, theirs in cols:
            o, t = ours(r), theirs(r)
            print(f"  {label:32s} {fmt(o):>10s} {fmt(t):>10s} {o / t:9.2f}")
        print(f"  (tiers: first call ran {r['tiered']['first_tier']}, call 100 ran "
              f"{r['tiered']['tier100']}, the new size ran {r['tiered']['new_size_tier']}; "
              f"compilations: {r['tiered']['compiles']})")
    print("\n## geometric means of ours/JAX over the workloads")
    for label, ours, theirs in cols:
        rs = [ours(rows[n]) / theirs(rows[n]) for n in names
              if all(v is not None for v in rows[n].values())]
        if rs:
            g = math.exp(sum(math.log(x) for x in rs) / len(rs))
            print(f"  {label:32s} {g:7.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
