"""Data-parallel training with pmap: each device takes a shard of the batch, pmean averages grads.

    python examples/data_parallel.py [--fast]

On a CPU, pmap runs one shard per virtual device (TRANSPILE_CPU_DEVICES, default here 4) on
worker threads; with GPUs, one per GPU. The averaged shard gradients must equal the gradient of
the full batch, and the replicated parameters must stay identical on every device.
"""
import argparse
import os

os.environ.setdefault("TRANSPILE_CPU_DEVICES", "4")   # before transpile creates its devices

import numpy as np  # noqa: E402

from transpile import device_count, grad, pmap, pmean, random  # noqa: E402


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


LR = 0.5


@pmap(axis_name="batch", in_axes=(None, 0, 0))
def shard_grads(w, x, y):
    return pmean(grad(loss)(w, x, y), "batch")


@pmap(axis_name="batch", in_axes=(0, 0, 0))
def train_step(w, x, y):
    g = pmean(grad(loss)(w, x, y), "batch")
    return w - LR * g, pmean(loss(w, x, y), "batch")


def main(fast=False):
    n_dev = device_count()
    per_device, d = (64, 4) if fast else (4096, 16)
    k1, k2, k3 = random.split(random.key(7), 3)
    X = random.normal(k1, (n_dev * per_device, d))
    w_true = random.normal(k2, (d,)) / np.sqrt(d)
    Y = np.tanh(X @ w_true) + 0.01 * random.normal(k3, (len(X),))
    w = np.zeros(d)

    xs = X.reshape(n_dev, per_device, d)      # shard the batch along a new leading axis
    ys = Y.reshape(n_dev, per_device)
    g_shards = shard_grads(w, xs, ys)         # (n_dev, d): the same pmean on every device
    g_full = grad(loss)(w, X, Y)
    print(f"{n_dev} devices x {per_device} examples: pmean of shard gradients")
    print("  pmap:      ", g_shards[0])
    print("  full batch:", g_full)
    np.testing.assert_allclose(g_shards, np.broadcast_to(g_full, g_shards.shape),
                               rtol=1e-12, atol=1e-14)

    ws = np.stack([w] * n_dev)                 # replicated parameters
    steps = 60 if fast else 200
    for step in range(steps):
        ws, losses = train_step(ws, xs, ys)
        if step % (steps // 5) == 0 or step == steps - 1:
            print(f"step {step:4d}: loss {losses[0]:.6f}")
    assert np.all(ws == ws[0]), "replicas diverged"
    final = loss(ws[0], X, Y)
    print(f"final loss {final:.6f}; |w - w_true| = {np.linalg.norm(ws[0] - w_true):.4f}")
    assert final < 0.1 * loss(np.zeros(d), X, Y), "data-parallel training did not reduce the loss"
    print("data_parallel: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes for CI")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1")
