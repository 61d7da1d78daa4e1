"""Run-time helpers that compiled backend code imports (numba_math: exp32/exp64 for Numba).

The backends themselves (code generators, program objects, the name -> compile registry) live
in transpile/lowering/; this package imports nothing from transpile/.
"""
