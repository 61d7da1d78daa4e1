"""Lowerings of core Python to compiled forms (CUDA C for CuPy RawKernels, numba.cuda kernels)."""
