"""Shape specialization: core Python + the shapes/dtypes of its parameters -> core Python where
every value's abstract value (shape, dtype) is known, shape queries are constants, and runtime
helpers that only exist because shapes were unknown are gone.

    unbroadcast(g, x)    same shapes: g                  else: np.sum over the broadcast axes
    sum_grad(ct, x, ..)  a broadcast of ct to x's shape (fusable: read with broadcasting)
    check_scalar_output  checked now; the seed cotangent is the constant 1 of the output dtype
    reduced_count        an int constant
    matmul_vjp_left/..   np.matmul / np.outer / * with transposes, by the operands' ndims
    norm, var, std       sums, products and sqrt (so fusion sees elementwise + reduction)

The result is what `jit` lowers (transpile/lowering/) and what fusion groups (transforms/fusion.py).
"""
from dataclasses import dataclass

import numpy as np

import transpile_runtime as runtime
from transpile import ir
from transpile.errors import TranspileError
from transpile.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var, map_atoms
from transpile.primitives.registry import Primitive, by_name
from transpile.transforms.specialize_control import (resolve_if_array, AvalMap, bind_joined, multi_bound,
                                                     dynamic_slice, pop_aval, rw_cast_into,
                                                     sized_by_run_time_int, collective_aval,
                                                     always_zero, rw_add_zero,
                                                     rw_float_part,
                                                     specialize_loop, specialize_push)
from transpile.transforms.specialize_batch import REWRITES as BATCH_REWRITES, note_copy
from transpile.transforms.specialize_windows import (has_run_time_slice, note_offset,
                                                     scatter_aval, window_aval)


@dataclass(frozen=True)
class AVal:
    """Abstract value: shape and dtype; weak=True for a Python scalar (NumPy 2 weak typing)."""
    shape: tuple
    dtype: np.dtype
    weak: bool = False

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def __repr__(self):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]" + ("~" if self.weak else "")


def aval_of(value):
    """The abstract value of a concrete argument."""
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return AVal((), np.dtype(type(value)), True)
    if isinstance(value, np.ndarray):
        return AVal(value.shape, value.dtype)
    if isinstance(value, np.generic):
        return AVal((), value.dtype)
    if hasattr(value, "__cuda_array_interface__"):    # a GPU array (CuPy): never copied here
        return AVal(tuple(value.shape), np.dtype(value.dtype))
    a = np.asarray(value)
    return AVal(a.shape, a.dtype)


def _all_weak(sp, args):
    """Are all operands Python scalars (weak dynamic scalars or Python number constants)?"""
    for a in args.values():
        if isinstance(a, Const):
            if isinstance(a.value, (bool, int, float, complex)) and not isinstance(a.value,
                                                                                 np.generic):
                continue
            return False
        if not isinstance(a, Var):
            return False
        av = sp.aval(a)
        if av is None or not av.weak:
            return False
    return True


def dummy(av, full=False):
    """A cheap concrete stand-in with the abstract value's type (ones, never materialized)."""
    if av.weak:
        return av.dtype.type(1).item()
    if not av.shape:
        return av.dtype.type(1)
    if full:
        return np.broadcast_to(np.ones((), av.dtype), av.shape)
    return np.ones((1,) * len(av.shape), av.dtype)


# A broadcast to a known shape, as a primitive the backends can read elementwise.
BCAST = Primitive("bcast", np.broadcast_to, "np.broadcast_to", "x, shape", batch="elementwise")
BCAST.fusable = True

_QUERY = {"attr_shape", "attr_ndim", "attr_size", "attr_dtype", "shape", "ndim", "size", "len",
          "reduced_count", "transpose_inverse", "result_type"}
_ALIAS = {"identity", "stop_gradient"}


