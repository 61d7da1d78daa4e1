"""Calls inside transformed code to callables that are not plain functions.

functools.partial objects and bound methods (`model.loss(x)`, `M.create(x)`) are inlined as the
function they wrap, with the bound values in front; `functools.partial(f, ...)` written inside
the transformed function builds such a callable while the code is generated. An instance of a
user class (a model object) is a Python object known while generating code, so `self.w` reads
its attribute: arrays become parameters re-read from the object at every call.
"""
import functools
import sys
import types

import numpy as np

from transpile.frontend.callables import is_data, unwrap_callable
from transpile.frontend.parse import container_structure, unrolled_container
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
    # arrays read again at every call; numbers, strings, functions, a container's structure
    # and the object an attribute holds are checked at every call (the code is generated
    # again when one changes: `model.params = {...}` rebound by a training loop)
    where = ("attr", obj, attr)
    if type(value) in (tuple, list, dict) and not unrolled_container(value):
        # a long container: its entries are constants of the code (which is generated again
        # when another container, or one of another structure, is there)
        norm.deps += [(("id", where), id(value)),
                      (("structure", where), container_structure(value))]
        return norm.classify(value, None, attr)
    return norm.classify(value, where, attr)


_LIBRARIES = {"numpy", "scipy", "numba", "transpile", "transpile_runtime", "jax", "cupy"}


def watched_namespace(obj):
    """A module or class of the user's (a config module, a class attribute) whose attributes
    can change between calls, unlike a library's (np.pi, np.float64, math.tau)."""
    if isinstance(obj, types.ModuleType):
        name = obj.__name__
    elif isinstance(obj, type):
        name = getattr(obj, "__module__", None) or "builtins"
    else:
        return False
    top = name.split(".")[0]
    return top not in _LIBRARIES and top not in sys.stdlib_module_names
