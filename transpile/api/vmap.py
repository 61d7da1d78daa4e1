"""vmap: a function of one example -> a function of a batch, as generated source.

    batched = vmap(f, in_axes=(0, None))      # map over axis 0 of the first argument
    show(batched, xs, w)                      # the batched source

The batched code is produced by batching/vectorize.py from the function's core form, so it
composes with the other transforms both ways: vmap(grad(f)) gives per-example gradients,
grad(lambda x: np.sum(vmap(f)(x))) differentiates batched code, vmap(vmap(f)) nests.
"""
import numpy as np

from transpile.frontend.callables import param_list
from transpile.core.tracebacks import api_boundary
from transpile.api.autodiff import Transform, _fname, core_of
from transpile.errors import TranspileError
from transpile.compile.specialization import refuse_overlap
from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives.internal.control import write_back
from transpile.frontend.parse import read_binding
from transpile.pytree import LEAF, node_parts, tree_unflatten
from transpile.ad.tape_split import split_tapes
from transpile.batching.vectorize import BatchSweep, RestartSweep, WholeFunctionLoop, reads
from transpile.batching.branches import RaggedBranches
from transpile.ad.reverse import make_core
from transpile.frontend.transform_registry import Ranked  # noqa: F401  (vmap.Ranked: re-exported)


def _spec_node(spec):
    """A pytree node given as an axes spec (a NamedTuple, dataclass or registered class, as
    JAX allows any pytree prefix): (class, children, aux), else None."""
    if isinstance(spec, (dict, list)) or type(spec) is tuple:
        return None
    return node_parts(spec)


def _check_axes_spec(spec, what):
    if spec is None or isinstance(spec, int) and not isinstance(spec, bool):
        return
    node = _spec_node(spec)
    if node is not None:
        for s in node[1]:
            _check_axes_spec(s, what)
        return
    if isinstance(spec, (tuple, list)):
        for s in spec:
            _check_axes_spec(s, what)
        return
    if isinstance(spec, dict):
        for s in spec.values():
            _check_axes_spec(s, what)
        return
    raise TypeError(f"vmap: {what} must be an int, None, or a tuple/list/dict of those, "
                    f"got {spec!r}")


def _leaf_paths(tree, where):
    """A description of each leaf of `tree` for messages: p['w'], p[0] (as JAX's key paths)."""
    if tree.kind == "leaf":
        return [where]
    out = []
    for i, c in enumerate(tree.children):
        key = tree.keys[i] if tree.kind == "dict" else i
        out += _leaf_paths(c, f"{where}[{key!r}]")
    return out


def _broadcast_prefix(spec, tree, where, what):
    """in_axes/out_axes prefix -> one axis (or None) per leaf of `tree`; with a description
    of each leaf for error messages."""
    if spec is None or isinstance(spec, int):
        return [(spec, w) for w in _leaf_paths(tree, where)], \
            [where] if tree.kind == "static" and spec is not None else []
    kinds = {tuple: "tuple", list: "list", dict: "dict"}
    node = _spec_node(spec)
    if node is not None or tree.kind == "node":
        if node is None or tree.kind != "node" or node[0] is not tree.keys[0]:
            have = tree.keys[0].__name__ if tree.kind == "node" else \
                "a single array" if tree.kind == "leaf" else f"a {tree.kind}"
            raise ValueError(f"vmap: {what} {spec!r} for {where} has the structure "
                             f"{type(spec).__name__} but the value is {have}")
        if len(node[1]) != len(tree.children):
            raise ValueError(f"vmap: {what} for {where} has {len(node[1])} entries but the "
                             f"value has {len(tree.children)}")
        out, statics = [], []
        for i, (s, c) in enumerate(zip(node[1], tree.children)):
            o, st = _broadcast_prefix(s, c, f"{where}[{i}]", what)
            out += o
            statics += st
        return out, statics
    if tree.kind not in ("tuple", "list", "dict"):
        raise ValueError(f"vmap: {what} {spec!r} for {where} has a structure ({type(spec).__name__}) "
                         f"but the value is a single array")
    if kinds[type(spec)] != tree.kind and not (isinstance(spec, (tuple, list))
                                               and tree.kind in ("tuple", "list")):
        raise ValueError(f"vmap: {what} for {where} is a {type(spec).__name__} but the value is "
                         f"a {tree.kind}")
    if isinstance(spec, dict):
        if set(spec) != set(tree.keys):
            raise ValueError(f"vmap: {what} for {where} has keys {sorted(spec)} but the value "
                             f"has keys {sorted(tree.keys)}")
        children = [(spec[k], c, f"{where}[{k!r}]") for k, c in zip(tree.keys, tree.children)]
    else:
        if len(spec) != len(tree.children):
            raise ValueError(f"vmap: {what} for {where} has {len(spec)} entries but the value "
                             f"has {len(tree.children)}")
        children = [(s, c, f"{where}[{i}]") for i, (s, c) in enumerate(zip(spec, tree.children))]
    out, statics = [], []
    for s, c, w in children:
        o, st = _broadcast_prefix(s, c, w, what)
        out += o
        statics += st
    return out, statics