class Specializer:
    rewrite = True      # False: only infer shapes and fold queries (used while normalizing)

    def __init__(self, core, in_avals):
        self.core = core
        self.avals = AvalMap()   # name -> AVal (and .conflicts: names with no single type)
        self.zero_names = {}     # multiply bound names whose scalar values so far are all 0
        self.multi = set()       # names bound more than once (branch joins, loop-carried)
        self.always_zero = {}    # ... every time to the constant 0: name -> that Const
        self.subst = {}          # name -> atom
        self.counter = 0
        self.taken = set(core.params) | set(core.statics)
        for st in ir.walk_eqns(core.body):
            self.taken.add(st.out)
        for name, av in zip(core.params, in_avals):
            self.avals[name] = av
        for name, obj in core.statics.items():
            if isinstance(obj, (np.ndarray, np.generic)):
                self.avals[name] = aval_of(obj)

    # -- helpers -------------------------------------------------------------------------------

    def fresh(self, base):
        self.counter += 1
        name = f"{base}_s{self.counter}"
        while name in self.taken:
            self.counter += 1
            name = f"{base}_s{self.counter}"
        self.taken.add(name)
        return name

    def atom(self, a):
        if isinstance(a, Var):
            return self.subst.get(a.name, a)
        return a

    def aval(self, a):
        if isinstance(a, Var):
            return self.avals.get(a.name)
        if isinstance(a, Const):
            v = a.value
            if isinstance(v, (bool, int, float, complex, np.generic)):
                return aval_of(v)
        return None

    def value(self, a, full=False):
        """A concrete stand-in for an argument value (for abstract evaluation)."""
        if isinstance(a, Const):
            return a.value
        if isinstance(a, Var):
            av = self.avals.get(a.name)
            if av is None:
                raise _Unknown(a.name)
            return dummy(av, full)
        if isinstance(a, TupleArg):
            vals = [self.value(x, full) for x in a.items]
            return vals if a.kind == "list" else tuple(vals)
        if isinstance(a, IndexArg):
            items = []
            for it in a.items:
                if isinstance(it, SliceArg):
                    items.append(slice(*[None if x is None else self.value(x) for x in
                                         (it.lower, it.upper, it.step)]))
                elif isinstance(it, (Var, Const)):
                    items.append(self.value(it, True))
                else:
                    items.append(it)
            return tuple(items)
        return a

    def emit(self, out_list, prim, args, loc, base="t", name=None):
        name = name or self.fresh(base)
        eqn = Eqn(name, prim, args, loc)
        self.infer(eqn)
        out_list.append(eqn)
        return Var(name)

    # -- abstract evaluation ---------------------------------------------------------------------

    def infer(self, eqn):
        prim = eqn.prim
        args = eqn.args
        if prim.name == "tape_pop":
            av = pop_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        if prim.name in ("getitem_vjp", "setitem", "write_in_place") and \
                has_run_time_slice(eqn):
            av = scatter_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        if dynamic_slice(eqn):      # x[i:i + 3]: a fixed-length window, or shape unknown
            av = window_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        if sized_by_run_time_int(self, eqn):
            return None       # its shape depends on values known only at run time
        if not prim.pure:
            # Never run a collective to learn its shape: it would wait at a barrier for the
            # other shards (which may be waiting for this compile).
            av = collective_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        try:
            if prim.elementwise or getattr(prim, "fusable", False) or \
                    prim.name in ("clip_mask", "select_weight"):
                av = self._infer_elementwise(eqn)
            else:
                av = self._infer_generic(eqn)
        except _Unknown:
            av = None
        except Exception:      # a value the stand-ins cannot reproduce: shape unknown
            av = None
        if av is not None:
            self.avals[eqn.out] = av
        return av

    def _infer_elementwise(self, eqn):
        prim, args = eqn.prim, eqn.args
        if prim is BCAST:
            x = self.aval(args["x"])
            return AVal(tuple(args["shape"].value), x.dtype)
        shapes, small = [], {}
        for k, a in args.items():
            if isinstance(a, (Var, Const)):
                av = self.aval(a)
                if av is None:
                    if isinstance(a, Const):
                        small[k] = a.value
                        continue
                    raise _Unknown(k)
                shapes.append(av.shape)
                small[k] = dummy(av) if isinstance(a, Var) else a.value
            else:
                small[k] = self.value(a)
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        with np.errstate(all="ignore"):
            r = _call(prim, small)
        if isinstance(r, np.generic) and not shape and _all_weak(self, args):
            r = r.item()          # Python scalars in, a Python scalar out (weak, as in NumPy 2)
        if isinstance(r, np.ndarray) or isinstance(r, np.generic):
            return AVal(tuple(shape), np.result_type(r))
        if isinstance(r, (bool, int, float, complex)):
            return AVal(tuple(shape), np.dtype(type(r)), weak=not shape)
        return None

    def _infer_generic(self, eqn):
        prim = eqn.prim
        if prim.impl is None and prim.name not in _IMPL_BY_NAME:
            return None
        vals = {k: self.value(a, True) for k, a in eqn.args.items()}
        with np.errstate(all="ignore"):
            r = _call(prim, vals)
        if isinstance(r, np.ndarray):
            return AVal(r.shape, r.dtype)
        if isinstance(r, np.generic):
            return AVal((), r.dtype)
        if isinstance(r, (bool, int, float, complex)):
            return AVal((), np.dtype(type(r)), True)
        return None

    # -- rewriting -------------------------------------------------------------------------------

    def run(self):
        from transpile.transforms.rename import ssa
        from transpile.transforms.reverse import core_namer
        try:      # one binding per name (gradients accumulate with dx = dx + ...)
            body, outs = ssa(self.core, core_namer(self.core))
        except Exception:
            body, outs = self.core.body, self.core.outs
        for st in ir.walk_eqns(body):
            self.taken.add(st.out)
        self.multi = multi_bound(body)
        self.always_zero = always_zero(body, self.multi)
        self.def_locs = {st.out: st.loc for st in ir.walk_eqns(body)}
        body = self.block(body)
        outs = [self.atom(o) for o in outs]
        body = dce(body, outs)
        return body, outs

    def block(self, stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn):
                self.eqn(st, out)
            elif isinstance(st, ir.Comment):
                out.append(st)
            elif isinstance(st, ir.If):
                cond = self.atom(st.cond)
                if isinstance(cond, Const):
                    out += self.block(st.body if cond.value else st.orelse)
                else:
                    out.append(ir.If(cond, self.block(st.body), self.block(st.orelse), st.loc))
            elif isinstance(st, (ir.ForRange, ir.While)):
                out.append(specialize_loop(self, st))
            elif isinstance(st, ir.Push):
                out.append(specialize_push(self, st))
            else:
                out.append(st)
        return out

    def alias(self, eqn, atom):
        self.subst[eqn.out] = atom
        if isinstance(atom, Var) and atom.name in self.avals:
            self.avals[eqn.out] = self.avals[atom.name]

    def eqn(self, st, out):
        args = {k: map_atoms(v, self.atom) for k, v in st.args.items()}
        eqn = resolve_if_array(self, Eqn(st.out, st.prim, args, st.loc), out)
        args = eqn.args
        name = eqn.prim.name
        if eqn.out in self.always_zero:      # every binding is the constant 0 (an adjoint reset)
            self.subst[eqn.out] = self.always_zero[eqn.out]
            return
        note_copy(self, eqn)
        note_offset(self, eqn)
        if eqn.out in self.multi:
            # bound more than once: never folded or aliased; its value is the join
            old = self.avals.get(eqn.out)
            av = self.infer(eqn)           # (may read its own old value: x_2 = x_2)
            self.avals.pop(eqn.out, None)
            if old is not None:
                self.avals[eqn.out] = old
            bind_joined(self, eqn, av)
            out.append(eqn)
            return
        rewrite = getattr(self, "rw_" + name, None) if self.rewrite else None
        if rewrite is None and self.rewrite and name in BATCH_REWRITES:
            rewrite = BATCH_REWRITES[name].__get__(self)
        if rewrite is not None:
            try:
                if rewrite(eqn, out):
                    return
            except _Unknown:
                pass
        if name in _ALIAS:
            return self.alias(eqn, args["x"])
        av = self.infer(eqn)
        atoms = list(ir.iter_atoms(args.values()))
        all_const = atoms and all(isinstance(a, Const) for a in atoms)
        # fold what the shapes alone decide (x.shape, len(x)) and what only reads constants;
        # int(v), bool(v), float(v), range(n) of a run-time value are never folded: the
        # stand-in values used for shapes are not the data
        if eqn.prim.pure and (name in _QUERY or (all_const and (av is None or not av.shape))):
            try:
                vals = {k: self.value(a, True) for k, a in args.items()}
                r = _call(eqn.prim, vals)
                if isinstance(r, np.dtype):
                    r = r.type
                if isinstance(r, np.generic) and not all_const:
                    r = None
                if ir.is_literal(r) and not isinstance(r, str) and r is not None:
                    if isinstance(r, tuple):
                        r = tuple(int(v) if isinstance(v, (int, np.integer)) else v for v in r)
                    elif isinstance(r, np.integer):
                        r = int(r)
                    self.subst[eqn.out] = Const(r)
                    return
            except Exception:
                pass
        if av is None and all(isinstance(a, Const) for a in ir.iter_atoms(args.values())):
            pass
        out.append(eqn)

    # each rw_<prim> returns True when it replaced the equation

    def rw_check_scalar_output(self, eqn, out):
        av = self.aval(eqn.args["out"])
        if av is None:
            return False
        holo = eqn.args.get("holomorphic", Const(False))
        runtime.check_scalar_output(dummy(av, True), eqn.args["fname"].value,
                                    isinstance(holo, Const) and bool(holo.value))
        self.subst[eqn.out] = Const(av.dtype.type(1) if not av.shape else av.dtype.type(1))
        if av.shape:
            return self._bcast(eqn, out, Const(av.dtype.type(1)), av.shape)
        return True

    def _bcast(self, eqn, out, x, shape):
        self.subst.pop(eqn.out, None)
        self.emit(out, BCAST, {"x": x, "shape": Const(tuple(shape))}, eqn.loc, name=eqn.out)
        return True

    def rw_unbroadcast(self, eqn, out):
        g, x = eqn.args["ct"], eqn.args["x"]
        ga, xa = self.aval(g), self.aval(x)
        if ga is None or xa is None:
            return False
        if ga.shape == xa.shape:
            self.alias(eqn, g)
            return True
        extra = ga.ndim - xa.ndim
        axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(xa.shape)
                                           if n == 1 and ga.shape[i + extra] != 1)
        if not axes:
            return self._reshape(eqn, out, g, xa.shape)
        if len(axes) == ga.ndim:
            s = self.emit(out, by_name("sum"), {"x": g}, eqn.loc, base=eqn.out)
        else:
            s = self.emit(out, by_name("sum"), {"x": g, "axis": Const(axes)}, eqn.loc,
                          base=eqn.out)
        if self.aval(s).shape == xa.shape:
            self.alias(eqn, s)
            return True
        return self._reshape(eqn, out, s, xa.shape)

    def _reshape(self, eqn, out, x, shape):
        self.emit(out, by_name("reshape"), {"x": x, "shape": Const(tuple(shape))}, eqn.loc,
                  name=eqn.out)
        return True

    def rw_broadcast_like(self, eqn, out):
        t, like = eqn.args["t"], eqn.args["like"]
        ta, la = self.aval(t), self.aval(like)
        if ta is None or la is None:
            return False
        if ta.shape == la.shape:
            self.alias(eqn, t)
            return True
        return self._bcast(eqn, out, t, la.shape)

    def rw_broadcast_to(self, eqn, out):
        x, shape = eqn.args["x"], eqn.args["shape"]
        if not isinstance(shape, Const) or self.aval(x) is None:
            return False
        shape = shape.value if isinstance(shape.value, tuple) else (shape.value,)
        if self.aval(x).shape == tuple(shape):
            self.alias(eqn, x)
            return True
        return self._bcast(eqn, out, x, shape)

    def rw_sum_grad(self, eqn, out):
        ct, x = eqn.args["ct"], eqn.args["x"]
        axis = eqn.args.get("axis", Const(None))
        keepdims = eqn.args.get("keepdims", Const(False))
        ca, xa = self.aval(ct), self.aval(x)
        if ca is None or xa is None or not isinstance(axis, Const) or \
                not isinstance(keepdims, Const):
            return False
        if ca.shape == xa.shape:
            self.alias(eqn, ct)
            return True
        if not keepdims.value and ca.shape:
            axes = _norm_axes(axis.value, xa.ndim)
            kshape = tuple(1 if i in axes else n for i, n in enumerate(xa.shape))
            ct = self.emit(out, by_name("reshape"), {"x": ct, "shape": Const(kshape)}, eqn.loc,
                           base=eqn.out)
        return self._bcast(eqn, out, ct, xa.shape)

    def _broadcast_back(self, out, ct, xa, axis, keepdims, loc, base):
        ca = self.aval(ct)
        if ca.shape == xa.shape:
            return ct
        if not keepdims and ca.shape:
            axes = _norm_axes(axis, xa.ndim)
            kshape = tuple(1 if i in axes else n for i, n in enumerate(xa.shape))
            ct = self.emit(out, by_name("reshape"), {"x": ct, "shape": Const(kshape)}, loc,
                           base=base)
        return self.emit(out, BCAST, {"x": ct, "shape": Const(tuple(xa.shape))}, loc, base=base)

    def rw_extremum_mask(self, eqn, out):
        x, ans = eqn.args["x"], eqn.args["ans"]
        axis = eqn.args.get("axis", Const(None))
        keep = eqn.args.get("keepdims", Const(False))
        xa, aa = self.aval(x), self.aval(ans)
        if xa is None or aa is None or not isinstance(axis, Const) or not isinstance(keep, Const):
            return False
        b = self._broadcast_back(out, ans, xa, axis.value, keep.value, eqn.loc, eqn.out)
        hit = self.emit(out, by_name("equal"), {"x": x, "y": b}, eqn.loc, base=eqn.out)
        dt = np.result_type(xa.dtype, aa.dtype)
        hitf = self.emit(out, by_name("astype"), {"x": hit, "dtype": Const(dt.type)}, eqn.loc,
                         base=eqn.out)
        cnt = self._reduce(out, "sum", hitf, axis.value, True, eqn.loc, eqn.out)
        self.emit(out, by_name("divide"), {"x": hitf, "y": cnt}, eqn.loc, name=eqn.out)
        return True

    def rw_reduced_count(self, eqn, out):
        xa = self.aval(eqn.args["x"])
        axis = eqn.args.get("axis", Const(None))
        if xa is None or not isinstance(axis, Const):
            return False
        n = 1
        for a in _norm_axes(axis.value, xa.ndim):
            n *= xa.shape[a]
        self.subst[eqn.out] = Const(int(n))
        return True

    def rw_cast_like(self, eqn, out):
        t, x = eqn.args["t"], eqn.args["x"]
        ta, xa = self.aval(t), self.aval(x)
        if ta is None or xa is None:
            return False
        if ta.dtype == xa.dtype and not ta.weak:
            self.alias(eqn, t)
            return True
        self.emit(out, by_name("astype"), {"x": t, "dtype": Const(xa.dtype.type)}, eqn.loc,
                  name=eqn.out)
        return True

    def rw_add(self, eqn, out):
        return rw_add_zero(self, eqn, out)

    def rw_float_part(self, eqn, out):
        return rw_float_part(self, eqn, out)

    def rw_cast_into(self, eqn, out):
        return rw_cast_into(self, eqn, out)

    def rw_grad_like(self, eqn, out):
        ta, xa = self.aval(eqn.args["t"]), self.aval(eqn.args["x"])
        if ta is None or xa is None:
            return False
        if not np.issubdtype(xa.dtype, np.inexact) or ta.dtype == xa.dtype or \
                np.issubdtype(ta.dtype, np.complexfloating):
            self.alias(eqn, eqn.args["t"])
            return True
        return self.rw_cast_like(eqn, out)

    def rw_match_complex(self, eqn, out):
        """Real x: the real part of t (t itself when t is real); complex x: t."""
        ta, xa = self.aval(eqn.args["t"]), self.aval(eqn.args["x"])
        if ta is None or xa is None:
            return False
        if np.issubdtype(xa.dtype, np.complexfloating) or \
                not np.issubdtype(ta.dtype, np.complexfloating):
            self.alias(eqn, eqn.args["t"])
            return True
        self.emit(out, by_name("real"), {"x": eqn.args["t"]}, eqn.loc, name=eqn.out)
        return True

    def rw_abs_factor(self, eqn, out):
        """Real x: np.sign(x)."""
        xa = self.aval(eqn.args["x"])
        if xa is None or np.issubdtype(xa.dtype, np.complexfloating):
            return False
        self.emit(out, by_name("sign"), {"x": eqn.args["x"]}, eqn.loc, name=eqn.out)
        return True

    def rw_angle_jvp(self, eqn, out):
        """Real x: np.angle is piecewise constant, its tangent (and cotangent) zeros."""
        t, x = (eqn.args.get("t", eqn.args.get("ct")), eqn.args["x"])
        ta, xa = self.aval(t), self.aval(x)
        if ta is None or xa is None or np.issubdtype(xa.dtype, np.complexfloating):
            return False
        dtype = np.result_type(ta.dtype, xa.dtype) if "ct" in eqn.args else ta.dtype
        shape = np.broadcast_shapes(ta.shape, xa.shape)
        if not shape:
            self.subst[eqn.out] = Const(np.dtype(dtype).type(0))
            return True
        return self._bcast(eqn, out, Const(np.dtype(dtype).type(0)), shape)

    rw_angle_vjp = rw_angle_jvp

    def rw_astype(self, eqn, out):
        xa = self.aval(eqn.args["x"])
        d = eqn.args.get("dtype")
        if xa is None or not isinstance(d, Const):
            return False
        if xa.shape and np.dtype(d.value) == xa.dtype:
            self.alias(eqn, eqn.args["x"])
            return True
        return False

    def rw_transpose_back(self, eqn, out):
        xa = self.aval(eqn.args["x"])
        axes = eqn.args.get("axes", Const(None))
        if xa is None or not isinstance(axes, Const):
            return False
        args = {"x": eqn.args["x"]}
        if axes.value is not None:
            args["axes"] = Const(tuple(int(i) for i in np.argsort(axes.value)))
        self.emit(out, by_name("transpose"), args, eqn.loc, name=eqn.out)
        return True

    def rw_mT(self, eqn, out):
        xa = self.aval(eqn.args["x"])
        if xa is None or xa.ndim < 2:
            return False
        axes = tuple(range(xa.ndim - 2)) + (xa.ndim - 1, xa.ndim - 2)
        self.emit(out, by_name("transpose"), {"x": eqn.args["x"], "axes": Const(axes)}, eqn.loc,
                  name=eqn.out)
        return True

    def _T(self, out, x, loc):
        xa = self.aval(x)
        if xa.ndim < 2:
            return x
        return self.emit(out, by_name("transpose"), {"x": x}, loc, base="tr")

    def _matmul_vjp(self, eqn, out, side):
        ct, x, y = eqn.args["ct"], eqn.args["x"], eqn.args["y"]
        xa, ya = self.aval(x), self.aval(y)
        if xa is None or ya is None or xa.ndim > 2 or ya.ndim > 2 or xa.ndim == 0 or ya.ndim == 0:
            return False
        mm, mul, outer = by_name("matmul"), by_name("multiply"), by_name("outer")
        loc, name = eqn.loc, eqn.out
        if xa.ndim == 1 and ya.ndim == 1:
            self.emit(out, mul, {"x": ct, "y": y if side == "left" else x}, loc, name=name)
        elif side == "left":
            if ya.ndim == 1:      # x (m,k) y (k,): ct (m,)
                self.emit(out, outer, {"x": ct, "y": y}, loc, name=name)
            elif xa.ndim == 1:    # x (k,) y (k,n): ct (n,)
                self.emit(out, mm, {"x": y, "y": ct}, loc, name=name)
            else:
                self.emit(out, mm, {"x": ct, "y": self._T(out, y, loc)}, loc, name=name)
        else:
            if xa.ndim == 1:      # x (k,) y (k,n): ct (n,)
                self.emit(out, outer, {"x": x, "y": ct}, loc, name=name)
            else:                 # x (m,k): x.T @ ct
                self.emit(out, mm, {"x": self._T(out, x, loc), "y": ct}, loc, name=name)
        return True

    def rw_matmul_vjp_left(self, eqn, out):
        return self._matmul_vjp(eqn, out, "left")

    def rw_matmul_vjp_right(self, eqn, out):
        return self._matmul_vjp(eqn, out, "right")

    def rw_dot_vjp_left(self, eqn, out):
        return self._matmul_vjp(eqn, out, "left")

    def rw_dot_vjp_right(self, eqn, out):
        return self._matmul_vjp(eqn, out, "right")

    def rw_dot(self, eqn, out):
        xa, ya = self.aval(eqn.args["x"]), self.aval(eqn.args["y"])
        if xa is None or ya is None:
            return False
        if xa.ndim == 0 or ya.ndim == 0:
            self.emit(out, by_name("multiply"), dict(eqn.args), eqn.loc, name=eqn.out)
            return True
        if xa.ndim <= 2 and ya.ndim <= 2:
            self.emit(out, by_name("matmul"), dict(eqn.args), eqn.loc, name=eqn.out)
            return True
        return False

    def rw_check_norm_ord(self, eqn, out):
        o = eqn.args.get("ord", Const(None))
        xa = self.aval(eqn.args["x"])
        if not isinstance(o, Const) or xa is None:
            return False
        runtime.check_norm_ord(dummy(xa, True), o.value)
        self.alias(eqn, eqn.args["x"])
        return True

    def rw_norm(self, eqn, out):
        x = eqn.args["x"]
        o = eqn.args.get("ord", Const(None))
        axis = eqn.args.get("axis", Const(None))
        keep = eqn.args.get("keepdims", Const(False))
        xa = self.aval(x)
        if xa is None or not all(isinstance(a, Const) for a in (o, axis, keep)):
            return False
        if o.value is not None and not (o.value == 2 and (xa.ndim == 1 or
                                                          isinstance(axis.value, int))):
            return False
        sq = self.emit(out, by_name("multiply"), {"x": x, "y": x}, eqn.loc, base=eqn.out)
        s = self._reduce(out, "sum", sq, axis.value, keep.value, eqn.loc, eqn.out)
        self.emit(out, by_name("sqrt"), {"x": s}, eqn.loc, name=eqn.out)
        return True

    def _reduce(self, out, kind, x, axis, keepdims, loc, base):
        args = {"x": x}
        if axis is not None:
            args["axis"] = Const(axis)
        if keepdims:
            args["keepdims"] = Const(True)
        return self.emit(out, by_name(kind), args, loc, base=base)

    def _moments(self, eqn, out, root):
        x = eqn.args["x"]
        axis = eqn.args.get("axis", Const(None))
        keep = eqn.args.get("keepdims", Const(False))
        ddof = eqn.args.get("ddof", Const(0))
        dt = eqn.args.get("dtype", Const(None))
        xa = self.aval(x)
        if xa is None or not all(isinstance(a, Const) for a in (axis, keep, ddof, dt)) \
                or dt.value is not None or not np.issubdtype(xa.dtype, np.floating):
            return False
        axes = _norm_axes(axis.value, xa.ndim)
        n = 1
        for a in axes:
            n *= xa.shape[a]
        m = self._reduce(out, "mean", x, axis.value, True, eqn.loc, eqn.out)
        d = self.emit(out, by_name("subtract"), {"x": x, "y": m}, eqn.loc, base=eqn.out)
        d2 = self.emit(out, by_name("multiply"), {"x": d, "y": d}, eqn.loc, base=eqn.out)
        s = self._reduce(out, "sum", d2, axis.value, keep.value, eqn.loc, eqn.out)
        kw = dict(name=eqn.out) if not root else dict(base=eqn.out)
        v = self.emit(out, by_name("divide"), {"x": s, "y": Const(float(n - ddof.value))},
                      eqn.loc, **kw)
        if root:
            self.emit(out, by_name("sqrt"), {"x": v}, eqn.loc, name=eqn.out)
        return True

    def rw_var(self, eqn, out):
        return self._moments(eqn, out, False)

    def rw_std(self, eqn, out):
        return self._moments(eqn, out, True)


