"""Execution backends for generated code (CuPy RawKernels, numba.cuda kernels)."""
