"""What an executor needs to launch one generated kernel (shared by the CUDA C and numba.cuda
lowerings): the parameter list in order, the outputs to allocate, the reduction to finish."""
from dataclasses import dataclass, field

import numpy as np


@dataclass
class KernelParam:
    kind: str        # 'in' (array, indexed), 'scalar' (host number by value), 'out', 'acc', 'n'
    var: str = None
    dtype: np.dtype = None


@dataclass
class KernelInfo:
    name: str
    source: str
    params: list                      # [KernelParam] in launch order
    size: int                         # iteration count
    shape: tuple                      # iteration shape (the outputs' shape)
    reduction: object = None          # the trailing sum/mean Eqn, or None
    acc_dtype: np.dtype = None        # dtype of the accumulator (reduction only)
    index_type: str = "int"
    notes: list = field(default_factory=list)


def index_expr(in_shape, shape, i="i", div="/"):
    """C/Python expression for the flat index into a C-contiguous input of `in_shape` that
    broadcasts to the iteration `shape`, from the flat iteration index `i` (constants baked in:
    plans are specialized on shapes)."""
    in_size = int(np.prod(in_shape)) if in_shape else 1
    if in_size == 1:
        return "0"
    if tuple(in_shape) == tuple(shape):
        return i
    nd = len(shape)
    padded = (1,) * (nd - len(in_shape)) + tuple(in_shape)
    # a suffix of the iteration shape: the index wraps around
    k = 0
    while k < nd and padded[k] == 1:
        k += 1
    if padded[k:] == tuple(shape[k:]):
        return f"{i} % {in_size}"
    out_strides = [int(np.prod(shape[d + 1:])) for d in range(nd)]
    in_strides = [int(np.prod(padded[d + 1:])) for d in range(nd)]
    terms = []
    for d in range(nd):
        if padded[d] == 1:
            continue
        t = i if out_strides[d] == 1 else f"{i} {div} {out_strides[d]}"
        if d > 0:
            t = f"({t}) % {shape[d]}" if out_strides[d] != 1 else f"{t} % {shape[d]}"
        if in_strides[d] != 1:
            t = f"({t}) * {in_strides[d]}"
        terms.append(t if len(terms) == 0 and in_strides[d] == 1 else f"({t})")
    return " + ".join(terms)
