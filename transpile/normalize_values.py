"""Values the normalizer tracks while generating code: `Struct` (a tuple/list/dict of known
structure), `Static` (a Python object known at generation time) and `Frame` (one function's
scope). Below normalize.py so that normalize_control.py and aliasing.py can use them without
importing the normalizer back."""


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
