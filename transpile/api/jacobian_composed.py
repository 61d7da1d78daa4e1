"""Jacobians as one generated function, so that they compose with jit, grad, vmap and with
each other (jacfwd(jacrev(f)), vmap(jacrev(f)), grad of a Jacobian, hessian).

jacfwd(f)(x): vmap of the jvp over the basis vectors e_i of x (columns J e_i, moved last);
jacrev(f)(x): vmap of the vjp over the basis vectors of f's output (rows e_i^T J);
hessian(f) = jacfwd(grad(f)). With the ranks that jit/vmap know, the basis and the final
reshape are plain np.eye/np.moveaxis/np.reshape and vmap picks batched rules, so
`jit(hessian(f))` compiles to one function with no Python loop. Called directly, jacfwd/jacrev
loop over basis vectors in Python (transpile/api/jacobian.py), for pytrees too.
"""
import inspect

from transpile.core.tracebacks import api_boundary
from transpile.api.autodiff import Grad, Transform, _fname, core_of
from transpile.api.jacobian import jacfwd, jacrev, register_jacobian_core
from transpile.errors import TranspileError
from transpile.core.ir import Const, IndexArg, TupleArg, Var, bound_names
from transpile.frontend.normalize.normalizer import Builder, Namer
from transpile.primitives import by_name
from transpile.pytree import LEAF, TreeDef
from transpile.api.arguments import check_float, leaf_ranges
from transpile.ad.modes import forward_core, reverse_core
from transpile.ad.reverse import make_core
from transpile.api.vmap import Ranked, Vmap
from transpile.core.rename import rename_body
from transpile.frontend.parse import read_binding
from transpile.batching.vectorize import BatchSweep
import numpy as np


def _without_defaults(sig):
    """The parameters of a function whose every argument the composed code passes (a
    required parameter appended after them must follow no default: jit(hessian(f)) of
    f(w, lr=0.5))."""
    ps = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps):
        return ps
    return [p.replace(default=inspect.Parameter.empty) for p in ps]


