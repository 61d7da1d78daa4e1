"""grad(f) in eager mode vs a hand-written NumPy gradient (and autograd when installed).

Run: python bench/bench_grad.py      Prints one table; ratio = time / hand-written NumPy time.
"""
import timeit

import numpy as np

from transpile import grad

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # optional
    autograd = None


def best(fn, number=20, repeat=5):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


# ---- sum_logistic on 1M elements ----------------------------------------------------------------
def sum_logistic(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def sum_logistic_grad_by_hand(x):
    e = np.exp(-x)
    d = 1.0 + e
    return e / (d * d)


# ---- MLP loss 784-128-10, batch 128 --------------------------------------------------------------
def mlp_loss(params, x, y):
    h = np.tanh(x @ params['W1'] + params['b1'])
    logits = h @ params['W2'] + params['b2']
    return np.mean((logits - y) ** 2)


def mlp_grad_by_hand(params, x, y):
    z = x @ params['W1'] + params['b1']
    h = np.tanh(z)
    logits = h @ params['W2'] + params['b2']
    d_logits = 2.0 * (logits - y) / logits.size
    dW2 = h.T @ d_logits
    db2 = d_logits.sum(axis=0)
    dh = d_logits @ params['W2'].T
    dz = dh * (1.0 - h * h)
    return {'W1': x.T @ dz, 'b1': dz.sum(axis=0), 'W2': dW2, 'b2': db2}


def main():
    rng = np.random.default_rng(0)
    rows = []
    x = rng.normal(size=1_000_000)
    g = grad(sum_logistic)
    np.testing.assert_allclose(g(x), sum_logistic_grad_by_hand(x), rtol=1e-10)
    t_hand = best(lambda: sum_logistic_grad_by_hand(x))
    t_ours = best(lambda: g(x))
    t_ag = None
    if autograd is not None:
        ag = autograd.grad(lambda x: anp.sum(1.0 / (1.0 + anp.exp(-x))))
        t_ag = best(lambda: ag(x))
    rows.append(("grad sum_logistic 1M f64", t_hand, t_ours, t_ag))

    params = {'W1': rng.normal(size=(784, 128)) * 0.05, 'b1': np.zeros(128),
              'W2': rng.normal(size=(128, 10)) * 0.1, 'b2': np.zeros(10)}
    xb = rng.normal(size=(128, 784))
    yb = rng.normal(size=(128, 10))
    gm = grad(mlp_loss)
    ours = gm(params, xb, yb)
    hand = mlp_grad_by_hand(params, xb, yb)
    for k in params:
        np.testing.assert_allclose(ours[k], hand[k], rtol=1e-9, atol=1e-12)
    t_hand = best(lambda: mlp_grad_by_hand(params, xb, yb), number=50)
    t_ours = best(lambda: gm(params, xb, yb), number=50)
    t_ag = None
    if autograd is not None:
        def ag_loss(p, x, y):
            h = anp.tanh(anp.dot(x, p['W1']) + p['b1'])
            return anp.mean((anp.dot(h, p['W2']) + p['b2'] - y) ** 2)
        agm = autograd.grad(ag_loss)
        t_ag = best(lambda: agm(params, xb, yb), number=50)
    rows.append(("grad MLP 784-128-10 batch 128", t_hand, t_ours, t_ag))

    print(f"{'workload':34s} {'hand NumPy':>11s} {'transpile':>11s} {'ratio':>6s} "
          f"{'autograd':>11s} {'ratio':>6s}")
    for name, th, to, ta in rows:
        ag_cols = f"{ta * 1e3:9.3f}ms {ta / th:6.2f}" if ta else f"{'n/a':>11s} {'':>6s}"
        print(f"{name:34s} {th * 1e3:9.3f}ms {to * 1e3:9.3f}ms {to / th:6.2f} {ag_cols}")
    print("ratio = time / hand-written NumPy (target for transpile: <= 1.3)")


if __name__ == "__main__":
    main()
