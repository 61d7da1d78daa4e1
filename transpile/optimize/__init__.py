"""jit's passes over core Python: shape specialization, fusion, in-place reuse, dead code."""