class TangentMap(Transform):
    """f(primals..., tangent) -> the output tangent of f along `tangent` (for argument argnum)."""

    suffix = "__tangent"

    def __init__(self, fun, argnum=0):
        super().__init__(fun)
        self.argnum = argnum
        params = _without_defaults(self.signature)
        extra = inspect.Parameter("tangent", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.signature = inspect.Signature(params + [extra])
        self._params = params + [extra]
        self._defaults_src = None       # (every argument is passed: no defaults)

    def __transpile_core__(self, in_trees):
        primal_trees = tuple(in_trees[:-1])
        inner = _inner_core(self, primal_trees)
        wrt = list(leaf_ranges(primal_trees)[self.argnum])
        body, tparams, outs, touts = forward_core(inner, wrt)
        n_user = len(inner.params) - len(inner.free)
        params = inner.params[:n_user] + tparams + inner.params[n_user:]
        core = make_core(inner, self.suffix, body, params, touts, inner.out_tree)
        core.deps = getattr(inner, "deps", [])
        return core


class Hessian(Transform):
    """hessian(f, argnums=int) for one array argument; composes with jit as one function."""

    suffix = "__hessian"
    accepts_ranks = True

    def __init__(self, fun, argnum=0):
        super().__init__(fun)
        self.argnum = argnum
        self._eager = jacfwd(Grad(fun, argnum), argnum)
        self._eager_nonscalar = None
        self._scalar = {}

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        check_float(values, [self.argnum], "hessian")   # (not grad's message about outputs)
        leaves, trees = self.flatten_args(values)
        ranks = tuple(int(np.ndim(leaf)) for leaf in leaves)
        if self.scalar_output(trees, ranks):
            return self._eager(*args, **kwargs)
        if self._eager_nonscalar is None:
            self._eager_nonscalar = jacfwd(jacrev(self.fun, self.argnum), self.argnum)
        return self._eager_nonscalar(*args, **kwargs)

    def scalar_output(self, trees, ranks):
        """Does fun return a scalar for arguments of these ranks? (True when unknown: the
        gradient then says what it got.) JAX's hessian is jacfwd(jacrev(f)), which also
        takes a function with an array output (a hessian of a hessian); forward over the
        gradient is the same for a scalar output, with one reverse sweep."""
        if ranks is None:     # a hessian's output is an array but for a 0-d argument
            return not hasattr(self.fun, "output_rank")
        key = (trees, tuple(ranks))
        if key not in self._scalar:
            self._scalar[key] = function_output_rank(self.fun, trees, ranks) in (0, None)
        return self._scalar[key]

    def output_rank(self, trees, ranks):
        """The rank of the Hessian: fun's output rank + twice the argument's (None: unknown)."""
        a = self.argnum
        if trees[a] != LEAF:
            return None
        inner = function_output_rank(self.fun, trees, ranks)
        return None if inner is None else inner + 2 * ranks[leaf_ranges(trees)[a][0]]

    def __transpile_core__(self, in_trees, ranks=None):
        if isinstance(in_trees, Ranked):
            in_trees, ranks, _ = in_trees
        a = self.argnum
        if not self.scalar_output(in_trees, ranks):
            rk = None if ranks is None else Ranked((in_trees, tuple(ranks),
                                                    tuple(True for _ in in_trees)))
            core = jacobian_core(jacrev(self.fun, a), a, "fwd", rk or in_trees)
            core.name = core.name.split("__")[0] + "__hessian"
            return core
        a_rank = None if ranks is None else ranks[leaf_ranges(in_trees)[a][0]] \
            if in_trees[a] == LEAF else None
        if in_trees[a] != LEAF or a_rank != 1:
            # a pytree, any other rank (or unknown): the Jacobian of the gradient as one
            # function
            rk = None if ranks is None else Ranked((in_trees, tuple(ranks),
                                                    tuple(True for _ in in_trees)))
            core = jacobian_core(Grad(self.fun, a), a, "fwd", rk or in_trees)
            core.name = core.name.replace("__grad__jacfwd", "__hessian")
            return core
        if in_trees[a] != LEAF or a_rank != 1:
            raise TranspileError(f"hessian({_fname(self.fun)}) as one generated function needs "
                                 "a 1-D array argument with its rank known (under jit)",
                                 construct=f"jit(hessian({_fname(self.fun)}))",
                                 hint="call hessian eagerly, or differentiate a 1-D vector")
        n_args = len(in_trees)
        hvp = TangentMap(Grad(self.fun, a), a)
        in_axes = tuple([None] * n_args + [0])
        vm = Vmap(hvp, in_axes=in_axes)
        vm_trees = tuple(in_trees) + (LEAF,)
        if ranks is not None:
            rank_x = ranks[leaf_ranges(in_trees)[a][0]]
            vm_core = vm.__transpile_core__(Ranked((vm_trees, tuple(ranks) + (rank_x + 1,),
                                                    tuple(True for _ in vm_trees))))
        else:
            vm_core = vm.__transpile_core__(vm_trees)
        # The user's argument leaves, the basis, then free variables.
        n_user = len(vm_core.params) - len(vm_core.free)
        user = vm_core.params[:n_user - 1]
        namer = Namer(set(vm_core.params) | {"np", "rt"})
        b = Builder(namer)
        x = Var(user[leaf_ranges(in_trees)[a][0]])
        n = b.emit(by_name("size"), {"x": x}, base="n")
        dtype = b.emit(by_name("attr_dtype"), {"x": x}, base="dtype")
        basis = b.emit(by_name("eye"), {"N": n, "dtype": dtype}, base="basis")   # row i = e_i
        mapping = {p: Var(p) for p in vm_core.params}
        mapping[vm_core.params[n_user - 1]] = basis
        b.body += rename_body(vm_core.body, mapping, namer, vm_core.outs)
        out = vm_core.outs[0]
        rows = mapping.get(out.name, out) if isinstance(out, Var) else out
        # rows[i] = H e_i; H is the stack of rows moved to the end: H[..., i]
        hess = b.emit(by_name("moveaxis"), {"x": rows, "source": Const(0),
                                            "destination": Const(-1)}, base="hessian")
        free_params = [p for p, _, _ in vm_core.free]
        core = make_core(vm_core, "", b.body, user + free_params, [hess], LEAF)
        core.name = vm_core.name.split("__")[0] + "__hessian"
        core.free = vm_core.free
        core.deps = getattr(vm_core, "deps", [])
        return core


def function_output_rank(fun, trees, ranks):
    """The rank of fun's single array output for arguments of these ranks (None: unknown)."""
    if hasattr(fun, "output_rank"):
        return fun.output_rank(trees, ranks)
    try:
        if getattr(fun, "accepts_ranks", False):
            core = fun.__transpile_core__(Ranked((trees, tuple(ranks), tuple(
                True for _ in trees))))
        else:
            core = core_of(fun, trees)
    except TranspileError:
        return None
    return output_rank(core, ranks) if core.out_tree == LEAF else None


class CotangentMap(Transform):
    """f(primals..., cotangent) -> the cotangent of argument `argnum` (one vjp)."""

    suffix = "__cotangent"

    def __init__(self, fun, argnum=0):
        super().__init__(fun)
        self.argnum = argnum
        params = _without_defaults(self.signature)
        extra = inspect.Parameter("cotangent", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.signature = inspect.Signature(params + [extra])
        self._params = params + [extra]
        self._defaults_src = None       # (every argument is passed: no defaults)

    def __transpile_core__(self, in_trees):
        primal_trees = tuple(in_trees[:-1])
        inner = _inner_core(self, primal_trees)
        wrt = list(leaf_ranges(primal_trees)[self.argnum])
        body, ctparams, grads, _ = reverse_core(inner, wrt, seed="cotangent")
        n_user = len(inner.params) - len(inner.free)
        params = inner.params[:n_user] + ctparams + inner.params[n_user:]
        core = make_core(inner, self.suffix, body, params, grads, LEAF)
        core.deps = getattr(inner, "deps", [])
        return core


def _inner_core(linear_map, primal_trees):
    """The core of the function a tangent/cotangent map differentiates, with the primal ranks
    when they are known and the function can use them (a Jacobian inside a Jacobian)."""
    ranks = getattr(linear_map, "primal_ranks", None)
    fun = linear_map.fun
    if ranks is not None and getattr(fun, "accepts_ranks", False):
        return fun.__transpile_core__(Ranked((primal_trees, tuple(ranks),
                                              tuple(True for _ in primal_trees))))
    return core_of(fun, primal_trees)


@register_jacobian_core
def jacobian_core(fun, argnum, mode, in_trees):
    """jacfwd/jacrev(fun, argnum) as one core function, so that it composes with jit, grad,
    vmap and with itself: a vmap of the jvp (columns J e_i) or of the vjp (rows e_i^T J) over
    the basis vectors of the argument (jacfwd) or of the output (jacrev)."""
    ranks = None
    if isinstance(in_trees, Ranked):
        in_trees, ranks, _ = in_trees
    kind = "jacfwd" if mode == "fwd" else "jacrev"
    what = f"{kind}({_fname(fun)})"
    plain = core_of(fun, tuple(in_trees))
    if (in_trees[argnum] != LEAF or plain.out_tree != LEAF) and \
            _pytree_parts(in_trees[argnum]) and _pytree_parts(plain.out_tree) and \
            len(plain.outs) == plain.out_tree.num_leaves:
        return _pytree_jacobian(fun, argnum, mode, tuple(in_trees), ranks, plain, kind)
    if in_trees[argnum] != LEAF:
        raise TranspileError(f"{what} inside another transform needs its argument {argnum} to be "
                             "one array (it is a pytree here)", construct=what,
                             hint=f"call {kind} outside the other transform, or pass an array")
    if plain.out_tree != LEAF:
        f = fun
        while isinstance(f, Transform):
            f = f.fun
        code = getattr(f, "__code__", None)
        raise TranspileError(
            f"{what} inside another transform (vmap, jit, grad) needs a function with one "
            f"array output; {_fname(fun)} returns a {plain.out_tree.kind} of "
            f"{plain.out_tree.num_leaves} arrays", construct=what,
            filename=code.co_filename if code else None,
            lineno=code.co_firstlineno if code else None,
            hint="take the Jacobian of each output on its own (jacrev(lambda x: f(x)[0]), "
                 "...), or call it outside the other transform")
    n_args = len(in_trees)
    lin = TangentMap(fun, argnum) if mode == "fwd" else CotangentMap(fun, argnum)
    lin.primal_ranks = ranks
    vm = Vmap(lin, in_axes=tuple([None] * n_args + [0]))
    vm_trees = tuple(in_trees) + (LEAF,)
    basis_rank = None
    if ranks is not None:
        basis_rank = ranks[leaf_ranges(in_trees)[argnum][0]] if mode == "fwd" else \
            output_rank(core_of(fun, tuple(in_trees)), ranks)
    if basis_rank is not None:
        vm_core = vm.__transpile_core__(Ranked((vm_trees, tuple(ranks) + (basis_rank + 1,),
                                                tuple(True for _ in vm_trees))))
    else:
        vm_core = vm.__transpile_core__(vm_trees)
    if len(vm_core.outs) != 1:
        raise TranspileError(f"{what} inside another transform needs a function with one array "
                             "output", construct=what)
    n_user = len(vm_core.params) - len(vm_core.free)
    user = vm_core.params[:n_user - 1]
    free_params = [p for p, _, _ in vm_core.free]
    names = set(vm_core.params) | set(bound_names(vm_core.body)) | {"np", "rt"}
    plain = None
    if mode == "rev":
        plain = core_of(fun, tuple(in_trees))
        names |= set(plain.params) | set(bound_names(plain.body))
    namer = Namer(names)
    b = Builder(namer)
    x = Var(user[leaf_ranges(in_trees)[argnum][0]])
    if mode == "fwd":
        basis = _basis(b, x, basis_rank)
    else:
        if len(plain.outs) != 1 or plain.out_tree != LEAF:
            raise TranspileError(f"{what} inside another transform needs a function with one "
                                 "array output", construct=what)
        pmap = {p: Var(q) for p, q in zip(plain.params[:len(user)], user)}
        by_where = {w: p for p, w, _ in vm_core.free}
        for p, w, _ in plain.free:
            if w not in by_where:
                raise TranspileError(f"{what}: internal mismatch of free variables", construct=what)
            pmap[p] = Var(by_where[w])
        b.body += rename_body(plain.body, pmap, namer, plain.outs)
        out = plain.outs[0]
        out = pmap.get(out.name, out) if isinstance(out, Var) else out
        basis = _basis(b, out, basis_rank)
    mapping = {p: Var(p) for p in vm_core.params}
    mapping[vm_core.params[n_user - 1]] = basis
    b.body += rename_body(vm_core.body, mapping, namer, vm_core.outs)
    res = vm_core.outs[0]
    rows = mapping.get(res.name, res) if isinstance(res, Var) else res
    row_rank = (getattr(vm_core, "out_ranks", None) or [None])[0]
    if basis_rank == 0:          # one basis vector: the scalar 1
        jac = b.emit(by_name("getitem"), {"x": rows, "index": IndexArg((Const(0),))},
                     base="jacobian")
    elif basis_rank == 1 and mode == "fwd":          # columns J e_i: move i last
        jac = b.emit(by_name("moveaxis"), {"x": rows, "source": Const(0),
                                           "destination": Const(-1)}, base="jacobian")
    elif basis_rank == 1:                            # rows e_i^T J are J already
        jac = rows
    elif basis_rank is not None and row_rank is not None:
        # known ranks: plain NumPy (np.moveaxis, np.reshape to the dims of both shapes)
        if mode == "fwd":          # rows: (n,) + out  ->  out + x.shape
            moved = b.emit(by_name("moveaxis"), {"x": rows, "source": Const(0),
                                                 "destination": Const(-1)}, base="columns")
            dims = _dims(b, rows, row_rank, 1) + _dims(b, x, basis_rank, 0)
        else:                      # rows: (m,) + x.shape  ->  out.shape + x.shape
            moved = rows
            dims = _dims(b, out, basis_rank, 0) + _dims(b, rows, row_rank, 1)
        jac = b.emit(by_name("reshape"), {"x": moved, "shape": TupleArg(tuple(dims))},
                     base="jacobian")
    elif mode == "fwd":
        jac = b.emit(by_name("jac_columns"), {"cols": rows, "x": x}, base="jacobian")
    else:
        jac = b.emit(by_name("jac_rows"), {"rows": rows, "out": out}, base="jacobian")
    core = make_core(vm_core, "", b.body, user + free_params, [jac], LEAF)
    core.name = vm_core.name.split("__")[0] + "__" + kind
    core.free = vm_core.free
    core.deps = getattr(vm_core, "deps", [])
    return core


def _pytree_parts(tree):
    """A structure whose leaves are all arrays (no static leaf): its Jacobian is a pytree."""
    if tree.kind == "static":
        return False
    return all(_pytree_parts(c) for c in tree.children)


class _LeafView:
    """fun as a function of one leaf of argument `argnum` (passed again as an extra last
    argument) with one output leaf: the Jacobian of a pytree is a pytree of these."""

    def __init__(self, fun, in_trees, argnum, leaf, out_leaf):
        self.fun, self.in_trees, self.argnum = fun, in_trees, argnum
        self.leaf, self.out_leaf = leaf, out_leaf
        self.__name__ = _fname(fun)
        P = inspect.Parameter
        self.__signature__ = inspect.Signature(
            [P(f"arg{i}", P.POSITIONAL_OR_KEYWORD) for i in range(len(in_trees) + 1)])

    def __call__(self, *args):
        raise TypeError(f"{self.__name__}: a part of a Jacobian, only transformed")

    def __transpile_core__(self, trees):
        core = core_of(self.fun, self.in_trees)
        n_user = len(core.params) - len(core.free)
        k = leaf_ranges(self.in_trees)[self.argnum][self.leaf]
        names = set(core.params) | set(bound_names(core.body))
        unused = Namer(names).fresh(core.params[k] + "_unused")
        params = core.params[:k] + [unused] + core.params[k + 1:n_user] + [core.params[k]] + \
            core.params[n_user:]
        new = make_core(core, "", list(core.body), params, [core.outs[self.out_leaf]], LEAF)
        new.free = core.free
        new.deps = getattr(core, "deps", [])
        return new


class _OutputView:
    """fun with only its first output (the Jacobian's, where fun returns (output, aux))."""

    def __init__(self, fun, n_args):
        self.fun = fun
        self.__name__ = _fname(fun)
        P = inspect.Parameter
        self.__signature__ = inspect.Signature(
            [P(f"arg{i}", P.POSITIONAL_OR_KEYWORD) for i in range(n_args)])

    def __call__(self, *args):
        raise TypeError(f"{self.__name__}: a part of a Jacobian, only transformed")

    def __transpile_core__(self, trees):
        core = core_of(self.fun, trees)
        first = core.out_tree.children[0]
        new = make_core(core, "", list(core.body), list(core.params),
                        list(core.outs[:first.num_leaves]), first)
        new.free = core.free
        new.deps = getattr(core, "deps", [])
        return new


@register_jacobian_core
def jacobian_aux_core(fun, argnum, mode, in_trees):
    """jacfwd/jacrev(fun, argnum, has_aux=True) as one core: (the Jacobian of fun's first
    output, its aux as computed)."""
    trees = in_trees[0] if isinstance(in_trees, Ranked) else in_trees
    kind = "jacfwd" if mode == "fwd" else "jacrev"
    plain = core_of(fun, tuple(trees))
    if plain.out_tree.kind != "tuple" or len(plain.out_tree.children) != 2:
        raise TranspileError(f"has_aux=True requires {_fname(fun)} to return a pair "
                             "(output, aux)", construct=f"{kind}({_fname(fun)}, has_aux=True)")
    jac = jacobian_core(_OutputView(fun, len(trees)), argnum, mode, in_trees)
    n_user = sum(t.num_leaves for t in trees)
    user = [f"a{i}" for i in range(n_user)]
    namer = Namer(set(user) | {"np", "rt"})
    b = Builder(namer)
    free, by_where, outs = [], {}, []
    first = plain.out_tree.children[0].num_leaves
    for sub, keep in ((jac, slice(None)), (plain, slice(first, None))):
        mapping = _spliced(sub, user, namer, by_where, free, b)
        outs += [mapping.get(o.name, o) if isinstance(o, Var) else o for o in sub.outs[keep]]
    tree = TreeDef("tuple", (jac.out_tree, plain.out_tree.children[1]))
    core = make_core(plain, "", b.body, user + [p for p, _, _ in free], outs, tree)
    core.name = plain.name.split("__")[0] + "__" + kind
    core.free = free
    core.deps = getattr(plain, "deps", [])
    return core


def _substitute(tree, inner):
    """`tree` with each leaf replaced by the structure `inner` (JAX's Jacobian of a pytree:
    the output's structure outside, the argument's inside)."""
    if tree.kind == "leaf":
        return inner
    return TreeDef(tree.kind, tuple(_substitute(c, inner) for c in tree.children), tree.keys)


def _pytree_jacobian(fun, argnum, mode, in_trees, ranks, plain, kind):
    """jacfwd/jacrev of a pytree argument or output as one core: the Jacobian of each output
    leaf with respect to each leaf of the argument, in JAX's structure."""
    n_user = sum(t.num_leaves for t in in_trees)
    leaves = list(leaf_ranges(in_trees)[argnum])
    user = [f"a{i}" for i in range(n_user)]
    namer = Namer(set(user) | {"np", "rt"})
    b = Builder(namer)
    free, by_where, outs = [], {}, []
    for i in range(len(plain.outs)):
        for j, k in enumerate(leaves):
            view = _LeafView(fun, in_trees, argnum, j, i)
            trees = in_trees + (LEAF,)
            rk = None
            if ranks is not None:
                rk = Ranked((trees, tuple(ranks) + (ranks[k],), tuple(True for _ in trees)))
            sub = jacobian_core(view, len(in_trees), mode, rk or trees)
            mapping = _spliced(sub, user + [user[k]], namer, by_where, free, b)
            o = sub.outs[0]
            outs.append(mapping.get(o.name, o) if isinstance(o, Var) else o)
    tree = _substitute(plain.out_tree, in_trees[argnum])
    core = make_core(plain, "", b.body, user + [p for p, _, _ in free], outs, tree)
    core.name = plain.name.split("__")[0] + "__" + kind
    core.free = free
    core.deps = getattr(plain, "deps", [])
    return core


def _basis(b, x, rank):
    """The basis vectors of x's elements, stacked on axis 0 (plain NumPy when x's rank is
    known to be 0 or 1, so that jit compiles it)."""
    if rank == 1:
        n = b.emit(by_name("size"), {"x": x}, base="n")
        dtype = b.emit(by_name("attr_dtype"), {"x": x}, base="dtype")
        return b.emit(by_name("eye"), {"N": n, "dtype": dtype}, base="basis")
    if rank == 0:       # (a Python float has no .dtype: np.result_type gives float64)
        dtype = b.emit(by_name("result_type"), {"arrays": TupleArg((x,))}, base="dtype")
        return b.emit(by_name("ones"), {"shape": Const(1), "dtype": dtype}, base="basis")
    if rank is not None:
        n = b.emit(by_name("size"), {"x": x}, base="n")
        dtype = b.emit(by_name("attr_dtype"), {"x": x}, base="dtype")
        eye = b.emit(by_name("eye"), {"N": n, "dtype": dtype}, base="eye")
        return b.emit(by_name("reshape"), {"x": eye, "shape": TupleArg(
            (n,) + tuple(_dims(b, x, rank, 0)))}, base="basis")
    return b.emit(by_name("basis_like"), {"x": x}, base="basis")


def _dims(b, x, rank, start):
    """[x.shape[start], ..., x.shape[start + rank - 1]] as names."""
    shp = b.emit(by_name("attr_shape"), {"x": x}, base=(x.name if isinstance(x, Var) else "x") +
                 "_shape")
    return [b.emit(by_name("getitem"), {"x": shp, "index": IndexArg((Const(start + k),))},
                   base="dim") for k in range(rank)]


def output_rank(core, ranks):
    """The rank of a core function's single output, from its argument ranks (None: unknown)."""
    if len(core.outs) != 1:
        return None
    free_ranks = []
    for _, where, _ in core.free:
        try:
            free_ranks.append(int(np.ndim(read_binding(where))))
        except Exception:
            free_ranks.append(None)
    sweep = BatchSweep(core, [False] * len(core.params), list(ranks) + free_ranks)
    try:
        sweep.run(core.body)
    except Exception:
        return None
    return sweep.r(core.outs[0])


def hessian(fun, argnums=0, holomorphic=False):
    """Second derivatives: jacfwd of the generated gradient (forward over reverse).

    Eagerly it loops over basis vectors; under jit (one 1-D array argument) it is one generated
    function: vmap over the basis of the gradient's forward mode. holomorphic=True (as JAX):
    the complex second derivative of a holomorphic function of complex inputs."""
    if holomorphic:
        return jacfwd(Grad(fun, argnums, holomorphic=True), argnums, holomorphic=True)
    if isinstance(argnums, int):
        return Hessian(fun, argnums)
    return jacfwd(Grad(fun, argnums), argnums)


hessian.__transpile_static__ = True


@register_jacobian_core
def jacobians_core(fun, nums, mode, in_trees):
    """jacfwd/jacrev with a tuple of argnums: one core per argument, inlined side by side into
    one function returning the tuple of Jacobians."""
    n_args = len(in_trees[0] if isinstance(in_trees, Ranked) else in_trees)
    cores = [jacobian_core(fun, a % n_args, mode, in_trees) for a in nums]
    first = cores[0]
    n_user = len(first.params) - len(first.free)
    names = {"np", "rt"}
    for c in cores:
        names |= set(c.params) | set(bound_names(c.body))
    namer = Namer(names)
    by_where = {w: p for p, w, _ in first.free}
    free = list(first.free)
    body, outs = [], []
    for c in cores:
        mapping = {p: Var(q) for p, q in zip(c.params[:n_user], first.params[:n_user])}
        for p, w, d in c.free:
            if w not in by_where:
                by_where[w] = p
                free.append((p, w, d))
            mapping[p] = Var(by_where[w])
        body += rename_body(c.body, mapping, namer, c.outs)
        o = c.outs[0]
        outs.append(mapping.get(o.name, o) if isinstance(o, Var) else o)
    params = first.params[:n_user] + [p for p, _, _ in free]
    core = make_core(first, "", body, params, outs, TreeDef("tuple", (LEAF,) * len(nums)))
    core.name = first.name
    core.free = free
    core.deps = [d for c in cores for d in getattr(c, "deps", [])]
    return core


def _spliced(sub, args, namer, by_where, free, b):
    """Append `sub`'s body to b with its parameters renamed to `args` and its free values
    shared by where they are read from (`by_where`, `free` grow); returns the renaming."""
    sub_user = len(sub.params) - len(sub.free)
    mapping = {p: Var(q) for p, q in zip(sub.params[:sub_user], args)}
    for p, w, desc in sub.free:
        if w not in by_where:
            by_where[w] = namer.fresh(p)
            free.append((by_where[w], w, desc))
        mapping[p] = Var(by_where[w])
    b.body += rename_body(sub.body, mapping, namer, sub.outs)
    return mapping
