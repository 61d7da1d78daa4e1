"""Callables that are not plain functions: functools.partial, bound methods, classmethods.

A transform (or a call inside transformed code) sees through them to the Python function they
wrap: `functools.partial(loss, scale=2.0)` is `loss` with `scale` defaulting to 2.0 (it stays a
parameter, as in Python's own signature), `model.loss` is `M.loss` with `self` bound to
`model`, `M.create` (a classmethod) is the function with `cls` bound to `M`.
"""
import functools
import inspect
import operator
import types

import numpy as np

from transpile_runtime.pytree import static_leaf


def unwrap_callable(fun):
    """(python function, leading positional args, keyword args) for a partial / bound method /
    callable instance, or None when `fun` is not one of them."""
    if isinstance(fun, functools.partial):
        inner = unwrap_callable(fun.func)
        if inner is None:
            if not isinstance(fun.func, types.FunctionType):
                return None
            inner = (fun.func, (), {})
        fn, args, kw = inner
        return fn, tuple(args) + tuple(fun.args), {**kw, **fun.keywords}
    if isinstance(fun, types.MethodType) and isinstance(fun.__func__, types.FunctionType):
        return fun.__func__, (fun.__self__,), {}
    call = getattr(type(fun), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(fun, type) and not any(
            hasattr(fun, a) for a in ("__transpile_core__", "__transpile_static__", "__wrapped__",
                                      "__transpile_node_method__")):
        return call, (fun,), {}         # an instance of a class with a Python __call__
    return None


def callable_name(fun):
    inner = unwrap_callable(fun)
    f = inner[0] if inner is not None else fun
    return getattr(f, "__name__", type(fun).__name__)


def build_core_bound(fun, in_trees, build_core):
    """Core form of a partial / bound method: the wrapped function's, with the positionally
    bound values fixed (they belong to the callable, like a closure)."""
    fn, pre_args, _ = unwrap_callable(fun)
    sig_names = list(inspect.signature(fun).parameters)
    fn_names = list(inspect.signature(fn).parameters)
    bound = dict(zip(fn_names, pre_args))
    trees_by_name = dict(zip(sig_names, in_trees))
    trees, statics = [], {}
    for n in fn_names:
        if n in trees_by_name:
            trees.append(trees_by_name[n])
        else:
            trees.append(static_leaf(bound[n]))
            statics[n] = bound[n]
    core = build_core(fn, tuple(trees), statics)
    return core


def is_data(obj):
    """A value that enters generated code as data (arrays, numbers, containers of them)
    rather than as a Python object read while generating code."""
    if isinstance(obj, (np.ndarray, np.generic, bool, int, float, complex, tuple, list, dict)):
        return True
    return hasattr(obj, "__array__") or hasattr(obj, "__cuda_array_interface__")


def as_index(value):
    """operator.index for argnums given as NumPy integers (np.int64(1)); tuples elementwise."""
    if isinstance(value, (tuple, list)):
        return type(value)(as_index(v) for v in value)
    if isinstance(value, (bool, np.bool_)):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def param_list(f):
    """'w, x' for a transform of `def loss(w, x)`: for messages that ask for arguments."""
    for _ in range(50):
        inner = getattr(f, "fun", None)
        if inner is None or inner is f:
            break
        f = inner
    try:
        return ", ".join(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        return "*example_args"
