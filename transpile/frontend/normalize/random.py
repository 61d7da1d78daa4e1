"""np.random.RandomState(seed) and np.random.default_rng(seed) inside transformed code.

A generator made in the function is a *stream*: each draw (rs.randn(3), rs.normal(0, 1, 4))
becomes `rt.random_draw(factory, seed, history, method, args)`, which recreates the generator
and replays the earlier draws, so a draw is a pure function of its position and gives the
numbers NumPy gives. The values are not differentiated (as any random value). A draw from a
generator made outside a run-time loop or branch, taken inside it, is refused: its position
in the stream is not known while generating code.
"""
import numpy as np

from transpile.errors import TranspileError
from transpile.core.ir import Const
from transpile.primitives import by_name
from transpile.frontend.normalize.values import Struct

FACTORIES = {id(np.random.RandomState): "RandomState", id(np.random.default_rng): "default_rng"}


class RandomStream:
    def __init__(self, factory, seed, depth):
        self.factory, self.seed, self.depth = factory, seed, depth
        self.history = []


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


def _static(norm, v, node, what):
    if isinstance(v, Struct):
        return tuple(_static(norm, i, node, what) for i in v.items)
    value = norm.static_value(v, node, what)
    return value.item() if isinstance(value, np.generic) else value
