"""Quickstart: JAX's quickstart tour, run on plain NumPy code with transpile.

    python examples/quickstart.py            # full sizes (a few seconds)
    python examples/quickstart.py --fast     # CI sizes (or TRANSPILE_EXAMPLES_FAST=1)

Every step prints its result, checks it (so a regression fails loudly), and prints the source
transpile generated for one transform. The same source is what runs: open the file it names,
put a breakpoint in it, step through it.

    transpile show examples/quickstart.py                 # the @grad-decorated function below
    transpile show examples/quickstart.py -f sum_logistic -t hessian
"""
import argparse
import os
import time

import numpy as np

from transpile import grad, hessian, jacobian, jit, random, show, vmap


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


@grad
def derivative_fn(x):
    """grad(sum_logistic) as a decorator: `transpile show` finds it."""
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def first_finite_differences(f, x, eps=1e-3):
    return np.array([(f(x + eps * v) - f(x - eps * v)) / (2 * eps) for v in np.eye(len(x))])


def exp(x):
    return np.exp(x)


def banner(title):
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def timeit(fn, *args, repeat=5):
    fn(*args)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def main(fast=False):
    np.set_printoptions(precision=7, suppress=True)
    key = random.key(1701)

    banner("transpile as NumPy: selu")
    print(selu(np.arange(5.0)))
    np.testing.assert_allclose(selu(np.arange(5.0)), [0.0, 1.05, 2.1, 3.15, 4.2])

    banner("jit: compile selu")
    n = 100_000 if fast else 1_000_000
    x = random.normal(key, (n,))
    selu_jit = jit(selu)
    np.testing.assert_allclose(selu_jit(x), selu(x), rtol=1e-12, atol=1e-12)
    # that first call ran the generated NumPy code while Numba compiled in the background;
    # wait for the compiled code before timing it
    selu_jit.wait()
    if not fast:
        t_np, t_jit = timeit(selu, x), timeit(selu_jit, x)
        print(f"selu on {n:,} floats: NumPy {t_np * 1e3:.2f} ms, jit {t_jit * 1e3:.2f} ms "
              f"({t_np / t_jit:.1f}x)")
    print(show(selu_jit, x))

    banner("grad: derivative of sum_logistic")
    x_small = np.arange(3.0)
    derivative = grad(sum_logistic)
    g = derivative(x_small)
    fd = first_finite_differences(sum_logistic, x_small)
    print("grad:               ", g)
    print("finite differences: ", fd)
    np.testing.assert_allclose(g, [0.25, 0.19661193, 0.10499359], rtol=1e-6)
    np.testing.assert_allclose(g, fd, atol=1e-4)
    np.testing.assert_allclose(derivative_fn(x_small), g)
    print(derivative.source)

    banner("composition: grad(jit(grad(jit(grad(sum_logistic)))))")
    third = grad(jit(grad(jit(grad(sum_logistic)))))
    value = third(1.0)
    print(f"{value:.7f}")
    s = 1 / (1 + np.exp(-1.0))
    exact = s * (1 - s) * (1 - 6 * s + 6 * s * s)     # third derivative of the logistic
    np.testing.assert_allclose(value, exact, rtol=1e-10)
    np.testing.assert_allclose(value, -0.0353256, atol=1e-7)
    lines = third.source_for(1.0).splitlines()
    print("\n".join(lines[:24]))
    print(f"    ... ({len(lines)} lines in all: three reverse sweeps, each differentiating the last)")

    banner("jacobian of exp")
    J = jacobian(exp)(x_small)
    print(J)
    np.testing.assert_allclose(J, np.diag(np.exp(x_small)), rtol=1e-12)
    print("(jacobian = jacrev: it calls the generated vjp once per output element;\n"
          " see it with: transpile show examples/quickstart.py -f exp -t jacrev)")

    banner("hessian of sum_logistic")
    H = hessian(sum_logistic)(x_small)
    print(H)
    s = 1 / (1 + np.exp(-x_small))
    np.testing.assert_allclose(H, np.diag(s * (1 - s) * (1 - 2 * s)), atol=1e-12)
    print("(hessian = jacfwd(grad(f)): see the generated jvp-of-grad with:\n"
          " transpile show examples/quickstart.py -f sum_logistic -t hessian)")

    banner("vmap: batch apply_matrix")
    key1, key2 = random.split(key)
    mat = random.normal(key1, (150, 100))
    batched_x = random.normal(key2, (10, 100))

    def apply_matrix(v):
        return np.dot(mat, v)

    naive = np.stack([apply_matrix(v) for v in batched_x])
    vmapped = jit(vmap(apply_matrix))
    np.testing.assert_allclose(vmapped(batched_x), naive, atol=1e-10, rtol=1e-10)
    print("vmap(apply_matrix)(batched_x).shape =", vmapped(batched_x).shape)
    if not fast:
        batched = vmap(apply_matrix)
        print(f"naive loop {timeit(lambda b: np.stack([apply_matrix(v) for v in b]), batched_x) * 1e6:.0f} us, "
              f"vmap {timeit(batched, batched_x) * 1e6:.0f} us, "
              f"jit(vmap) {timeit(vmapped, batched_x) * 1e6:.0f} us")
    print(show(vmap(apply_matrix), batched_x))

    banner("done")
    print("quickstart: all checks passed")


def fast_mode(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes for CI")
    args = parser.parse_args(argv)
    return args.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1"


if __name__ == "__main__":
    main(fast=fast_mode())
