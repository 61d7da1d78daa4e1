"""vmap(apply_matrix) vs a naive Python loop vs hand-batched NumPy (seed 003 sizes).

    PYTHONPATH=. python3 bench/bench_vmap.py
Prints times from one run and the ratios; target: vmap within 1.5x of hand-batched NumPy.
"""
import timeit

import numpy as np

from transpile import show, vmap

rng = np.random.default_rng(0)
mat = rng.normal(size=(150, 100))
batched_x = rng.normal(size=(10, 100))


def apply_matrix(v):
    return np.dot(mat, v)


def naive_batched(v_batched):
    return np.stack([apply_matrix(v) for v in v_batched])


def hand_batched(v_batched):
    return np.dot(v_batched, mat.T)


def best(fn, number=2000, repeat=7):
    return min(timeit.repeat(lambda: fn(batched_x), number=number, repeat=repeat)) / number


def main():
    vmapped = vmap(apply_matrix)
    assert np.allclose(vmapped(batched_x), hand_batched(batched_x))
    print(show(vmapped, batched_x))
    t_loop, t_hand, t_vmap = best(naive_batched), best(hand_batched), best(vmapped)
    print(f"naive loop      {t_loop * 1e6:8.2f} us")
    print(f"hand-batched    {t_hand * 1e6:8.2f} us")
    print(f"vmap            {t_vmap * 1e6:8.2f} us")
    print(f"vmap / hand-batched = {t_vmap / t_hand:.2f}x (target <= 1.5x); "
          f"naive loop / vmap = {t_loop / t_vmap:.1f}x")


if __name__ == "__main__":
    main()
