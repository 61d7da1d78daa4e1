"""jacfwd, jacrev and jacobian, the public functions, and what they do when called directly:
one generated jvp per input element (forward) or one generated vjp per output element
(reverse), for pytree arguments and outputs as in JAX. Transformed again (jit, grad, vmap),
they become one generated function built by api/jacobian_composed.py (registered here through
`register_jacobian_core`, so that this module does not import it).

The result has the output's structure outside and the argument's structure inside: for an
output leaf o and an argument leaf l, the block has shape o.shape + l.shape. With a tuple of
argnums, each output leaf holds a tuple (one entry per argnum)."""
import functools

import numpy as np

from transpile.core.tracebacks import api_boundary
from transpile.compile.specialization import refuse_overlap
from transpile_runtime.argument_overlap import overlapping
from transpile.api.autodiff import JVP, _cached, _fname, _signature, vjp
from transpile.errors import TranspileError
from transpile.pytree import tree_flatten, tree_unflatten
from transpile.api.arguments import (bind_call, check_complex, check_real, copy_arrays, has_star,
                                      norm_argnums, write_back_arrays)


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
    """Zero tangents for an argument not differentiated: numbers and arrays get float zeros;
    a Python bool or int, a string or any other object is passed as it is (static)."""
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [np.zeros_like(_float_leaf(l)) if _numeric(l) else l
                              for l in leaves])


def _numeric(leaf):
    if isinstance(leaf, (bool, int, str, bytes)) or leaf is None:
        return False
    return isinstance(leaf, (float, complex, np.ndarray, np.generic)) and \
        np.asarray(leaf).dtype.kind in "biufc"


def _assemble(out_tree, in_trees, blocks, single):
    """blocks[a][o][l] -> the JAX-shaped result."""
    per_out = []
    for o in range(out_tree.num_leaves):
        parts = [tree_unflatten(in_trees[a], blocks[a][o]) for a in range(len(in_trees))]
        per_out.append(parts[0] if single else tuple(parts))
    return tree_unflatten(out_tree, per_out)


def jacobian_forward(call_jvp, args, nums, single):
    """call_jvp(args, tangents) -> output tangent (pytree)."""
    blocks, in_trees, out_tree, zero_out = [], [], None, []
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
        if any(not c for c in cols) and not zero_out:
            # a leaf with no elements has no column: its blocks are empty, of shape
            # out.shape + leaf.shape, read from one call with zero tangents
            t_leaves, out_tree = tree_flatten(call_jvp(args, [_zeros(v) for v in args]))
            zero_out[:] = [np.asarray(t) for t in t_leaves]
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
                    row.append(np.zeros(zero_out[o].shape + x.shape, zero_out[o].dtype))
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


def _n_params(fun):
    sig = _signature(fun)
    return None if has_star(sig) else len(sig.parameters)


def _all_args(fun, args, kwargs):
    """Every parameter's value (defaults applied), positionally."""
    sig = _signature(fun)
    if not kwargs and len(args) == len(sig.parameters) and not has_star(sig):
        return tuple(args)
    return tuple(bind_call(sig, args, kwargs))


def _refuse_shared(t, args, what):
    """f(a, a) where f writes into its arguments: refused, as jit and grad refuse it (each
    column runs on copies, which would hide that the two names are one array)."""
    leaves, trees = t.flatten_args(t.bind(tuple(args), {}))
    if overlapping(leaves) is None:
        return
    spec = t.specialize_for(trees, leaves)
    if spec.writes_args:
        refuse_overlap(f"{what}({t.__name__})", spec.core, leaves)


def jacfwd(fun, argnums=0, holomorphic=False, has_aux=False):
    """Jacobian by forward mode: one generated-jvp call per input element. Complex inputs give
    the complex derivative of a holomorphic function (holomorphic=True, as JAX, also checks
    that the inputs are complex)."""
    single, nums = norm_argnums(argnums, _n_params(fun), _fname(fun))

    def jac(*args, **kwargs):
        args = _all_args(fun, args, kwargs)
        if holomorphic:
            check_complex(args, nums, "jacfwd")
        else:
            check_real([args[a] for a in nums], "jacfwd")
        jvp_t = _cached(("jvp", nums), fun, lambda: JVP(fun, argnums=nums))
        _refuse_shared(jvp_t, args, "jacfwd")
        last, aux = [], []

        def column(a, t):
            # every column starts from the inputs as given (a function may write into them)
            copies = copy_arrays(a)
            last[:] = [copies]
            out, tangent = jvp_t.call_with(tuple(copies), tuple(t))
            if not has_aux:
                return tangent
            _aux_pair(fun, out)
            aux[:] = [out[1]]
            return tangent[0]
        result = jacobian_forward(column, args, nums, single)
        if last:     # the caller's arrays as one call of fun leaves them
            write_back_arrays(args, last[0])
        if has_aux:
            if not aux:      # an argument with no elements: no column ran
                out = jvp_t.call_with(tuple(copy_arrays(args)), tuple(_zeros(v) for v in args))
                aux[:] = [_aux_pair(fun, out[0])[1]]
            return result, aux[0]
        return result
    jac = api_boundary(jac)      # tracebacks without transpile's frames (core/tracebacks.py)
    functools.update_wrapper(jac, fun, updated=())
    jac.__transpile_core__ = _not_transformable("jacfwd", fun, argnums, has_aux)
    jac.accepts_ranks = True     # jit/vmap pass the argument ranks
    return jac


