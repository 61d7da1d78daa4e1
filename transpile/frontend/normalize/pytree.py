"""Pytrees inside transformed code, expanded while the code is generated.

The structure of every pytree is known when code is generated, so `tree_map(f, params, grads)`
becomes one call of `f` per leaf, `tree_leaves(params)` a list of the leaf variables,
`tree_flatten`/`tree_unflatten`/`tree_structure` move between the two with the TreeDef as a
Python object. NamedTuples, dataclasses and registered classes are `Struct('node', children,
(cls, aux))`: `p.w` rebuilds the object around the generated-code values and reads the field,
and `Params(w, b)` written in the function builds one.
"""
import dataclasses

from transpile_runtime import pytree as rt_pytree
from transpile_runtime.broadcasting import stop_gradient as rt_stop_gradient
from transpile.core.ir import Const, Var
from transpile.frontend.normalize.values import Static, Struct, flatten_value, unflatten_value



def _flat(norm, value, node):
    try:
        return flatten_value(value)
    except TypeError as e:
        raise norm.error(node, str(e)) from None


def call_tree_util(norm, obj, args, kwargs, node, base):
    """tree_map / tree_leaves / tree_flatten / tree_unflatten / tree_structure, and
    stop_gradient of a pytree (leaf by leaf, as jax.lax.stop_gradient); None otherwise."""
    if obj is rt_stop_gradient and len(args) == 1 and not kwargs and \
            isinstance(args[0], Struct):
        leaves, tree = _flat(norm, args[0], node)
        return unflatten_value(tree, [norm.call(Static(obj), [leaf], {}, node, base)
                                      for leaf in leaves])
    name = _TREE_UTILS.get(id(obj))
    if name is None or _TREE_UTIL_OBJS[name] is not obj:
        return None
    if "is_leaf" in kwargs:
        raise norm.error(node, f"{name}(..., is_leaf=...) inside a transformed function is not "
                         "supported (the structure is fixed when the code is generated): call "
                         f"{name} with is_leaf outside the transform, or without it here")
    if name == "tree_leaves":
        leaves, _ = _flat(norm, _one(norm, args, kwargs, "tree", node), node)
        return Struct("list", leaves)
    if name == "tree_structure":
        _, tree = _flat(norm, _one(norm, args, kwargs, "tree", node), node)
        return Static(tree)
    if name == "tree_flatten":
        leaves, tree = _flat(norm, _one(norm, args, kwargs, "tree", node), node)
        return Struct("tuple", [Struct("list", leaves), Static(tree)])
    if name == "tree_unflatten":
        if len(args) != 2 or kwargs:
            raise norm.error(node, "tree_unflatten(treedef, leaves) takes two arguments")
        tree = norm.static_value(args[0], node, "the treedef of tree_unflatten")
        leaves = args[1]
        if not isinstance(leaves, Struct):
            raise norm.error(node, "tree_unflatten needs a list of leaves of known length")
        if len(leaves.items) != tree.num_leaves:
            raise norm.error(node, f"tree_unflatten: {len(leaves.items)} leaves for a structure "
                             f"with {tree.num_leaves}")
        return unflatten_value(tree, leaves.items)
    # tree_map(f, tree, *rest)
    if kwargs or len(args) < 2:
        raise norm.error(node, "tree_map(f, tree, *rest) takes a function and one or more trees")
    f, first, rest = args[0], args[1], args[2:]
    leaves, tree = _flat(norm, first, node)
    others = []
    for r in rest:
        r_leaves, r_tree = _flat(norm, r, node)
        if r_tree != tree:
            raise norm.error(node, f"tree_map: structures differ: {tree} vs {r_tree}")
        others.append(r_leaves)
    out = [norm.call(f, list(xs), {}, node, base) for xs in zip(leaves, *others)]
    return unflatten_value(tree, out)


def _one(norm, args, kwargs, what, node):
    if len(args) == 1 and not kwargs:
        return args[0]
    if not args and list(kwargs) == [what]:
        return kwargs[what]
    raise norm.error(node, "expected one pytree argument")


_TREE_UTIL_OBJS = {n: getattr(rt_pytree, n) for n in
                   ("tree_map", "tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure")}
_TREE_UTILS = {id(o): n for n, o in _TREE_UTIL_OBJS.items()}


def is_node_class(cls):
    return isinstance(cls, type) and (cls in rt_pytree._NODES or (
        issubclass(cls, tuple) and hasattr(cls, "_fields")) or dataclasses.is_dataclass(cls))


class NodeMethod:
    """`p._replace` of a NamedTuple built around the function's values: called while the code
    is generated, it gives a new node (its source, with **kwargs, is not inlined)."""
    __transpile_node_method__ = True

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def call(self, norm, args, kwargs, node):
        try:
            return getattr(self.obj, self.name)(*args, **kwargs)
        except Exception as e:
            raise norm.error(node, f"{type(self.obj).__name__}.{self.name}: {e}") from None


def construct_node(norm, cls, args, kwargs, node):
    """`Params(w, b)` inside transformed code -> Struct('node', ...); None for other classes."""
    if isinstance(cls, NodeMethod):     # p._replace(b=...): a new node around the values
        obj = cls.call(norm, args, kwargs, node)
        cls_, children, aux = rt_pytree.node_parts(obj)
        return Struct("node", children, (cls_, aux))
    if not is_node_class(cls):
        return None
    try:
        obj = cls(*args, **kwargs)
    except Exception as e:
        raise norm.error(node, f"cannot build {cls.__name__} from values computed in the "
                         f"transformed function: {e}") from None
    cls_, children, aux = rt_pytree.node_parts(obj)
    return Struct("node", children, (cls_, aux))


def node_attribute(norm, struct, attr, node):
    """`p.attr` for a Struct('node', ...): rebuild the object around the values, read attr."""
    cls, aux = struct.keys
    try:
        obj = rt_pytree.node_build(cls, aux, struct.items)
    except Exception as e:
        raise norm.error(node, f"cannot rebuild {cls.__name__} to read .{attr}: {e}") from None
    if attr == "_replace" and issubclass(cls, tuple):
        return Static(NodeMethod(obj, attr))
    try:
        value = getattr(obj, attr)
    except AttributeError:
        raise norm.error(node, f"{cls.__name__} has no attribute {attr!r}") from None
    if isinstance(value, (Var, Const, Struct, Static)):
        return value
    return norm.classify(value, None, attr) if not callable(value) else Static(value)
