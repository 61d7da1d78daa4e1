"""Do array arguments share memory? Transformed code reads and writes each argument as its
own array; NumPy, given the same buffer twice (`f(a, a)`), sees a write through one name in
the other. A function that writes into an argument is refused for such a call (api/jit.py,
api/autodiff.py) rather than giving other numbers than NumPy."""
import numpy as np


def overlapping(values):
    """The positions (i, j) of the first two arrays among `values` that may share memory, or
    None (np.may_share_memory: a bounds check, no false negatives)."""
    arrays = [(i, v) for i, v in enumerate(values) if isinstance(v, np.ndarray) and v.size]
    for k, (i, a) in enumerate(arrays):
        for j, b in arrays[k + 1:]:
            if np.may_share_memory(a, b):
                return i, j
    return None


def shares(*values):
    """Does any pair of the arrays among `values` share memory? (the dispatch fast path)"""
    return overlapping(values) is not None
