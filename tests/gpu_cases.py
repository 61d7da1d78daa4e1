"""Workloads shared by the GPU tests and bench/bench_gpu.py."""
import numpy as np

from transpile import grad


def selu(x):
    alpha = 1.6732632423543772
    scale = 1.0507009873554805
    return scale * np.where(x > 0, x, alpha * (np.exp(x) - 1))


def poly(x):
    return x * x + 2 * x


def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def mlp_layer(W, b, x):
    return np.tanh(x @ W + b)


def mlp_loss(W1, b1, W2, b2, x, y):
    h = np.tanh(x @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


mlp_grad = grad(mlp_loss, argnums=(0, 1, 2, 3))
grad_sum_logistic = grad(sum_logistic)


def mlp_args(dtype, batch=8, n_in=5, n_hidden=7, n_out=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n_in, n_hidden)).astype(dtype) * 0.3,
            rng.standard_normal(n_hidden).astype(dtype) * 0.1,
            rng.standard_normal((n_hidden, n_out)).astype(dtype) * 0.3,
            rng.standard_normal(n_out).astype(dtype) * 0.1,
            rng.standard_normal((batch, n_in)).astype(dtype),
            rng.standard_normal((batch, n_out)).astype(dtype)]


def cases(dtype, n=300):
    """[(label, function or transform, args)] for one dtype."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(dtype)
    x2 = rng.standard_normal((17, 13)).astype(dtype)
    margs = mlp_args(dtype)
    return [("selu", selu, [x]), ("poly", poly, [x2]), ("sum_logistic", sum_logistic, [x]),
            ("grad_sum_logistic", grad_sum_logistic, [x]),
            ("mlp_layer", mlp_layer, [margs[0], margs[1], margs[4]]),
            ("mlp_grad", mlp_grad, margs)]


def exp2_plus_one(x):
    """np.exp2 has no numba.cuda lowering: exercises the array-op fallback."""
    return np.exp2(x) + 1.0


def norm(x):
    return np.sqrt(np.sum(x * x))