_JACOBIAN_CORE = {}   # jacobian_transforms' core builders, registered from above (no cycle)


def register_jacobian_core(fn):
    _JACOBIAN_CORE[fn.__name__] = fn
    return fn


def _aux_pair(fun, out):
    if not isinstance(out, tuple) or len(out) != 2:
        raise TranspileError(f"has_aux=True requires {_fname(fun)} to return a pair "
                             "(output, aux)", construct=f"return ... from {_fname(fun)}")
    return out


def _not_transformable(kind, fun, argnums=0, has_aux=False):
    mode = "fwd" if kind == "jacfwd" else "rev"
    if has_aux and isinstance(argnums, int):
        def aux_core(in_trees):      # (Jacobian, aux) as one generated function
            return _JACOBIAN_CORE["jacobian_aux_core"](fun, argnums, mode, in_trees)
        return aux_core
    if has_aux:
        def refuse_aux(in_trees):
            raise TranspileError(
                f"{kind}({_fname(fun)}, has_aux=True) cannot be transformed again (jit, grad, "
                "vmap) yet", construct=f"{kind}({_fname(fun)}, has_aux=True)",
                hint=f"return the aux from a separate function, or apply {kind} outside")
        return refuse_aux
    if isinstance(argnums, int):
        def core(in_trees):          # one generated function: composes with jit/grad/vmap
            return _JACOBIAN_CORE["jacobian_core"](fun, argnums, mode, in_trees)
        return core
    if isinstance(argnums, (tuple, list)) and all(isinstance(a, int) for a in argnums):
        def cores(in_trees):
            return _JACOBIAN_CORE["jacobians_core"](fun, tuple(argnums), mode, in_trees)
        return cores

    def refuse(in_trees):
        raise TranspileError(
            f"{kind}({_fname(fun)}) cannot be transformed again (jit, grad, vmap): it calls the "
            "generated jvp/vjp once per basis vector from Python",
            construct=f"{kind}({_fname(fun)})",
            hint=f"apply jit inside instead, e.g. {kind}(jit({_fname(fun)})), or use grad/jvp")
    return refuse


def jacrev(fun, argnums=0, holomorphic=False, has_aux=False):
    """Jacobian by reverse mode: one generated-vjp call per output element (holomorphic: as
    jacfwd). has_aux=True: fun returns (output, aux); the result is (jacobian, aux)."""
    single, nums = norm_argnums(argnums, _n_params(fun), _fname(fun))

    def jac(*args, **kwargs):
        args = _all_args(fun, args, kwargs)
        if holomorphic:
            check_complex(args, nums, "jacrev")
        else:
            check_real([args[a] for a in nums], "jacrev")

        def vjp_nums(f, *a):        # only the arguments asked for are differentiated
            out, pullback = vjp(f, *a, _argnums=nums)
            if not holomorphic:
                check_real(out, "jacrev", "outputs")
            return out, pullback
        if not has_aux:
            return jacobian_reverse(vjp_nums, fun, args, nums, single)
        aux = []

        def vjp_keeping_aux(f, *a):
            out, pullback, extra = vjp(f, *a, has_aux=True, _argnums=nums)
            aux.append(extra)
            return out, pullback
        return jacobian_reverse(vjp_keeping_aux, fun, args, nums, single), aux[0]
    jac = api_boundary(jac)      # tracebacks without transpile's frames (core/tracebacks.py)
    functools.update_wrapper(jac, fun, updated=())
    jac.__transpile_core__ = _not_transformable("jacrev", fun, argnums, has_aux)
    jac.accepts_ranks = True     # jit/vmap pass the argument ranks
    return jac


jacobian = jacrev


for _f in (jacfwd, jacrev):   # transform constructors the normalizer runs (grad: api/autodiff.py)
    _f.__transpile_static__ = True
