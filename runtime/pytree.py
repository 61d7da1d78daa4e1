"""Pytrees: nested tuples, lists and dicts (keys sorted, as in JAX) whose leaves are arrays/scalars.

`None` is an empty subtree. NamedTuples, dataclass instances and classes registered with
`register_pytree_node(cls, flatten, unflatten)` are nodes (kind 'node', keys (cls, aux)).
Anything else is a leaf.
"""
import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True, eq=True)
class TreeDef:
    """The structure of a pytree: kind in {'leaf', 'none', 'tuple', 'list', 'dict'}."""
    kind: str
    children: tuple = ()
    keys: tuple = ()

    @property
    def num_leaves(self):
        if self.kind == "leaf":
            return 1
        if self.kind == "static":
            return 0
        return sum(c.num_leaves for c in self.children)

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind == "static":
            return f"static({self.keys[0]!r})"
        if self.kind == "node":
            return f"{self.keys[0].__name__}(" + ", ".join(repr(c) for c in self.children) + ")"
        inner = [repr(c) for c in self.children]
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.keys, inner)) + "}"
        if self.kind == "list":
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


LEAF = TreeDef("leaf")


def static_key(v):
    """A value with its type, for keys of code generated for a static value: 2 and 2.0, 1
    and True are equal in Python but generate different code (x / n of an int, a bool array)."""
    if type(v) in (tuple, list):
        return (type(v),) + tuple(static_key(x) for x in v)
    return (type(v), v)


def static_leaf(v):
    """The TreeDef of a static value (keys[0] is the value; the key compares its type too)."""
    return TreeDef("static", (), (v, static_key(v)))


def tree_flatten(tree, is_leaf=None):
    """Return (leaves, treedef). is_leaf(subtree) -> True makes that subtree one leaf (as in
    jax.tree_util; None too when is_leaf says so)."""
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


# ---- custom nodes ---------------------------------------------------------------------------

_NODES = {}     # class -> (flatten(obj) -> (children, aux), unflatten(aux, children) -> obj)


def register_pytree_node(cls, flatten_func, unflatten_func):
    """Make instances of `cls` pytree nodes, as jax.tree_util.register_pytree_node:
    flatten_func(obj) -> (children, aux_data) with hashable aux_data;
    unflatten_func(aux_data, children) -> obj."""
    _NODES[cls] = (flatten_func, unflatten_func)
    return cls


class AppendedList:
    """The structure of a list a jit function built by appending (its length known only when
    it runs) and returned: the compiled code returns one array of its items, which the
    caller gets back as a Python list of them."""


register_pytree_node(AppendedList, lambda obj: ([obj], None),
                     lambda aux, children: list(children[0]))


def node_parts(tree):
    """(cls, children, aux) when `tree` is a node (registered, NamedTuple, dataclass), else None."""
    cls = type(tree)
    rule = _NODES.get(cls)
    if rule is not None:
        children, aux = rule[0](tree)
        return cls, list(children), aux
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):
        return cls, list(tree), None
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        names = tuple(f.name for f in dataclasses.fields(tree))
        return cls, [getattr(tree, n) for n in names], names
    return None


def node_build(cls, aux, children):
    """The node of class `cls` with these children (the inverse of node_parts)."""
    rule = _NODES.get(cls)
    if rule is not None:
        return rule[1](aux, list(children))
    if aux is None:                       # NamedTuple
        return cls(*children)
    obj = object.__new__(cls)             # dataclass: fields set as stored, __init__ not re-run
    for n, v in zip(aux, children):
        object.__setattr__(obj, n, v)
    return obj


def _flatten(tree, leaves, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    if type(tree) in _NODES or (isinstance(tree, tuple) and hasattr(tree, "_fields")) or (
            dataclasses.is_dataclass(tree) and not isinstance(tree, type)):
        cls, children, aux = node_parts(tree)
        return TreeDef("node", tuple(_flatten(c, leaves, is_leaf) for c in children), (cls, aux))
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return TreeDef("tuple", tuple(_flatten(c, leaves, is_leaf) for c in tree))
    if isinstance(tree, list):
        return TreeDef("list", tuple(_flatten(c, leaves, is_leaf) for c in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], leaves, is_leaf) for k in keys), keys)
    if tree is None:
        return TreeDef("none")
    leaves.append(tree)
    return LEAF


def tree_unflatten(treedef, leaves):
    """Inverse of tree_flatten."""
    it = iter(leaves)
    out = _unflatten(treedef, it)
    rest = list(it)
    if rest:
        raise ValueError(f"tree_unflatten: {len(rest)} leaves left over for structure {treedef}")
    return out


def _unflatten(treedef, it):
    if treedef.kind == "leaf":
        try:
            return next(it)
        except StopIteration:
            raise ValueError("tree_unflatten: too few leaves for the structure") from None
    if treedef.kind == "none":
        return None
    if treedef.kind == "static":
        return treedef.keys[0]
    children = [_unflatten(c, it) for c in treedef.children]
    if treedef.kind == "node":
        return node_build(treedef.keys[0], treedef.keys[1], children)
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    if treedef.kind == "list":
        return children
    return tuple(children)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply f to each leaf (and the matching leaves of `rest`, which share tree's structure,
    or have a whole subtree where tree has a leaf, as in jax.tree_util). is_leaf: see
    tree_flatten."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r)
        if r_def != treedef:
            r_leaves = []
            if not _up_to(treedef, r, r_leaves):
                raise ValueError(f"tree_map: structures differ: {treedef} vs {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def _up_to(treedef, tree, out):
    """The subtrees of `tree` at the leaves of `treedef` (a prefix of its structure) into out;
    False where treedef is not a prefix."""
    if treedef.kind == "leaf":
        out.append(tree)
        return True
    if treedef.kind == "none":
        return tree is None
    if treedef.kind == "static":
        return True
    if treedef.kind == "node":
        parts = node_parts(tree)
        if parts is None or parts[0] is not treedef.keys[0] or parts[2] != treedef.keys[1]:
            return False
        children = parts[1]
    elif treedef.kind == "dict":
        if not isinstance(tree, dict) or tuple(sorted(tree)) != treedef.keys:
            return False
        children = [tree[k] for k in treedef.keys]
    else:
        kind = tuple if treedef.kind == "tuple" else list
        if not isinstance(tree, kind) or hasattr(tree, "_fields"):
            return False
        children = list(tree)
    if len(children) != len(treedef.children):
        return False
    return all(_up_to(c, t, out) for c, t in zip(treedef.children, children))


def treedef_children(treedef):
    return list(treedef.children)
