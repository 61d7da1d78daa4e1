"""Seed workloads side by side: transpile.jit (Numba) vs jax.jit vs plain NumPy.

    PYTHONPATH=. python3 bench/bench_seed_workloads.py [--quick]

Prints one row per workload: best-of-N wall time per call for each system, and the ratio
ours/JAX (lower is better; the target is <= 1.0 per row and a geometric mean <= 0.7).
Compile time is excluded (each function is called once before timing) except in the
first-call row, which runs a fresh process for each system.
"""
import math
import os
import subprocess
import sys
import textwrap
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from transpile import grad, jit  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", False)
except ImportError:      # the table still prints ours vs NumPy
    jax = jnp = None

try:
    from transpile import vmap
except ImportError:
    vmap = None

QUICK = "--quick" in sys.argv


def best(fn, *args, repeat=None, number=None):
    fn(*args)
    if number is None:
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        number = max(1, min(1000, int(0.05 / max(dt, 1e-7))))
    repeat = repeat or (3 if QUICK else 7)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            r = fn(*args)
        if jax is not None and hasattr(r, "block_until_ready"):
            r.block_until_ready()
        elif jax is not None and isinstance(r, (tuple, list, dict)):
            jax.block_until_ready(r)
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def block(fn):
    def run(*a):
        r = fn(*a)
        return jax.block_until_ready(r)
    return run


