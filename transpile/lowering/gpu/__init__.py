"""Lowering to CUDA: CuPy RawKernels (CUDA C) and numba.cuda."""
