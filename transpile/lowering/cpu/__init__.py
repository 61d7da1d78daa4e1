"""Lowering to Numba on the CPU."""
