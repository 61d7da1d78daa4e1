"""Functional pseudo-random numbers, in the style of ``jax.random``.

A key is a plain NumPy ``uint32`` array of shape ``(2,)``. Functions never mutate a key: the
same key always gives the same numbers, and fresh randomness comes from ``split``/``fold_in``.

The bits come from the counter-based Threefry-2x32 generator (20 rounds): each use of a key
derives a stream from it and a purpose tag (sampling, splitting, folding), so a parent's
samples are independent of its children's. The functions work inside transformed functions
too (``jit``, ``grad``, ``vmap``): ``jit`` compiles them, and a key gives the same numbers
inside and outside ``jit``. They are defined in transpile_runtime/random.py (generated code
calls them) and transpile_runtime/prng.py (the generator, which compiled code calls).
"""
from transpile_runtime.random import (PRNGKey, bernoulli, choice, fold_in, key, normal,
                                      permutation, randint, split, uniform)

__all__ = ["key", "PRNGKey", "split", "fold_in", "normal", "uniform", "randint",
           "permutation", "bernoulli", "choice"]