class Examples(list):
    """One example's avals (Vmap.inner_avals), with the positions of those that are
    numbers: a mapped axis of length one example leaves a NumPy scalar, not a 0-d array."""

    def __init__(self, *args):
        super().__init__(*args)
        self.numbers = set()


class Vmap(Transform):
    suffix = "__vmap"

    def __init__(self, fun, in_axes=0, out_axes=0, axis_size=None):
        super().__init__(fun)
        _check_axes_spec(in_axes, "in_axes")
        _check_axes_spec(out_axes, "out_axes")
        n = len(self._params)
        self._axes_given = None
        if isinstance(in_axes, (tuple, list)) and len(in_axes) != n and not self._star:
            required = sum(p.default is p.empty for p in self._params)
            if self._star or not required <= len(in_axes) < n:
                raise ValueError(f"vmap: in_axes {in_axes!r} has {len(in_axes)} entries but "
                                 f"{_fname(fun)} takes {n} argument{'s' if n != 1 else ''}")
            # as JAX: one entry per argument the caller passes; the parameters after them
            # keep their defaults (not mapped)
            self._axes_given = len(in_axes)
            in_axes = tuple(in_axes) + (None,) * (n - len(in_axes))
        if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
            raise ValueError(f"vmap: axis_size must be a non-negative int, got {axis_size!r}")
        self.in_axes, self.out_axes, self.axis_size = in_axes, out_axes, axis_size
        self._axes_cache = {}

    # -- axes -----------------------------------------------------------------------------------

    def leaf_axes(self, in_trees, passed=None):
        """One (axis or None, description) per argument leaf. Parameters left to their
        defaults are not mapped (in_axes speaks about the arguments the caller passes)."""
        spec = self.in_axes
        per_arg = list(spec) if isinstance(spec, (tuple, list)) else [spec] * len(in_trees)
        if passed is not None:
            k = self._axes_given
            if k is not None and any(passed[k:]):
                raise ValueError(f"vmap: in_axes has {k} entries, one per argument passed, but "
                                 f"the call also passes {self._params[k + list(passed[k:]).index(True)].name!r}"
                                 f" of {_fname(self.fun)}: give in_axes an entry for it")
            per_arg = [s if ok else None for s, ok in zip(per_arg, passed)]
        axes, statics = [], []
        names = [p.name for p in self._params]
        if self._star:          # f(*args): one tree per argument of the call
            names = [f"argument {i}" for i in range(len(in_trees))]
            if isinstance(spec, (tuple, list)) and len(spec) != len(in_trees):
                raise ValueError(f"vmap: in_axes {spec!r} has {len(spec)} entries, one per "
                                 f"argument passed, but the call of {_fname(self.fun)} passes "
                                 f"{len(in_trees)}")
        for name, s, t in zip(names, per_arg, in_trees):
            a, st = _broadcast_prefix(s, t, name, "in_axes")
            axes += a
            statics += st
        return axes, statics

    def maps_every_parameter(self):
        """No parameter has a default: every one is passed and follows in_axes (then the
        ranks of the arguments pick the batching rules)."""
        return all(p.default is p.empty for p in self._params)

    def inner_avals(self, trees, avals):
        """One example's avals: each mapped leaf without its batch axis."""
        passed = None
        if isinstance(trees, Ranked):
            trees, _, passed = trees
        axes, _ = self.leaf_axes(trees, passed)
        if len(axes) != len(avals):
            return None
        out = Examples()
        for k, (av, (ax, _)) in enumerate(zip(avals, axes)):
            if ax is None:
                out.append(av)
                continue
            shape = list(av.shape)
            del shape[ax]
            out.append(type(av)(tuple(shape), av.dtype, av.weak))
            if not shape:
                out.numbers.add(k)      # a NumPy scalar, never a 0-d array
        return out

    def check_call(self, leaves, trees, passed=None):
        hit = self._axes_cache.get((trees, passed))
        if hit is None:
            hit = self._axes_cache[(trees, passed)] = self.leaf_axes(trees, passed)
        axes, statics = hit
        if statics and self.in_axes != 0:
            raise ValueError(f"vmap: in_axes maps {statics[0]}, which is a Python "
                             "bool/int/str (a static value); give it in_axes None")
        sizes = []
        for leaf, (ax, where) in zip(leaves, axes):
            if isinstance(leaf, np.random.Generator):
                # the examples would draw one after another from it: no batched form
                raise TranspileError(f"vmap of {_fname(self.fun)}: {where} is a "
                                     "np.random.Generator, which every example would draw from "
                                     "in turn", construct="a np.random.Generator argument",
                                     hint="draw the numbers before vmap and map over them, or "
                                          "pass seeds and make np.random.default_rng(seed) "
                                          "inside")
            if ax is None:
                continue
            shape = np.shape(leaf)
            nd = len(shape)
            if not -nd <= ax < nd:
                raise ValueError(f"vmap: in_axes={ax} is out of range for {where}, which has "
                                 f"rank {nd} (shape {np.shape(leaf)})")
            sizes.append((shape[ax], where, ax))
        if not sizes and self.axis_size is None:
            raise ValueError(f"vmap of {_fname(self.fun)}: no argument is mapped (in_axes="
                             f"{self.in_axes!r}) and axis_size is not given, so the batch size "
                             "is unknown")
        want = self.axis_size if self.axis_size is not None else (sizes[0][0] if sizes else None)
        if any(n != want for n, _, _ in sizes):
            detail = ", ".join(f"{w} axis {a} has size {n}" for n, w, a in sizes)
            if self.axis_size is not None:
                detail = f"axis_size={self.axis_size}; " + detail
            raise ValueError(f"vmap of {_fname(self.fun)}: mapped axes have different sizes: "
                             f"{detail}")

    # -- specialization -------------------------------------------------------------------------

    def key_for(self, args, kwargs):
        if not kwargs and len(args) == len(self._params) and not self._star:
            passed, values = (True,) * len(args), list(args)
        else:
            self.fresh_defaults()
            try:
                ba = self.signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{self.__name__}(): {e}") from None
            passed = tuple(p.name in ba.arguments for p in self._params)
            values = self.bind(args, kwargs)
            if self._star:          # f(*args): one value per argument of the call, then the
                passed = []         # keyword-only ones (those left to their defaults: not mapped)
                for p in self._params:
                    if p.kind == p.VAR_POSITIONAL:
                        passed += [True] * len(ba.arguments.get(p.name, ()))
                    elif p.kind == p.VAR_KEYWORD:
                        passed.append(bool(ba.arguments.get(p.name)))
                    else:
                        passed.append(p.name in ba.arguments)
                passed = tuple(passed)
        leaves, trees = self.flatten_args(values)
        key = Ranked((trees, tuple(int(np.ndim(l)) for l in leaves), passed))
        self.check_call(leaves, trees, passed)
        return leaves, key

    @api_boundary     # tracebacks without transpile\'s frames (core/tracebacks.py)
    def __call__(self, *args, **kwargs):
        leaves, key = self.key_for(args, kwargs)
        spec = self.specialize_for(key, leaves)
        free = spec.free_values()
        if tuple(int(np.ndim(v)) for v in free) != spec.core.free_ranks:
            self._cache.pop(key, None)            # a global array changed rank: regenerate
            spec = self.specialize(key)
            free = spec.free_values()
        self._last_spec = spec
        if _writes_arguments(spec.core):    # f(a, a) where f writes into its arguments
            refuse_overlap(f"vmap({self.__name__})", spec.core, leaves)
        out = spec.fn(*leaves, *free)
        flat = list(out) if len(spec.core.outs) != 1 else [out]
        return tree_unflatten(spec.core.out_tree, flat)

    @api_boundary
    def source_for(self, *args, **kwargs):
        """The generated source for these example arguments; without them, the code of the
        last call (vmap generates code for the ranks of its arguments: code made without
        them is not the program a call runs)."""
        if not args and not kwargs:
            spec = getattr(self, "_last_spec", None)
            if spec is not None:
                return spec.text
            name = self.__name__
            raise TranspileError(
                f"vmap({name}).source needs example arguments: vmap generates code for the "
                "ranks (and, where needed, shapes) of the arguments it is called with, and no "
                "call has been made yet",
                hint=f"call vmap({name})(...) first (.source then shows the code of the last "
                f"call), or use vmap({name}).source_for({param_list(self)}) with batched "
                f"example arrays (or transpile.show(vmap({name}), *args))")
        leaves, key = self.key_for(args, kwargs)
        return self.specialize_for(key, leaves).text     # (the arguments' shapes if needed)

    def __transpile_core__(self, in_trees):
        if isinstance(in_trees, Ranked):
            return self.batched_core(*in_trees)
        return self.batched_core(in_trees, None)

    # -- the transform --------------------------------------------------------------------------

    def batched_core(self, in_trees, ranks, passed=None, per_example=False):
        """The batched core. per_example: one loop over the batch around the whole function
        (what jit compiles when the batched code has a step Numba cannot lower)."""
        axes, _ = self.leaf_axes(in_trees, passed)
        fun = self.fun
        if isinstance(fun, Vmap) and ranks is not None:
            inner_ranks = tuple(r - (a is not None) for r, (a, _) in zip(ranks, axes))
            inner = fun.batched_core(in_trees, inner_ranks, passed)
        elif getattr(fun, "accepts_ranks", False) and ranks is not None and (
                passed is None or all(passed)):
            inner_ranks = tuple(r - (a is not None) for r, (a, _) in zip(ranks, axes))
            inner = fun.__transpile_core__(Ranked((in_trees, inner_ranks,
                                                   tuple(True for _ in in_trees))))
        elif len(in_trees) < len(self._params) and not isinstance(fun, Transform) and \
                not self._star:
            # called inside another transform with some parameters left to their defaults
            missing = self._params[len(in_trees):]
            inner = core_of(fun, tuple(in_trees) + (LEAF,) * len(missing),
                            {p.name: p.default for p in missing})
        else:
            inner = core_of(fun, in_trees)
        # one tape per pushed name: a tape is batched when a value pushed on it is, so a flag
        # pushed unbatched (the `if` of the forward pass ran one side) pops unbatched, and the
        # backward `if` runs that one side too
        inner = split_tapes(inner)
        n_user = len(inner.params) - len(inner.free)
        if n_user != len(axes):
            raise TranspileError(f"vmap: internal mismatch of argument leaves for {_fname(fun)}")
        free_ranks = []
        for _, where, _ in inner.free:
            try:
                free_ranks.append(int(np.ndim(read_binding(where))))
            except Exception:
                free_ranks.append(None)
        mapped = [a is not None for a, _ in axes]
        ex_ranks = [None if ranks is None else ranks[i] - mapped[i] for i in range(n_user)]
        forced, whole = set(), None
        if per_example:
            whole = WholeFunctionLoop("one compiled loop over the batch, each example running "
                                      "the function's own code (a step of the batched code "
                                      "has no Numba lowering)", None)
            whole.plain = True
        while True:
            try:
                sweep = self._sweep(inner, axes, mapped, ex_ranks + free_ranks, forced, whole,
                                    ranks is None)
                break
            except RestartSweep as why:
                if str(why) in forced:
                    raise TranspileError(f"vmap of {_fname(fun)}: internal error batching the "
                                         f"tape {why}") from None
                forced.add(str(why))
            except (WholeFunctionLoop, RaggedBranches) as why:
                if whole is not None:
                    raise
                whole = why
        outs = self.place_outputs(sweep, inner)
        body = sweep.bld.body
        if isinstance(sweep.B, Var) and sweep.B.name not in reads(body[1:]) | \
                {o.name for o in outs if isinstance(o, Var)}:
            body = [st for st in body if not (isinstance(st, Eqn) and st.out == sweep.B.name)]
        sweep.bld.body = body
        core = make_core(inner, self.suffix, sweep.bld.body, inner.params, outs, inner.out_tree)
        core.notes = list(inner.notes) + [
            f"vmap of {_fname(fun)}: in_axes={self.in_axes!r}, out_axes={self.out_axes!r}; "
            "batch axis first inside"]
        core.deps = getattr(inner, "deps", [])
        core.free_ranks = tuple(free_ranks)
        core.out_ranks = [None if not isinstance(o, Var) else sweep.rk.get(o.name) for o in outs]
        return core

    def _sweep(self, inner, axes, mapped, ranks, forced, whole, ranks_unknown=False):
        """One batching sweep over the inner core; `whole`: loop over the batch around all of it."""
        fun = self.fun
        sweep = BatchSweep(inner, mapped + [False] * len(inner.free), ranks, size=None)
        sweep.batched_tapes = set(forced)
        # ranks are known when vmap is called directly or under jit; without them it is being
        # inlined by another transform (grad of vmap), which may differentiate the result
        sweep.differentiated = ranks_unknown
        # move each mapped axis to the front
        sweep.bld.loc = None
        first = None
        for p, (ax, _), m in zip(inner.params, axes, mapped):
            if not m:
                continue
            if ax != 0:
                r = sweep.rk.get(p)
                sweep.cur, sweep.cur_rank = Eqn(p, None, {}), r
                sweep.final("moveaxis", {"x": Var(p), "source": Const(ax),
                                         "destination": Const(0)})
            first = first or p
        if first is None:
            if self.axis_size is None:
                raise TranspileError(f"vmap of {_fname(fun)}: no argument is mapped and "
                                     "axis_size is not given")
            sweep.B = Const(self.axis_size)
        else:
            sweep.start(first)
            if self.axis_size is not None:
                sweep.B = Const(self.axis_size)
        live_out = {o.name for o in inner.outs if isinstance(o, Var)}
        if whole is None:
            sweep.run(inner.body, live_out)
        else:
            sweep.loop_fallback_whole(inner.body, live_out, whole)
        return sweep

    def place_outputs(self, sweep, inner):
        spec = self.out_axes
        tree = inner.out_tree
        structured = isinstance(spec, (tuple, list, dict)) or _spec_node(spec) is not None
        if structured and tree.kind in ("tuple", "list", "dict", "node"):
            axes, _ = _broadcast_prefix(spec, tree, "output", "out_axes")
        elif structured:
            raise ValueError(f"vmap: out_axes {spec!r} has a structure but {_fname(self.fun)} "
                             "returns a single value")
        else:
            axes = [(spec, "output")] * tree.num_leaves
        outs = []
        sweep.bld.loc = None
        for o, (ax, where) in zip(inner.outs, axes):
            batched = sweep.b(o)
            if ax is None:
                if batched:
                    raise TranspileError(
                        f"vmap of {_fname(self.fun)}: out_axes=None for {where}, but it depends "
                        "on the mapped axis", hint="give that output an out_axes int")
                outs.append(o)
                continue
            if not batched:
                o = sweep.emit("batch_broadcast", {"x": o, "size": sweep.B},
                               base=(o.name if isinstance(o, Var) else "out") + "_b",
                               rank=sweep.r(o))
                o = sweep.emit("copy", {"x": o}, base=o.name, rank=sweep.r(o))
            if ax != 0:
                o = sweep.emit("moveaxis", {"x": o, "source": Const(0), "destination": Const(ax)},
                               base=o.name + "_out", rank=sweep.r(o))
            outs.append(o)
        return outs


def vmap(fun=None, in_axes=0, out_axes=0, axis_size=None):
    """Vectorizing map: vmap(f)(xs) == np.stack([f(x) for x in xs]), as generated batched
    source (batching rules per primitive; an explicit loop where none fits).

    in_axes: int, None, or a tuple/list with one entry per argument (pytree prefixes for
    pytree arguments); out_axes likewise for the outputs; axis_size: the batch size when no
    argument is mapped. Usable as @vmap, @vmap(in_axes=...) or vmap(f, ...).
    """
    if fun is None:
        return lambda f: Vmap(f, in_axes, out_axes, axis_size)
    return Vmap(fun, in_axes, out_axes, axis_size)

vmap.__transpile_static__ = True   # vmap(f, ...) inside a transformed function runs while generating code


def _writes_arguments(core):
    """Does the (batched) function write into its arguments? (cached on the core)"""
    known = getattr(core, "_writes_arguments", None)
    if known is None:
        known = any(e.prim is write_back for e in ir.walk_eqns(core.body))
        core._writes_arguments = known
    return known
