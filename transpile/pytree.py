"""Pytrees (public API): the implementation lives in runtime/pytree.py, shared with the code
that generated functions and collectives run."""
from transpile_runtime.pytree import (LEAF, TreeDef, tree_flatten, tree_leaves, tree_map,  # noqa: F401
                            tree_structure, tree_unflatten, treedef_children,
                                      register_pytree_node, node_build, node_parts,
                                      static_key, static_leaf, AppendedList)
