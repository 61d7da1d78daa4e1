"""Linear regression by gradient descent (seed 001): N = 1e6 points, 1000 jit(grad) updates.

    python examples/linear_regression.py            # N = 1e6, 1000 steps
    python examples/linear_regression.py --fast     # N = 1e5, 400 steps (CI; or TRANSPILE_EXAMPLES_FAST=1)

The data is y = 4 x + 1 + noise; the fitted parameters must come out near w = 4, b = 1.
The seed uses lr = 0.01, which after 1000 steps is still far from converged (the slow
direction of this problem contracts by only 0.1 % per step); we use lr = 0.1, which converges.
"""
import argparse
import os
import time

import numpy as np

from transpile import grad, jit, random, show

N = int(1e6)
LR = 0.1
key = random.key(1)
k1, k2 = random.split(key)
X = random.uniform(k1, shape=(N,))
y = 4 * X + 1 + random.normal(k2, shape=(N,))


def model(theta):
    return X * theta["w"] + theta["b"]


def loss_fn(theta):
    return np.mean((model(theta) - y) ** 2)


@jit
def update(theta):
    grads = grad(loss_fn)(theta)
    return {"w": theta["w"] - LR * grads["w"], "b": theta["b"] - LR * grads["b"]}


def fit(steps):
    theta = {"w": np.array(1.0), "b": np.array(0.0)}
    theta = update(theta)                 # first call: runs NumPy while Numba compiles
    update.wait()                         # time the compiled steps only
    t0 = time.perf_counter()
    for _ in range(steps - 1):
        theta = update(theta)
    return theta, time.perf_counter() - t0


def main(fast=False, steps=None):
    global X, y
    if fast:
        X, y = X[:100_000], y[:100_000]
    steps = steps or (400 if fast else 1000)
    theta, seconds = fit(steps)
    w, b = float(theta["w"]), float(theta["b"])
    print(f"N = {len(X):,}, {steps} steps of jit(grad) updates: {seconds:.3f} s "
          f"({seconds / max(steps - 1, 1) * 1e3:.3f} ms/step after the first call)")
    print(f"fitted w = {w:.4f}, b = {b:.4f}   (true w = 4, b = 1)")
    print(f"final loss = {float(loss_fn(theta)):.4f}   (noise variance = 1)")
    # closed-form least squares on the same data: gradient descent must agree with it
    A = np.stack([X, np.ones_like(X)], axis=1)
    w_ls, b_ls = np.linalg.lstsq(A, y, rcond=None)[0]
    print(f"least squares: w = {w_ls:.4f}, b = {b_ls:.4f}")
    assert abs(w - w_ls) < 0.05 and abs(b - b_ls) < 0.03, "gradient descent did not converge"
    assert abs(w - 4) < 0.1 and abs(b - 1) < 0.06, "fitted parameters are off"
    if not fast:
        print("\nthe generated update step (grad inlined into it):")
        print(show(update, theta))
    print("linear_regression: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes for CI")
    parser.add_argument("--steps", type=int, help="number of gradient steps")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1", steps=a.steps)
