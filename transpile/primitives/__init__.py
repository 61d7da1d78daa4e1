"""The primitive table. Importing this package registers every primitive.

  registry.py     the Primitive record, defprim and the lookups
  numpy/          NumPy's functions (and Python's math module), by domain
  scipy/          scipy.special and scipy.stats
  internal/       what generated code calls: adjoint and batching helpers, copies and writes,
                  the tape, collectives, print
  batching/       vmap's batching rules, named by the rows' `batch=` field
  random_rows.py  transpile.random's functions (threefry keys, draws)
  numba_forms.py  Numba CPU forms of whole calls, named by the rows' `numba=` field
"""
from transpile.primitives.registry import (METHODS, Primitive, all_primitives, by_name,
                                           defmethod, defprim, lookup)
from transpile.primitives.numpy import (arrays, array_logic, builtin_numbers,  # noqa: F401
                                        elementwise, fft, filters, flat_indices, generators,
                                        histograms, linalg, nan_reductions, nondiff,
                                        piecewise, products, python_math, reductions, stats,
                                        structure, ufunc_methods)
from transpile.primitives.scipy import special, stats as scipy_stats  # noqa: F401
from transpile.primitives.internal import (adjoint_helpers, batch_helpers,  # noqa: F401
                                           collectives, control, debugging)
from transpile.primitives import random_rows  # noqa: F401  (transpile.random's functions)
