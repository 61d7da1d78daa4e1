"""Values the normalizer tracks while generating code: `Struct` (a tuple/list/dict of known
structure), `Static` (a Python object known at generation time), `Frame` (one function's
scope), `BoundMethod` (`x.sum` before it is called) and `LocalFunction` (a nested def or
lambda), and the conversion of a value to and from a flat list of atoms plus a TreeDef.
Below the normalizer's modules so that they and aliasing.py can use them without importing
the normalizer back."""
from transpile import ir
from transpile.ir import Const
from transpile.pytree import TreeDef


class Struct:
    """A tuple/list/dict whose structure is known while generating code."""

    def __init__(self, kind, items, keys=()):
        self.kind, self.items, self.keys = kind, list(items), tuple(keys)

    def get(self, key):
        if self.kind == "dict":
            if key not in self.keys:
                raise KeyError(key)
            return self.items[self.keys.index(key)]
        return self.items[key]

    def __len__(self):
        return len(self.items)


class Static:
    """A Python object known while generating code: a module, function, class, static arg."""

    def __init__(self, obj):
        self.obj = obj

    def __repr__(self):
        return f"Static({self.obj!r})"


class Frame:
    def __init__(self, parsed=None, resolver=None, owned=False, env=None):
        self.parsed = parsed
        self.resolver = resolver
        self.owned = owned          # the outermost function keeps the user's own names
        self.env = dict(env or {})  # user name -> value
        self.core_names = {}        # user name -> core variable name (for rebinding)
        self.returned = None

    def loc(self, node):
        if self.parsed is None:
            return None
        return self.parsed.loc(node)


class BoundMethod:
    """`x.name` for an array method (`x.sum`, `x.reshape`), not called yet."""

    def __init__(self, receiver, name):
        self.receiver, self.name = receiver, name


class LocalFunction:
    """A `def` or lambda inside the function being transformed; inlined at each call."""

    def __init__(self, node, frame, defaults):
        self.node, self.frame, self.defaults = node, frame, defaults
        self.name = getattr(node, "name", "lambda")


def flatten_value(value):
    """Struct/atoms -> (flat atom list, TreeDef)."""
    if isinstance(value, Struct):
        leaves, children = [], []
        for item in value.items:
            l, t = flatten_value(item)
            leaves += l
            children.append(t)
        return leaves, TreeDef(value.kind, tuple(children), value.keys)
    if isinstance(value, Static):
        if value.obj is None:
            return [], TreeDef("none")
        if ir.is_literal(value.obj):
            return [Const(value.obj)], TreeDef("leaf")
        raise TypeError(f"cannot return the Python object {value.obj!r} from a transformed function")
    if isinstance(value, Const) and value.value is None:
        return [], TreeDef("none")
    return [value], TreeDef("leaf")


def unflatten_value(tree, atoms):
    it = iter(atoms)

    def build(t):
        if t.kind == "leaf":
            return next(it)
        if t.kind == "none":
            return Const(None)
        if t.kind == "static":
            return Const(t.keys[0])
        return Struct(t.kind, [build(c) for c in t.children], t.keys)
    return build(tree)
