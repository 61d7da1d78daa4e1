"""Random generators inside transformed code: run-time values.

np.random.default_rng(seed) and np.random.RandomState(seed) made in the function, and a
np.random.Generator passed in: each draw (rng.normal(0.0, 1.0, n), rs.randn(3)) becomes
`rt.generator_draw(rng, method, args, kwnames)` (`rt.legacy_draw` for a RandomState: jit
compiles it differently; transpile/primitives/numpy/generators.py), a call with an effect
that runs in the user's order, so the numbers (and the state a Generator argument is left
in) are NumPy's, in loops and branches too; jit compiles the draws. The values are not
differentiated (as any random value).
"""
import gast
import numpy as np

from transpile.errors import TranspileError
from transpile.core.ir import Const
from transpile.primitives.numpy.generators import (  # noqa: F401  (the METHODS: expressions.py)
    IN_PLACE as GENERATOR_IN_PLACE, LEGACY_METHODS, METHODS as GENERATOR_METHODS, generator_draw,
    legacy_draw, make_generator, make_random_state)
from transpile.frontend.normalize.values import Struct

FACTORIES = {id(np.random.RandomState): make_random_state,
             id(np.random.default_rng): make_generator}


class RandomStateValue:
    """np.random.RandomState(seed) made in the function: its run-time value `var` (its draws
    are rows of their own: Numba has no RandomState objects)."""

    def __init__(self, var):
        self.var = var


class GeneratorMethod:
    """`rng.normal` of a run-time generator, not called yet."""

    def __init__(self, rng, method, legacy=False):
        self.rng, self.method, self.legacy = rng, method, legacy


def make_stream(norm, obj, args, kwargs, node):
    row = FACTORIES[id(obj)]
    if len(args) > 1 or set(kwargs) - {"seed"}:
        raise norm.error(node, f"np.random.{row.path.split('.')[-1]}(seed) takes one argument "
                         "here", cls=TranspileError)
    seed = args[0] if args else kwargs.get("seed", Const(None))
    out = norm.b.emit(row, {"seed": norm.to_arg(seed, node)})
    return RandomStateValue(out) if row is make_random_state else out


def draw_statement(norm, call):
    """`rng.normal(size=3)` as a statement: the draw is kept (the draws after it depend on it).
    False for other statements."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)):
        return False
    try:
        func = norm.expr(call.func, "f")
    except Exception:
        return False
    if not isinstance(func, GeneratorMethod):
        return False
    norm.expr(call, "t")
    return True


def generator_call(norm, m, args, kwargs, node, base):
    """rng.method(...) on a Generator: constants and run-time values alike."""
    if m.method in GENERATOR_IN_PLACE:
        raise norm.error(node, f"rng.{m.method}(...) changes its argument in place, which "
                         "transformed code does not keep", cls=TranspileError,
                         hint=f"write {GENERATOR_IN_PLACE[m.method]}")
    if "out" in kwargs:
        raise norm.error(node, f"rng.{m.method}(..., out=...) writes in place, which "
                         "transformed code does not keep", cls=TranspileError,
                         hint="use its result")
    names = tuple(kwargs)
    items = Struct("tuple", list(args) + [kwargs[k] for k in names])
    if m.legacy:
        return norm.b.emit(legacy_draw, {"rs": m.rng, "method": Const(m.method),
                                         "args": norm.to_arg(items, node),
                                         "kwnames": Const(names)}, base=base)
    return norm.b.emit(generator_draw, {"rng": m.rng, "method": Const(m.method),
                                        "args": norm.to_arg(items, node),
                                        "kwnames": Const(names)}, base=base)
