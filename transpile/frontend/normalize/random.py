"""Random generators inside transformed code.

np.random.default_rng(seed) made in the function, and a np.random.Generator passed in, are
run-time values: each draw (rng.normal(0.0, 1.0, n), rng.integers(0, n, n)) becomes
`rt.generator_draw(rng, method, args)` (transpile/primitives/numpy/generators.py), a call
with an effect that runs in the user's order, so the numbers (and the state a Generator
argument is left in) are NumPy's, in loops and branches too; jit compiles the draws.

np.random.RandomState(seed) made in the function is a *stream*: each draw (rs.randn(3))
becomes `rt.random_draw(factory, seed, history, method, args)`, which recreates the generator
and replays the earlier draws, so a draw is a pure function of its position and gives the
numbers NumPy gives. A draw from a RandomState made outside a run-time loop or branch, taken
inside it, is refused: its position in the stream is not known while generating code.

The values are not differentiated (as any random value).
"""
import gast
import numpy as np

from transpile.errors import TranspileError
from transpile.core.ir import Const
from transpile.primitives import by_name
from transpile.primitives.numpy.generators import IN_PLACE as GENERATOR_IN_PLACE, \
    METHODS as GENERATOR_METHODS, generator_draw, make_generator
from transpile.frontend.normalize.values import Struct

FACTORIES = {id(np.random.RandomState): "RandomState", id(np.random.default_rng): "default_rng"}


class RandomStream:
    def __init__(self, factory, seed, depth):
        self.factory, self.seed, self.depth = factory, seed, depth
        self.history = []


class GeneratorMethod:
    """`rng.normal` of a run-time value (a np.random.Generator), not called yet."""

    def __init__(self, rng, method):
        self.rng, self.method = rng, method


class RandomDraw:
    """`rs.randn` of a RandomStream, not called yet."""

    def __init__(self, stream, method):
        self.stream, self.method = stream, method


def make_stream(norm, obj, args, kwargs, node):
    factory = FACTORIES[id(obj)]
    if len(args) > 1 or set(kwargs) - {"seed"}:
        raise norm.error(node, f"np.random.{factory}(seed) takes one argument here",
                         cls=TranspileError)
    seed = args[0] if args else kwargs.get("seed", Const(None))
    if factory == "default_rng":
        return norm.b.emit(make_generator, {"seed": norm.to_arg(seed, node)})
    return RandomStream(factory, norm.to_arg(seed, node), getattr(norm, "sub_depth", 0))


def draw(norm, d, args, kwargs, node, base):
    stream = d.stream
    if getattr(norm, "sub_depth", 0) != stream.depth:
        raise norm.error(node, f"a draw from np.random.{stream.factory}(...) inside a loop or "
                         "branch on run-time values, from a generator made outside it",
                         construct=f".{d.method}(...)", cls=TranspileError,
                         hint="make the generator inside the loop, or draw all values before "
                              "the loop")
    what = f"the arguments of .{d.method}() on a random generator"
    a = tuple(_static(norm, v, node, what) for v in args)
    kw = tuple(sorted((k, _static(norm, v, node, what)) for k, v in kwargs.items()))
    out = norm.b.emit(by_name("random_draw"), {
        "factory": Const(stream.factory), "seed": stream.seed,
        "history": Const(tuple(stream.history)), "method": Const(d.method),
        "args": Const((a, kw))}, base=base)
    stream.history.append((d.method, a, kw))
    return out


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
    if not isinstance(func, (GeneratorMethod, RandomDraw)):
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
    return norm.b.emit(generator_draw, {"rng": m.rng, "method": Const(m.method),
                                        "args": norm.to_arg(items, node),
                                        "kwnames": Const(names)}, base=base)


def _static(norm, v, node, what):
    if isinstance(v, Struct):
        return tuple(_static(norm, i, node, what) for i in v.items)
    value = norm.static_value(v, node, what)
    return value.item() if isinstance(value, np.generic) else value
