"""Per-example gradients with vmap(grad(...)): one gradient per training example, no Python loop.

    python examples/per_example_gradients.py [--fast]

Used for gradient clipping per example (DP-SGD), influence estimates, gradient-noise statistics.
Checked against the analytic gradient of a squared loss and against a loop of grad calls.
"""
import argparse
import os
import time

import numpy as np

from transpile import grad, jit, random, show, vmap


def squared_loss(w, x, y):
    return 0.5 * (np.dot(x, w) - y) ** 2


def mean_loss(w, X, Y):
    return np.mean(0.5 * (X @ w - Y) ** 2)


def net_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    return (np.dot(h, params["w2"]) - y) ** 2


per_example = vmap(grad(squared_loss), in_axes=(None, 0, 0))
per_example_net = jit(vmap(grad(net_loss), in_axes=(None, 0, 0)))


def main(fast=False):
    n, d = (256, 8) if fast else (4096, 32)
    k1, k2, k3, k4 = random.split(random.key(0), 4)
    X = random.normal(k1, (n, d))
    w = random.normal(k2, (d,))
    Y = X @ np.ones(d) + 0.1 * random.normal(k3, (n,))

    G = per_example(w, X, Y)
    print(f"per-example gradients: {G.shape} for {n} examples of {d} features")
    analytic = (X @ w - Y)[:, None] * X
    np.testing.assert_allclose(G, analytic, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(G.mean(axis=0), grad(mean_loss)(w, X, Y), rtol=1e-10, atol=1e-12)
    print("matches the analytic (x.w - y) x, and their mean is grad of the mean loss")

    # clip each example's gradient to norm <= 1, then average (the DP-SGD step)
    norms = np.linalg.norm(G, axis=1)
    clipped = G / np.maximum(norms / 1.0, 1.0)[:, None]
    print(f"gradient norms: median {np.median(norms):.3f}, max {norms.max():.3f}; "
          f"clipped mean norm {np.linalg.norm(clipped.mean(axis=0)):.4f}")
    assert np.all(np.linalg.norm(clipped, axis=1) <= 1.0 + 1e-12)

    params = {"w1": random.normal(k4, (d, 16)) / np.sqrt(d), "b1": np.zeros(16),
              "w2": np.linspace(-1, 1, 16)}
    Gnet = per_example_net(params, X, Y)
    m = 16
    loop = [grad(net_loss)(params, X[i], Y[i]) for i in range(m)]
    for name in params:
        np.testing.assert_allclose(Gnet[name][:m], np.stack([g[name] for g in loop]),
                                   rtol=1e-10, atol=1e-12)
    print("tanh net: vmap(grad) per-example gradients equal a loop of grad calls:",
          {k: v.shape for k, v in Gnet.items()})
    if not fast:
        per_example_net.wait()            # the compiled tier (the call above may have run NumPy)
        t0 = time.perf_counter()
        per_example_net(params, X, Y)
        t1 = time.perf_counter()
        [grad(net_loss)(params, X[i], Y[i]) for i in range(n)]
        t2 = time.perf_counter()
        print(f"{n} per-example gradients: jit(vmap(grad)) {(t1 - t0) * 1e3:.1f} ms, "
              f"Python loop of grad {(t2 - t1) * 1e3:.1f} ms")
    print("\nthe batched gradient source:")
    print(show(per_example, w, X, Y))
    print("per_example_gradients: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes for CI")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1")
