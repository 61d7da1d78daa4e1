"""Values the normalizer tracks while generating code: `Struct` (a tuple/list/dict of known
structure), `Static` (a Python object known at generation time), `Frame` (one function's
scope), `BoundMethod` (`x.sum` before it is called) and `LocalFunction` (a nested def or
lambda), and the conversion of a value to and from a flat list of atoms plus a TreeDef.
Below the normalizer's modules so that they and frontend/normalize/aliasing.py can use them without importing
the normalizer back."""
from transpile.core import ir
from transpile.core.ir import Const
from transpile.pytree import AppendedList, TreeDef, static_leaf


# the methods of a Python list that change it in place
LIST_METHODS = ("append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear")


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


class Placeholder:
    """The value of a name bound before a loop only so that it exists, and read only where a
    later statement set it: the result of a `return` from inside a loop
    (frontend/normalize/returns.py), read after the loop under the flag the return set. Where
    it meets a value (the paths of an if, a loop's entry and the end of its body), it becomes
    zeros typed like that value (frontend/normalize/branches.py `typed_like`), so every path
    assigns every variable and no type changes."""

    def __repr__(self):
        return "Placeholder"


# the AST constant that reads as a new Placeholder (frontend/normalize/returns.py writes it)
PLACEHOLDER_MARK = Placeholder()


class RunList:
    """A list of numbers (or of arrays of one shape: `ndim` axes each) whose length is known
    only when the code runs: its items are items[:count] of two variables of the function,
    named by `items` and `count` in `frame`'s environment (transpile/frontend/normalize/
    runlists.py). The object itself never changes: every name holding the list holds it, and
    sees what is appended through any of them."""

    def __init__(self, user, items, count, dtype, frame, ndim=0):
        self.user, self.items, self.count, self.dtype, self.frame = \
            user, items, count, dtype, frame
        self.ndim = ndim        # axes of each item (0: numbers)
        self.row = None         # the items' shape where known when the code is generated
        self.presized = False   # appends need no growth (inside the loop that sized it)
        self.capacity = None    # the buffer's length where known when the code is generated
        self.bound = None       # an upper bound of the count known then (None: not known)

    def __repr__(self):
        return f"RunList({self.user}: {self.items}[:{self.count}])"


class Raised:
    """Frame.returned after an unconditional `raise`: the path ends there without a value (an
    if joins it with what its other path does)."""

    def __repr__(self):
        return "Raised"


RAISED = Raised()


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


class DictMethod:
    """`d.items` / `.values` / `.keys` / `.get` / `.copy` of a dict of known keys, not called
    yet."""

    def __init__(self, receiver, name):
        self.receiver, self.name = receiver, name

    def call(self, args, kwargs):
        d = self.receiver
        if kwargs:
            raise TypeError(f"dict.{self.name}() takes no keyword arguments")
        if self.name == "items":
            return Struct("list", [Struct("tuple", [Const(k), v]) for k, v in zip(d.keys, d.items)])
        if self.name == "values":
            return Struct("list", list(d.items))
        if self.name == "keys":
            return Struct("list", [Const(k) for k in d.keys])
        if self.name == "copy":
            return Struct("dict", list(d.items), d.keys)
        # get(key[, default]): the key must be known when the code is generated
        if not 1 <= len(args) <= 2 or not isinstance(args[0], Const):
            raise TypeError("dict.get(key[, default]) needs a key known when the code is "
                            "generated")
        key = args[0].value
        if key in d.keys:
            return d.items[d.keys.index(key)]
        return args[1] if len(args) > 1 else Const(None)


DICT_METHODS = ("items", "values", "keys", "get", "copy")


def iteration_items(value):
    """What `for v in value` visits: a dict's keys, a tuple's or list's items."""
    if value.kind == "dict":
        return [Const(k) for k in value.keys]
    return list(value.items)


class LocalFunction:
    """A `def` or lambda inside the function being transformed; inlined at each call."""

    def __init__(self, node, frame, defaults):
        self.node, self.frame, self.defaults = node, frame, defaults
        self.name = getattr(node, "name", "lambda")


def flatten_value(value, statics=False, lists=False):
    """Struct/atoms -> (flat atom list, TreeDef). statics: a Python object (a function) is a
    static leaf of the TreeDef (for a callee that takes static arguments: custom rules);
    lists: a list of run-time length (RunList) is a node that gives the caller a Python list
    of its items (jit's outputs)."""
    if lists and isinstance(value, RunList):
        return [value], TreeDef("node", (TreeDef("leaf"),), (AppendedList, None))
    if isinstance(value, Struct):
        leaves, children = [], []
        for item in value.items:
            l, t = flatten_value(item, statics, lists)
            leaves += l
            children.append(t)
        return leaves, TreeDef(value.kind, tuple(children), value.keys)
    if isinstance(value, Static):
        if value.obj is None:
            return [], TreeDef("none")
        if ir.is_literal(value.obj):
            return [Const(value.obj)], TreeDef("leaf")
        if statics:
            try:
                hash(value.obj)
                return [], static_leaf(value.obj)
            except TypeError:
                pass
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
        if t.kind == "static":      # (a function given as an argument: the function itself)
            return Static(t.keys[0]) if callable(t.keys[0]) else Const(t.keys[0])
        return Struct(t.kind, [build(c) for c in t.children], t.keys)
    return build(tree)
