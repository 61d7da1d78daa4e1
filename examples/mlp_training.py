"""Train a 64-128-128-10 MLP on handwritten digits with Adam (seed 001's MLP, on real data).

    python examples/mlp_training.py                       # 30 epochs
    python examples/mlp_training.py --fast                # 20 epochs (CI; or TRANSPILE_EXAMPLES_FAST=1)
    python examples/mlp_training.py --plot loss.png       # loss curve (needs matplotlib: pip install -e ".[examples]")

The seed's network is 784-128-128-10 for 28x28 MNIST images. scikit-learn ships a digits
dataset that loads offline (1797 images of 8x8 pixels), so the input layer here has 64 units.
The train step is jit(value_and_grad(loss)); the optimizer is transpile.optimizers.adam.
"""
import argparse
import os
import time

import numpy as np

from transpile import jit, optimizers, random, value_and_grad

DTYPE = np.float32


def load_data(seed=0):
    from sklearn.datasets import load_digits
    digits = load_digits()
    X = (digits.data / 16.0).astype(DTYPE)
    y = digits.target.astype(np.int64)
    perm = random.permutation(random.key(seed), len(X))
    X, y = X[perm], y[perm]
    n_test = len(X) // 5
    return (X[n_test:], y[n_test:]), (X[:n_test], y[:n_test])


def init_params(key, sizes=(64, 128, 128, 10)):
    params = []
    for k, (m, n) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        w = random.normal(k, (m, n), dtype=DTYPE) * DTYPE(np.sqrt(2.0 / m))
        params.append({"w": w, "b": np.zeros(n, dtype=DTYPE)})
    return params


def predict(params, x):
    h1 = np.maximum(x @ params[0]["w"] + params[0]["b"], 0.0)
    h2 = np.maximum(h1 @ params[1]["w"] + params[1]["b"], 0.0)
    return h2 @ params[2]["w"] + params[2]["b"]


def loss(params, x, onehot):
    logits = predict(params, x)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * log_probs, axis=1))


train_step = jit(value_and_grad(loss))


def accuracy(params, X, y):
    return float(np.mean(np.argmax(predict(params, X), axis=1) == y))


def train(epochs, batch_size=64, lr=1e-3, seed=0, progress=True):
    (X, y), (Xt, yt) = load_data(seed)
    onehot = np.eye(10, dtype=DTYPE)[y]
    key = random.key(seed)
    key, init_key = random.split(key)
    opt_init, opt_update, get_params = optimizers.adam(lr)
    state = opt_init(init_params(init_key))
    losses, step = [], 0
    try:
        from tqdm import tqdm
        bar = tqdm(range(epochs), desc="epochs", unit="epoch", disable=not progress)
    except ImportError:
        bar = range(epochs)
    t0 = time.perf_counter()
    for epoch in bar:
        key, sub = random.split(key)
        perm = random.permutation(sub, len(X))
        epoch_losses = []
        for i in range(0, len(X) - batch_size + 1, batch_size):
            idx = perm[i:i + batch_size]
            value, grads = train_step(get_params(state), X[idx], onehot[idx])
            state = opt_update(step, grads, state)
            step += 1
            epoch_losses.append(float(value))
        losses.append(float(np.mean(epoch_losses)))
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{losses[-1]:.4f}")
    seconds = time.perf_counter() - t0
    params = get_params(state)
    return params, losses, step, seconds, accuracy(params, X, y), accuracy(params, Xt, yt)


def plot(losses, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(np.arange(1, len(losses) + 1), losses, marker="o", markersize=3)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_yscale("log")
    ax.set_title("MLP 64-128-128-10 on sklearn digits (Adam)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(fast=False, plot_path=None, epochs=None):
    epochs = epochs or (20 if fast else 30)
    params, losses, steps, seconds, train_acc, test_acc = train(epochs, progress=not fast)
    print(f"{epochs} epochs, {steps} Adam steps in {seconds:.2f} s "
          f"({seconds / steps * 1e3:.2f} ms/step)")
    print(f"loss: first epoch {losses[0]:.4f}, last epoch {losses[-1]:.4f}")
    print(f"train accuracy: {train_acc:.4f}")
    print(f"test accuracy:  {test_acc:.4f}")
    assert all(p["w"].dtype == DTYPE for p in params), "float32 parameters must stay float32"
    assert losses[-1] < losses[0] / 5, "training loss did not go down"
    assert test_acc > 0.95, f"test accuracy {test_acc:.4f} is not above 95%"
    if plot_path:
        plot(losses, plot_path)
        print(f"wrote {plot_path}")
    print("mlp_training: all checks passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer epochs for CI")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--plot", metavar="PNG", help="write the loss curve to this PNG file")
    a = parser.parse_args()
    main(fast=a.fast or os.environ.get("TRANSPILE_EXAMPLES_FAST") == "1", plot_path=a.plot,
         epochs=a.epochs)