class _Unknown(Exception):
    pass


_IMPL_BY_NAME = {}


def _call(prim, vals):
    if prim.name == "getitem" and isinstance(vals.get("x"), (tuple, list)):
        idx = vals["index"]
        return vals["x"][idx[0] if isinstance(idx, tuple) and len(idx) == 1 else idx]
    impl = prim.impl
    if impl is None:
        impl = _runtime_impl(prim)
    pos, kw = [], {}
    gap = False
    for p in prim.params:
        if p.name not in vals:
            gap = True
            continue
        if p.kind == "var":
            pos += list(vals[p.name])
        elif p.kind == "pos" and not kw and not gap:
            pos.append(vals[p.name])
        else:
            kw[p.name] = vals[p.name]
    return impl(*pos, **kw)


def _runtime_impl(prim):
    path = prim.path
    if path.startswith("rt."):
        return getattr(runtime, path[3:])
    raise _Unknown(prim.name)


def _norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def reads(st):
    """Names a statement reads (control flow: everything inside)."""
    if isinstance(st, Eqn):
        return st.vars_read()
    if isinstance(st, ir.Push):
        return ir.names_read(st)
    names = []
    for f in ("cond", "start", "stop", "step"):
        v = getattr(st, f, None)
        if isinstance(v, Var):
            names.append(v.name)
    for f in ("body", "orelse", "cond_body"):
        for s in getattr(st, f, None) or []:
            names += reads(s)
    return names


def dce(body, outs):
    """Drop equations whose results are never read (all primitives are pure)."""
    live = {o.name for o in outs if isinstance(o, Var)}
    kept = []
    for st in reversed(body):
        if isinstance(st, Eqn):
            if st.out not in live and st.prim.pure:
                continue
            live.update(st.vars_read())
        elif not isinstance(st, ir.Comment):
            live.update(reads(st))
        kept.append(st)
    kept.reverse()
    return kept


def specialize(core, in_avals):
    """(body, outs, avals) of `core` specialized to the abstract values of its parameters."""
    sp = Specializer(core, in_avals)
    body, outs = sp.run()
    return body, outs, sp.avals
