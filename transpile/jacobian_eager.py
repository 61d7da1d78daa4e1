"""jacfwd/jacrev called directly: one generated jvp per input element (forward) or one
generated vjp per output element (reverse), for pytree arguments and outputs as in JAX.

The result has the output's structure outside and the argument's structure inside: for an
output leaf o and an argument leaf l, the block has shape o.shape + l.shape. With a tuple of
argnums, each output leaf holds a tuple (one entry per argnum)."""
import numpy as np

from transpile.pytree import tree_flatten, tree_unflatten


def _float_leaf(leaf):
    x = np.asarray(leaf)
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(np.float64)
    return x


def _basis(x):
    n = x.size
    eye = np.eye(n, dtype=x.dtype)
    return [eye[i].reshape(x.shape) for i in range(n)]


def _zeros(tree):
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [np.zeros_like(_float_leaf(l)) if not isinstance(l, (bool, int))
                              else l for l in leaves])


def _assemble(out_tree, in_trees, blocks, single):
    """blocks[a][o][l] -> the JAX-shaped result."""
    per_out = []
    for o in range(out_tree.num_leaves):
        parts = [tree_unflatten(in_trees[a], blocks[a][o]) for a in range(len(in_trees))]
        per_out.append(parts[0] if single else tuple(parts))
    return tree_unflatten(out_tree, per_out)


def jacobian_forward(call_jvp, args, nums, single):
    """call_jvp(args, tangents) -> output tangent (pytree)."""
    blocks, in_trees, out_tree = [], [], None
    for a in nums:
        leaves, in_tree = tree_flatten(args[a])
        in_trees.append(in_tree)
        cols = []          # cols[l] = list of output-tangent leaf lists, one per basis vector
        for k, leaf in enumerate(leaves):
            x = _float_leaf(leaf)
            cols.append([])
            for e in _basis(x):
                tleaves = [e if j == k else np.zeros_like(_float_leaf(l))
                           for j, l in enumerate(leaves)]
                tangents = [_zeros(v) if i != a else tree_unflatten(in_tree, tleaves)
                            for i, v in enumerate(args)]
                tout = call_jvp(args, tangents)
                t_leaves, out_tree = tree_flatten(tout)
                cols[k].append([np.asarray(t) for t in t_leaves])
        if out_tree is None:        # an argument with no elements
            _, out_tree = tree_flatten(call_jvp(args, [_zeros(v) for v in args]))
        per_o = []
        for o in range(out_tree.num_leaves):
            row = []
            for k, leaf in enumerate(leaves):
                x = np.asarray(leaf)
                cs = [c[o] for c in cols[k]]
                if cs:
                    blk = np.stack(cs, axis=-1)
                    row.append(blk.reshape(cs[0].shape + x.shape))
                else:
                    row.append(np.zeros(x.shape))
            per_o.append(row)
        blocks.append(per_o)
    return _assemble(out_tree, in_trees, blocks, single)


def jacobian_reverse(vjp, fun, args, nums, single):
    """vjp(fun, *args) -> (out, pullback)."""
    out, pullback = vjp(fun, *args)
    out_leaves, out_tree = tree_flatten(out)
    out_arrays = [np.asarray(o) for o in out_leaves]
    in_trees, in_leaves = [], []
    for a in nums:
        leaves, t = tree_flatten(args[a])
        in_trees.append(t)
        in_leaves.append(leaves)
    blocks = [[[] for _ in out_arrays] for _ in nums]
    for o, y in enumerate(out_arrays):
        rows = [[[] for _ in in_leaves[i]] for i in range(len(nums))]
        for e in _basis(_float_leaf(y)):
            ct = tree_unflatten(out_tree, [e if j == o else np.zeros_like(_float_leaf(z))
                                           for j, z in enumerate(out_arrays)])
            grads = pullback(ct)
            for i, a in enumerate(nums):
                g_leaves, _ = tree_flatten(grads[a])
                for k, g in enumerate(g_leaves):
                    rows[i][k].append(np.asarray(g))
        for i in range(len(nums)):
            for k, leaf in enumerate(in_leaves[i]):
                x = np.asarray(leaf)
                rs = rows[i][k]
                blk = np.stack(rs, axis=0) if rs else np.zeros((0,) + x.shape)
                blocks[i][o].append(blk.reshape(y.shape + x.shape))
    return _assemble(out_tree, in_trees, blocks, single)