# ---- workloads (ours and NumPy use the same function; JAX's uses jnp) ----------------------


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def selu_jax(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def norm(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def norm_jax(x):
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def sum_logistic_jax(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def apply_matrix(m, v):
    return m @ v


def x2(x):
    return x * x + x * 2


def x2_jax(x):
    return x * x + x * 2


# linear regression (seed 001), data as globals read by the model
N = 100_000 if QUICK else 1_000_000
rng = np.random.default_rng(1)
X = rng.uniform(size=N).astype(np.float32)
Y = (4 * X + 1 + rng.normal(size=N)).astype(np.float32)
LR = 0.01


def lin_loss(theta):
    return np.mean((X * theta["w"] + theta["b"] - Y) ** 2)


dlin = grad(lin_loss)


def lin_update(theta):
    g = dlin(theta)
    return {"w": theta["w"] - LR * g["w"], "b": theta["b"] - LR * g["b"]}


def mlp_loss(params, x, y):
    h = np.tanh(x @ params[0][0] + params[0][1])
    h = np.tanh(h @ params[1][0] + params[1][1])
    out = h @ params[2][0] + params[2][1]
    return np.mean((out - y) ** 2)


dmlp = grad(mlp_loss)


def mlp_step(params, x, y):
    g = dmlp(params, x, y)
    return [(params[0][0] - 0.01 * g[0][0], params[0][1] - 0.01 * g[0][1]),
            (params[1][0] - 0.01 * g[1][0], params[1][1] - 0.01 * g[1][1]),
            (params[2][0] - 0.01 * g[2][0], params[2][1] - 0.01 * g[2][1])]


def rows():
    out = []
    r = np.random.default_rng(0)

    # selu
    x = r.standard_normal(1_000_000).astype(np.float32)
    ours = jit(selu)
    out.append(("selu 1M f32", best(ours, x), jax and best(block(jax.jit(selu_jax)), jnp.asarray(x)),
                best(selu, x)))

    # norm
    x = r.standard_normal((10000, 100))
    ours = jit(norm)
    out.append(("norm 10000x100", best(ours, x), jax and best(block(jax.jit(norm_jax)), jnp.asarray(x, jnp.float32)) if jax else None,
                best(norm, x)))

    # grad sum_logistic
    x = r.standard_normal(1_000_000).astype(np.float32)
    ours = jit(grad(sum_logistic))
    out.append(("grad sum_logistic 1M", best(ours, x),
                jax and best(block(jax.jit(jax.grad(sum_logistic_jax))), jnp.asarray(x)),
                best(grad(sum_logistic), x)))

    # hessian sum_logistic n=100
    from transpile import hessian
    x = r.standard_normal(100).astype(np.float32)
    h_np = hessian(sum_logistic)
    try:
        h_np(x)
    except Exception as e:           # noqa: BLE001 (report, do not hide)
        print(f"  (hessian row skipped: eager hessian fails: {type(e).__name__}: "
              f"{str(e).splitlines()[0]})")
        h_np = None
    if h_np is not None:
        try:
            ours = jit(hessian(sum_logistic))
            ours(x)
        except Exception as e:           # noqa: BLE001 (report, do not hide)
            print(f"  (hessian under jit unavailable: {type(e).__name__}: {e}; timing eager)")
            ours = h_np
        out.append(("hessian sum_logistic n=100", best(ours, x),
                    jax and best(block(jax.jit(jax.hessian(sum_logistic_jax))), jnp.asarray(x)),
                    best(h_np, x)))

    # vmap apply_matrix
    if vmap is not None:
        m = r.standard_normal((150, 100)).astype(np.float32)
        vs = r.standard_normal((10, 100)).astype(np.float32)
        ours = jit(vmap(apply_matrix, in_axes=(None, 0)))
        out.append(("vmap apply_matrix 150x100 b10", best(ours, m, vs),
                    jax and best(block(jax.jit(jax.vmap(apply_matrix, in_axes=(None, 0)))),
                                 jnp.asarray(m), jnp.asarray(vs)),
                    best(lambda m, v: np.stack([m @ vi for vi in v]), m, vs)))
    else:
        print("  (vmap not importable yet: row skipped)")

    # linear regression: 100 steps of grad + update
    theta0 = {"w": np.float32(1.0), "b": np.float32(0.0)}
    step = jit(lin_update)

    def ours_loop(theta):
        for _ in range(100):
            theta = step(theta)
        return theta

    def np_loop(theta):
        for _ in range(100):
            theta = lin_update(theta)
        return theta

    if jax is not None:
        Xj, Yj = jnp.asarray(X), jnp.asarray(Y)

        def jl(theta):
            return jnp.mean((Xj * theta["w"] + theta["b"] - Yj) ** 2)

        @jax.jit
        def jupd(theta):
            g = jax.grad(jl)(theta)
            return {k: theta[k] - LR * g[k] for k in theta}

        def jax_loop(theta):
            for _ in range(100):
                theta = jupd(theta)
            return jax.block_until_ready(theta)
        tj = best(jax_loop, {k: jnp.asarray(v) for k, v in theta0.items()}, number=1)
    else:
        tj = None
    out.append((f"linreg N={N:.0e} 100 steps", best(ours_loop, theta0, number=1), tj,
                best(np_loop, theta0, number=1)))

    # MLP train step
    sizes = [784, 128, 128, 10]
    params = [(r.standard_normal((a, b)).astype(np.float32) * 0.05, np.zeros(b, np.float32))
              for a, b in zip(sizes[:-1], sizes[1:])]
    xb = r.standard_normal((32, 784)).astype(np.float32)
    yb = r.standard_normal((32, 10)).astype(np.float32)
    ours = jit(mlp_step)
    if jax is not None:
        def jloss(p, x, y):
            h = jnp.tanh(x @ p[0][0] + p[0][1])
            h = jnp.tanh(h @ p[1][0] + p[1][1])
            o = h @ p[2][0] + p[2][1]
            return jnp.mean((o - y) ** 2)

        @jax.jit
        def jstep(p, x, y):
            g = jax.grad(jloss)(p, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
        jp = jax.tree_util.tree_map(jnp.asarray, params)
        tj = best(block(jstep), jp, jnp.asarray(xb), jnp.asarray(yb))
    else:
        tj = None
    out.append(("MLP 784-128-128-10 step b32", best(ours, params, xb, yb), tj,
                best(mlp_step, params, xb, yb)))

    # x*x + x*2 on 5000x5000 f32
    x = r.standard_normal((5000, 5000)).astype(np.float32)
    ours = jit(x2)
    out.append(("x*x+x*2 5000x5000 f32", best(ours, x, repeat=3),
                jax and best(block(jax.jit(x2_jax)), jnp.asarray(x), repeat=3),
                best(x2, x, repeat=3)))

    out.append(first_call_row())
    return out


FIRST_OURS = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import numpy as np
    from transpile import jit, grad
    from bench_first_call_fn import sum_logistic
    x = np.linspace(-1, 1, 1000)
    f = jit(grad(sum_logistic))
    t0 = time.perf_counter(); f(x); print(time.perf_counter() - t0)
""")

FIRST_JAX = textwrap.dedent("""
    import time
    import jax, jax.numpy as jnp
    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))
    x = jnp.linspace(-1, 1, 1000)
    jax.block_until_ready(x)
    f = jax.jit(jax.grad(sum_logistic))
    t0 = time.perf_counter(); jax.block_until_ready(f(x)); print(time.perf_counter() - t0)
""")


def first_call_row():
    """First call of a previously compiled function in a new process (import time excluded)."""
    d = os.path.join(os.environ.get("TRANSPILE_CACHE_DIR") or
                     os.path.join(os.path.expanduser("~"), ".cache", "transpile"), "bench")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "bench_first_call_fn.py"), "w") as f:
        f.write("import numpy as np\n\n\ndef sum_logistic(x):\n"
                "    return np.sum(1.0 / (1.0 + np.exp(-x)))\n")
    env = dict(os.environ, PYTHONPATH=d + os.pathsep + ROOT)

    def run(code):
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        if res.returncode != 0:
            raise RuntimeError(res.stderr)
        return float(res.stdout.strip().splitlines()[-1])
    code = FIRST_OURS.format(root=ROOT)
    run(code)                                  # compile once: fills the disk cache
    ours = min(run(code) for _ in range(3))
    tj = min(run(FIRST_JAX) for _ in range(3)) if jax is not None else None
    return ("first call (new process, cached)", ours, tj, None)


def fmt(t):
    if t is None:
        return "-"
    if t >= 1:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.1f} us"


def main():
    table = rows()
    print()
    print(f"{'workload':34s} {'ours (jit)':>12s} {'JAX jit':>12s} {'NumPy':>12s} {'ours/JAX':>9s}")
    ratios = []
    for name, ours, tj, tn in table:
        ratio = ours / tj if (tj and ours) else None
        if ratio:
            ratios.append(ratio)
        print(f"{name:34s} {fmt(ours):>12s} {fmt(tj):>12s} {fmt(tn):>12s} "
              f"{(f'{ratio:.2f}' if ratio else '-'):>9s}")
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{'geometric mean ours/JAX':34s} {'':>12s} {'':>12s} {'':>12s} {gm:9.2f}")


if __name__ == "__main__":
    main()
