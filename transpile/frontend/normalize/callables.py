"""Calls inside transformed code to callables that are not plain functions.

functools.partial objects and bound methods (`model.loss(x)`, `M.create(x)`) are inlined as the
function they wrap, with the bound values in front; `functools.partial(f, ...)` written inside
the transformed function builds such a callable while the code is generated. An instance of a
user class (a model object) is a Python object known while generating code, so `self.w` reads
its attribute: arrays become parameters re-read from the object at every call.
"""
import functools
import types

import numpy as np

from transpile.frontend.callables import is_data, unwrap_callable
from transpile.primitives.registry import lookup
from transpile.core.ir import Const, Var
from transpile.frontend.normalize.values import Static, Struct


class PartialValue:
    """functools.partial(f, *args, **kw) built inside transformed code (args may be data)."""

    def __init__(self, func, args, kwargs):
        self.func, self.args, self.kwargs = func, list(args), dict(kwargs)



def call_bound(norm, func, args, kwargs, node, base):
    """Inline a partial / bound method / PartialValue; None when `func` is none of them."""
    if isinstance(func, PartialValue):
        return norm.call(func.func, func.args + list(args), {**func.kwargs, **kwargs}, node, base)
    if not isinstance(func, Static):
        return None
    obj = func.obj
    if lookup(obj) is not None:        # a primitive that is a bound method (scipy.stats.norm.pdf)
        return None
    if obj is functools.partial:
        if not args:
            raise norm.error(node, "functools.partial needs a function")
        return PartialValue(args[0], args[1:], kwargs)
    inner = unwrap_callable(obj)
    if inner is None:
        return None
    fn, pre_args, pre_kw = inner
    pre = [norm.classify(a, None, "bound") if is_data(a) else Static(a) for a in pre_args]
    kw = {k: norm.classify(v, None, k) if is_data(v) else Static(v) for k, v in pre_kw.items()}
    kw.update(kwargs)
    return norm.call(Static(fn), pre + list(args), kw, node, base)


def instance_attribute(norm, obj, attr, node):
    """`obj.attr` for a Python object known while generating code (None: not handled here)."""
    if isinstance(obj, (types.ModuleType, type)) or is_data(obj):
        return None
    try:
        value = getattr(obj, attr)
    except AttributeError:
        return None
    if isinstance(value, (Var, Const, Struct, Static)):
        return value                   # a pytree node rebuilt around generated-code values
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return norm.classify(value, ("attr", obj, attr), attr)
    if isinstance(value, (bool, int, float, complex)):
        return norm.classify(value, ("attr", obj, attr), attr)
    if is_data(value):
        return norm.classify(value, None, attr)
    return Static(value)
