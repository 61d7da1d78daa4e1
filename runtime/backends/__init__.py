"""Run-time helpers that compiled backend code imports: numba_math (exp32/exp64 for Numba) and
numba_special (scalar Numba kernels for scipy.special/stats rows).

The backends themselves (code generators, program objects, the name -> compile registry) live
in transpile/lowering/; this package imports nothing from transpile/.
"""
