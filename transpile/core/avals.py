"""Abstract values: the shape and dtype (and NumPy 2 weak-scalar flag) of a value, as shape
specialization (optimize/specialize.py) and jit's compile cache know it, with the concrete stand-ins
used to evaluate primitives on abstract values.
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AVal:
    """Abstract value: shape and dtype; weak=True for a Python scalar (NumPy 2 weak typing)."""
    shape: tuple
    dtype: np.dtype
    weak: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def __repr__(self):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]" + ("~" if self.weak else "")


def aval_of(value):
    """The abstract value of a concrete argument."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return AVal((), np.dtype(type(value)), True)
    if isinstance(value, np.ndarray):
        return AVal(value.shape, value.dtype)
    if isinstance(value, np.generic):
        return AVal((), value.dtype)
    if hasattr(value, "__cuda_array_interface__"):    # a GPU array (CuPy): never copied here
        return AVal(tuple(value.shape), np.dtype(value.dtype))
    a = np.asarray(value)
    return AVal(a.shape, a.dtype)


def dummy(av, full=False):
    """A cheap concrete stand-in with the abstract value's type (ones, never materialized)."""
    if av.weak:
        return av.dtype.type(1).item()
    if not av.shape:
        return av.dtype.type(1)
    if full:
        return np.broadcast_to(np.ones((), av.dtype), av.shape)
    return np.ones((1,) * len(av.shape), av.dtype)
