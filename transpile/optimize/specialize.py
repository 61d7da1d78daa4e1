"""Shape specialization: core Python + the shapes/dtypes of its parameters -> core Python where
every value's abstract value (shape, dtype) is known, shape queries are constants, and runtime
helpers that only exist because shapes were unknown are gone.

Here: the Specializer (abstract evaluation of every equation, folding of shape queries, the
walk over blocks), `specialize` and dead-code elimination. The rewrites of single primitives
are plain functions `rw_<primitive>(sp, eqn, out)` looked up in `REWRITES`:

    optimize/specialize_rewrites.py   derivative helpers (unbroadcast, sum_grad, ...), linear algebra
                             (matmul_vjp_*, dot, norm, mT), reductions (var, std)
    optimize/specialize_control.py    control flow (joins over branches and loops, tapes, if_array)
    optimize/specialize_batch.py      vmap's run-time helpers (rt.batch_*)

Abstract values (AVal) are in core/avals.py. The result is what `jit` lowers (transpile/lowering/)
and what fusion groups (optimize/fusion.py).
"""
import re
from collections import Counter

import numpy as np

import transpile_runtime as runtime
from transpile.core import ir
from transpile.optimize.shape_errors import shape_mismatch
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var, map_atoms
from transpile.primitives.internal.control import written_part, setitem, tape_pop, write_in_place
from transpile.primitives.registry import by_name
from transpile.core.avals import AVal, aval_of, dummy
from transpile.core.liveness import dce
from transpile.optimize.specialize_control import (resolve_if_array, AvalMap, bind_joined, multi_bound,
                                                     dynamic_slice, pop_aval, rw_cast_into,
                                                     sized_by_run_time_int, collective_aval,
                                                     collective_of_unsized,
                                                     always_zero, rw_add_zero, join_unsized,
                                                     zero_tolerant,
                                                     rw_float_part,
                                                     specialize_loop, specialize_push)
from transpile.optimize.specialize_batch import REWRITES as BATCH_REWRITES, note_copy
from transpile.optimize.specialize_rewrites import BCAST, REWRITES as _RULES
from transpile.optimize.specialize_windows import (has_run_time_slice, note_offset,
                                                     scatter_aval, window_aval)
from transpile.core.rename import ssa
from transpile.ad.reverse import core_namer
from transpile.primitives.internal.adjoint_helpers import (clip_mask, getitem_vjp, identity,
                                                  select_weight, stop_gradient)
from transpile.primitives.internal.adjoint_helpers import unbroadcast as _UNBROADCAST
from transpile.primitives.numpy.arrays import repeat
from transpile.primitives.numpy.nondiff import zeros, zeros_like
from transpile.primitives.numpy.products import dot, matmul
from transpile.primitives.numpy.structure import getitem

__all__ = ["AVal", "aval_of", "dummy", "BCAST", "Specializer", "specialize", "REWRITES"]

# row -> rw_<row name>(sp, eqn, out), True when it replaced the equation
REWRITES = {by_name(name): rule for name, rule in {
    **_RULES, "add": rw_add_zero, "float_part": rw_float_part, "cast_into": rw_cast_into,
    **BATCH_REWRITES}.items()}


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


_ASSIGN = by_name("assign")
# counts of elements: folded to an ir.SizeConst that remembers the sizes it multiplies; shapes
# to an ir.ShapeConst, whose items (x.shape[0]) and len(x) are SizeConsts as well
_COUNTS = (by_name("size"), by_name("attr_size"), by_name("reduced_count"))
_SHAPES = (by_name("shape"), by_name("attr_shape"))
_GETITEM, _LEN, _RESHAPE = by_name("getitem"), by_name("len"), by_name("reshape")


class Specializer:
    rewrite = True      # False: only infer shapes and fold queries (used while normalizing)
    standins_for_unsized = False   # value() of a value of unknown length: a stand-in (only
    # while typing what reads it, never for folding a query)

    def __init__(self, core, in_avals):
        self.core = core
        self.avals = AvalMap()   # name -> AVal (and .conflicts: names with no single type)
        self.unsized = self.avals.unsized   # name -> AVal (rank, dtype) of a value whose
        # length depends on the data (the lowering reads its length at run time)
        self.none_bound = set()  # multiply bound names bound to the constant None somewhere
        self.zero_names = {}     # multiply bound names whose scalar values so far are all 0
        self.multi = set()       # names bound more than once (branch joins, loop-carried)
        self.always_zero = {}    # ... every time to the constant 0: name -> that Const
        self.zero_tolerant = set()   # names whose 0 may be any broadcastable zero array
        self.zero_bcasts = {}    # name -> its Eqn broadcasting the constant 0 over the batch
        self.known_zeros = set()  # names bound once, to zeros
        self.zero_first = {}     # join name -> the zero_bcasts name it was first bound to
        self.reads = Counter()   # name -> how many statements read it
        self.subst = {}          # name -> atom
        self.top_eqns = None     # names bound at the top level of the body (set by run)
        self.fails_nested = None  # (eqn, ShapeMismatch) found in a branch or loop body
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
            if av is None and self.standins_for_unsized and a.name in self.unsized:
                return dummy(self.unsized[a.name], True)   # (its type, never its length)
            if av is None:
                raise _Unknown(a.name)
            return dummy(av, full)
        if isinstance(a, TupleArg):
            vals = [self.value(x, full) for x in a.items]
            return vals if a.kind == "list" else tuple(vals)
        if isinstance(a, IndexArg):
            items = []
            for it in _tuple_index(a).items:
                if isinstance(it, SliceArg):
                    # (typing a slice of run-time length: the whole axis, never an empty
                    # stand-in a reduction would refuse)
                    items.append(slice(*[None if x is None or self.standins_for_unsized and
                                         isinstance(x, Var) else self.value(x)
                                         for x in (it.lower, it.upper, it.step)]))
                elif isinstance(it, Var) and self.avals.get(it.name) is not None and \
                        not self.avals[it.name].shape and \
                        self.avals[it.name].dtype.kind in "iu":
                    # an integer known at run time (a loop index): 0, inside any axis the
                    # result could come from (1 is past the end of an axis of length 1)
                    items.append(0)
                elif isinstance(it, Var) and self.avals.get(it.name) is not None and \
                        self.avals[it.name].dtype.kind in "iu":
                    # an index array made at run time (`A[[k, p]]` of a 1-row A): zeros, as
                    # the integers above (ones are past the end of an axis of length 1)
                    items.append(np.zeros(self.avals[it.name].shape, self.avals[it.name].dtype))
                elif isinstance(it, (Var, Const)):
                    items.append(self.value(it, True))
                elif isinstance(it, TupleArg):
                    # x[[k, p]]: a list of integers, some known at run time (0 stands in)
                    vals = [0 if isinstance(x, Var) and self.avals.get(x.name) is not None and
                            not self.avals[x.name].shape and
                            self.avals[x.name].dtype.kind in "iu" else self.value(x, True)
                            for x in it.items]
                    items.append(vals if it.kind == "list" else tuple(vals))
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
        self.unsized.pop(eqn.out, None)
        self.avals.unsized_shapes.pop(eqn.out, None)
        prim = eqn.prim
        args = eqn.args
        if prim is tape_pop:
            av = pop_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        if prim in (getitem_vjp, setitem, write_in_place) and (
                has_run_time_slice(eqn) or self._reads_unsized(eqn)):
            # (x's shape, whatever the written part's length)
            av = scatter_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            elif prim is not getitem_vjp and isinstance(args.get("x"), Var) and \
                    args["x"].name in self.unsized:
                # a write into a value of run-time length: that value, as it was
                self.unsized[eqn.out] = self.unsized[args["x"].name]
                self.avals.pop(eqn.out, None)
            elif prim is getitem_vjp and isinstance(args.get("x"), Var) and \
                    args["x"].name in self.unsized:
                # the cotangent of a read of a value of run-time length: that value's rank
                ct = args["ct"]
                ct_av = (self.unsized.get(ct.name) or self.avals.get(ct.name)) \
                    if isinstance(ct, Var) else aval_of(ct.value)
                if ct_av is None:
                    return None
                self.unsized[eqn.out] = AVal(self.unsized[args["x"].name].shape, ct_av.dtype)
                self.avals.pop(eqn.out, None)
            return av
        if dynamic_slice(eqn):      # x[i:i + 3]: a fixed-length window, or shape unknown
            try:
                av = window_aval(self, eqn)
            except _Unknown:        # a bound of no known type yet
                av = None
            if av is not None:
                self.avals[eqn.out] = av
                return av
            # x[:i], L[i, :i]: a length read at run time
            return self._unsized_result(eqn)
        if prim in (setitem, write_in_place) and _masked(self, eqn, writes=True):
            # x[mask] = v keeps x's shape and dtype (a stand-in mask, all true, would not
            # fit a v of as many values as the real mask has true ones)
            xav = self.aval(args["x"])
            if xav is not None and xav.shape:
                self.avals[eqn.out] = xav
                return xav
        if prim.data_shape or _masked(self, eqn):
            # the shape depends on the values: never guessed from stand-ins (the rank and
            # dtype are kept aside: a reduction of every element is a scalar all the same)
            return self._unsized_result(eqn)
        if prim is _GETITEM and isinstance(args.get("x"), Var) and \
                args["x"].name in self.avals.unsized_shapes:
            return self._run_time_size(eqn)
        if prim is _RESHAPE and isinstance(args.get("shape"), Var) and \
                args["shape"].name in self.avals.unsized_shapes:
            return self._reshaped_to_run_time_shape(eqn)
        if self._reads_unsized(eqn):
            if prim.shape_from is not None:     # the shape of an argument of known shape
                return self._shaped_from(eqn)
            if prim in _SHAPES:      # x.shape of a value of run-time length: read at run time
                self.avals.unsized_shapes[eqn.out] = self.unsized[args["x"].name].ndim
                return None
            if self._unbroadcast_to_unsized(eqn):
                return None
            return self._full_reduction(eqn) or self._gather_from_unsized(eqn) or \
                self._unbroadcast_unsized(eqn) or self._reshaped_to_known(eqn) or \
                self._unsized_result(eqn)
        if sized_by_run_time_int(self, eqn):
            # np.zeros(n), np.arange(-r, r + 1), x.reshape(n, -1): the int's value sets the
            # lengths, never the rank or dtype: those are kept, the lengths read at run time
            # (an element read, a reduction of it is then a scalar of known type)
            if prim.pure:
                return self._unsized_result(eqn)
            return None       # its shape depends on values known only at run time
        if not prim.pure:
            # Never run a collective to learn its shape: it would wait at a barrier for the
            # other shards (which may be waiting for this compile).
            av = collective_aval(self, eqn)
            if av is not None:
                self.avals[eqn.out] = av
            return av
        try:
            if prim.elementwise or prim.fusable or prim in (clip_mask, select_weight):
                av = self._infer_elementwise(eqn)
            else:
                av = self._infer_generic(eqn)
        except _Unknown:
            av = None
        except Exception as e:  # a value the stand-ins cannot reproduce: shape unknown
            av = self._element_of_empty(eqn)
            if av is not None:      # x[i] of an empty x (a loop that runs no iteration)
                self.avals[eqn.out] = av
                return av
            if eqn.out in getattr(self, "runs_first", ()):
                mismatch = shape_mismatch(self, eqn, e)    # operands that never fit: fail now
                if mismatch is not None:
                    raise mismatch from None
            elif eqn.out in getattr(self, "top_level", ()) and self.fails_here is None:
                # after a check of the user's (which may raise first): the call fails here
                mismatch = shape_mismatch(self, eqn, e)
                if mismatch is not None:
                    self.fails_here = (eqn, mismatch)
            elif self.top_eqns is not None and eqn.out not in self.top_eqns \
                    and eqn.out not in self.multi and \
                    not any(isinstance(a, Var) and a.name in self.multi for a in args.values()):
                # in a branch or loop, on values bound once: it fails whenever it runs
                mismatch = shape_mismatch(self, eqn, e)
                if mismatch is not None:
                    self.fails_nested = (eqn, mismatch)
            av = None
        if av is not None:
            self.avals[eqn.out] = av
        return av

    def _element_of_empty(self, eqn):
        """x[i] (integer indices only) of an x with a zero-length axis, or a write there: the
        stand-in has no element, but the read's type is x's dtype and its remaining axes (a
        write keeps x's)."""
        x, index = eqn.args.get("x"), eqn.args.get("index")
        writes = eqn.prim in (setitem, write_in_place)
        if not (eqn.prim is _GETITEM or writes) or not isinstance(x, Var) or \
                not isinstance(index, IndexArg):
            return None
        xav = self.avals.get(x.name)
        if xav is None or 0 not in xav.shape or len(index.items) > len(xav.shape):
            return None
        for it in index.items:
            av = self.aval(it) if isinstance(it, (Var, Const)) else None
            if av is None or av.shape or av.dtype.kind not in "iu":
                return None
        return xav if writes else AVal(tuple(xav.shape[len(index.items):]), xav.dtype)

    def _run_time_size(self, eqn):
        """x.shape[k] of a value of run-time length: a Python int (as the folded sizes are)."""
        index = eqn.args.get("index")
        rank = self.avals.unsized_shapes[eqn.args["x"].name]
        if isinstance(index, IndexArg) and len(index.items) == 1 and \
                isinstance(index.items[0], Const) and type(index.items[0].value) is int and \
                -rank <= index.items[0].value < rank:
            av = AVal((), np.dtype(np.int64), True)
            self.avals[eqn.out] = av
            return av
        return None

    def _reshaped_to_known(self, eqn):
        """np.reshape(u, (4,)) of a value of run-time length to a shape written out (no -1):
        that shape (its size is checked when the code runs)."""
        x, shape = eqn.args.get("x"), eqn.args.get("shape")
        if eqn.prim is not _RESHAPE or not isinstance(x, Var) or x.name not in self.unsized \
                or not isinstance(shape, Const):
            return None
        dims = shape.value if isinstance(shape.value, tuple) else (shape.value,)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
                   for d in dims):
            return None
        av = AVal(tuple(int(d) for d in dims), self.unsized[x.name].dtype)
        self.avals[eqn.out] = av
        return av

    def _reshaped_to_run_time_shape(self, eqn):
        """np.reshape(v, np.shape(u)), u of run-time length (the cotangent of np.outer's
        operand): u's rank, v's dtype; the sizes are checked when the code runs."""
        x = eqn.args.get("x")
        xa = (self.avals.get(x.name) or self.unsized.get(x.name)) if isinstance(x, Var) \
            else None
        if xa is None:
            return None
        rank = self.avals.unsized_shapes[eqn.args["shape"].name]
        self.unsized[eqn.out] = AVal((1,) * rank, xa.dtype)
        self.avals.pop(eqn.out, None)
        return None

    def _reads_unsized(self, eqn):
        return any(isinstance(a, Var) and a.name in self.unsized
                   for a in ir.iter_atoms(eqn.args.values()))

    def _shaped_from(self, eqn):
        """A row whose result has the shape of its argument `shape_from` (known) whatever the
        run-time lengths it reads: that shape, with the dtype the stand-ins give."""
        like = eqn.args.get(eqn.prim.shape_from)
        like_av = self.aval(like) if isinstance(like, (Var, Const)) else None
        if like_av is None:
            return self._unsized_result(eqn)
        self.standins_for_unsized = True
        try:
            vals = {k: self.value(a, True) for k, a in eqn.args.items()}
            with np.errstate(all="ignore"):
                dtype = np.result_type(_call(eqn.prim, vals))
        except Exception:   # (stand-in lengths that do not fit: the others' dtypes)
            others = [self.unsized.get(a.name) or self.avals.get(a.name)
                      for k, a in eqn.args.items() if isinstance(a, Var) and
                      k not in eqn.prim.shape_args and k != eqn.prim.shape_from]
            if not others or None in others:
                return None
            dtype = np.result_type(*[o.dtype for o in others])
        finally:
            self.standins_for_unsized = False
        av = AVal(like_av.shape, dtype)
        self.avals[eqn.out] = av
        return av

    def _unsized_effect(self, eqn):
        """A collective (or another row with effects) sized at run time: its result's rank and
        dtype when they are known without running it, else None."""
        av = collective_aval(self, eqn)
        if av is not None:
            self.avals[eqn.out] = av
            return av
        kept = collective_of_unsized(self, eqn)
        if kept is not None:
            self.unsized[eqn.out] = kept
            self.avals.pop(eqn.out, None)
        return None

    def _unsized_result(self, eqn):
        """The result of an equation whose shape depends on the data (or that reads such a
        value): a scalar's AVal (its type holds whatever the lengths), or, for an array, its
        rank and dtype kept in `unsized` (returns None: no shape is known)."""
        if not eqn.prim.pure:
            # never run an effect to learn a shape: a collective would wait at its barrier
            # for shards that wait for this compile
            return self._unsized_effect(eqn)
        self.standins_for_unsized = True
        try:
            vals = {k: self.value(a, True) for k, a in eqn.args.items()}
            with np.errstate(all="ignore"):
                r = _call(eqn.prim, vals)
        except Exception:
            if self._row_of_unsized(eqn):
                return None
            return self._element_of_unsized(eqn) or self._elementwise_of_unsized(eqn) or \
                self._product_of_unsized(eqn)
        finally:
            self.standins_for_unsized = False
        if isinstance(r, np.ndarray) and r.ndim:
            self.unsized[eqn.out] = AVal(r.shape, r.dtype)
            self.avals.pop(eqn.out, None)     # (a sized value it held before: not its length)
            return None
        if isinstance(r, (np.ndarray, np.generic)):
            av = AVal((), np.result_type(r))
        elif isinstance(r, (bool, int, float, complex)):
            av = AVal((), np.dtype(type(r)), True)
        else:
            return None
        self.avals[eqn.out] = av
        return av

    def _elementwise_of_unsized(self, eqn):
        """An elementwise row of values of run-time length whose stand-ins do not broadcast
        (sums[:n] / counts, A[:i, :i] + v): the result has the largest of their ranks and the
        dtype the row gives on one-element arrays (the lengths are checked when the code
        runs)."""
        if not eqn.prim.elementwise:
            return None
        ranks, vals = set(), {}
        for k, a in eqn.args.items():
            av = (self.unsized.get(a.name) or self.avals.get(a.name)) if isinstance(a, Var) \
                else None
            if isinstance(a, Var) and av is None:
                return None
            if av is not None and av.ndim:
                ranks.add(av.ndim)
                vals[k] = np.zeros((1,) * av.ndim, av.dtype)
            elif av is not None:
                vals[k] = np.zeros((), av.dtype)[()] if not av.weak else \
                    av.dtype.type(0).item()
            else:
                vals[k] = a.value
        if not ranks:
            return None
        try:
            with np.errstate(all="ignore"):
                r = _call(eqn.prim, vals)
        except Exception:
            return None
        rank = max(ranks)      # (operands of fewer axes broadcast against it)
        self.unsized[eqn.out] = AVal((1,) * rank, np.asarray(r).dtype)
        self.avals.pop(eqn.out, None)
        return None

    def _product_of_unsized(self, eqn):
        """np.dot(w, x[:r]) of vectors (or matrices) of run-time length whose stand-ins do not
        fit together: the rank and dtype the row gives on stand-ins of length 1 (the lowering
        checks the lengths, or refuses)."""
        if eqn.prim not in (dot, matmul):
            return None
        vals = {}
        for k, a in eqn.args.items():
            av = (self.unsized.get(a.name) or self.avals.get(a.name)) if isinstance(a, Var) \
                else None
            if isinstance(a, Var) and av is None:
                return None
            vals[k] = np.ones((1,) * av.ndim, av.dtype) if av is not None else a.value
        try:
            r = _call(eqn.prim, vals)
        except Exception:
            return None
        if np.ndim(r):
            self.unsized[eqn.out] = AVal(np.shape(r), np.asarray(r).dtype)
            self.avals.pop(eqn.out, None)
            return None
        av = AVal((), np.result_type(r))
        self.avals[eqn.out] = av
        return av

    def _unbroadcast_unsized(self, eqn):
        """rt.unbroadcast(ct, x), ct of run-time length (the cotangent of v in x[mask] = v)
        and x of known shape: x's shape in ct's dtype (ct summed over its leading axes and
        where x has length 1; the lengths checked when the code runs)."""
        ct, x = eqn.args.get("ct"), eqn.args.get("x")
        if eqn.prim is not _UNBROADCAST or not isinstance(ct, Var) or \
                ct.name not in self.unsized:
            return None
        xa, ca = self.aval(x), self.unsized[ct.name]
        if xa is None or xa.ndim > ca.ndim:
            return None
        av = AVal(tuple(xa.shape), ca.dtype)
        self.avals[eqn.out] = av
        return av

    def _unbroadcast_to_unsized(self, eqn):
        """rt.unbroadcast(ct, x), x of run-time length (the cotangent of an operand of
        np.concatenate's result): x's rank in ct's dtype, kept in `unsized` (True); the sums
        are decided when the code runs."""
        ct, x = eqn.args.get("ct"), eqn.args.get("x")
        if eqn.prim is not _UNBROADCAST or not isinstance(ct, Var) or \
                not isinstance(x, Var) or x.name not in self.unsized:
            return False
        ca = self.unsized.get(ct.name) or self.avals.get(ct.name)
        if ca is None or self.unsized[x.name].ndim > ca.ndim:
            return False
        self.unsized[eqn.out] = AVal(self.unsized[x.name].shape, ca.dtype)
        self.avals.pop(eqn.out, None)
        return True

    def _gather_from_unsized(self, eqn):
        """v[idx] of a vector v of run-time length, idx an integer array of known shape: an
        array of idx's shape (NumPy raises on an index past the end; so does the code)."""
        x, index = eqn.args.get("x"), eqn.args.get("index")
        if eqn.prim is not _GETITEM or not isinstance(x, Var) or x.name not in self.unsized \
                or self.unsized[x.name].ndim != 1 or not isinstance(index, IndexArg) or \
                len(index.items) != 1 or not isinstance(index.items[0], Var):
            return None
        iav = self.avals.get(index.items[0].name)
        if iav is None or not iav.shape or iav.dtype.kind not in "iu":
            return None
        av = AVal(iav.shape, self.unsized[x.name].dtype)
        self.avals[eqn.out] = av
        return av

    def _row_of_unsized(self, eqn):
        """u[i] (or u[i, j]) of an array u of run-time length with fewer integer indices than
        axes, each known only at run time (a loop index): a row of run-time length, u's
        trailing axes (the stand-in may have no rows to read). True where recorded."""
        x, index = eqn.args.get("x"), eqn.args.get("index")
        if eqn.prim is not _GETITEM or not isinstance(x, Var) or x.name not in self.unsized \
                or not isinstance(index, IndexArg):
            return False
        xu = self.unsized[x.name]
        if not 0 < len(index.items) < xu.ndim:
            return False
        for it in index.items:
            av = self.aval(it) if isinstance(it, (Var, Const)) else None
            if av is None or av.shape or av.dtype.kind not in "iu":
                return False
        self.unsized[eqn.out] = AVal(xu.shape[len(index.items):], xu.dtype)
        self.avals.pop(eqn.out, None)
        return True

    def _element_of_unsized(self, eqn):
        """u[i] of a vector u of run-time length, i an integer known only at run time (a loop
        index): an element of u's dtype."""
        x, index = eqn.args.get("x"), eqn.args.get("index")
        if eqn.prim is not _GETITEM or not isinstance(x, Var) or x.name not in self.unsized \
                or not isinstance(index, IndexArg):
            return None
        xu = self.unsized[x.name]
        for it in index.items:
            av = self.aval(it) if isinstance(it, (Var, Const)) else None
            if av is None or av.shape or av.dtype.kind not in "iu":
                return None
        if len(index.items) != xu.ndim:
            return None
        av = AVal((), xu.dtype)
        self.avals[eqn.out] = av
        return av

    def _full_reduction(self, eqn):
        """A reduction over every element (axis=None) of a value whose length depends on the
        data: a scalar of the dtype the stand-ins give."""
        axis = eqn.args.get("axis", Const(None))
        keep = eqn.args.get("keepdims", Const(False))
        if eqn.prim.param("axis") is None or not (isinstance(axis, Const) and axis.value is None) \
                or not (isinstance(keep, Const) and not keep.value):
            return None
        vals = {}
        for k, a in eqn.args.items():
            if isinstance(a, Var) and a.name in self.unsized:
                vals[k] = dummy(self.unsized[a.name], True)
            else:
                try:
                    vals[k] = self.value(a, True)
                except _Unknown:
                    return None
        try:
            with np.errstate(all="ignore"):
                r = _call(eqn.prim, vals)
        except Exception:
            return None
        if isinstance(r, (np.ndarray, np.generic)) and np.ndim(r) == 0:
            av = AVal((), np.result_type(r))
            self.avals[eqn.out] = av
            return av
        return None

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
            try:
                r = _call(prim, small)
            except ValueError:
                # the stand-ins raise where some values may too (an integer array to the
                # power -1 raises ValueError for every element): the ufunc's result dtype
                # (an OverflowError, a Python int out of an int8's range, is left to NumPy)
                dtype = _ufunc_dtype(self, prim, args)
                if dtype is None:
                    raise
                return AVal(tuple(shape), dtype, weak=False)
        if isinstance(r, np.generic) and not shape and _all_weak(self, args):
            r = r.item()          # Python scalars in, a Python scalar out (weak, as in NumPy 2)
        if isinstance(r, np.ndarray) or isinstance(r, np.generic):
            return AVal(tuple(shape), np.result_type(r))
        if isinstance(r, (bool, int, float, complex)):
            return AVal(tuple(shape), np.dtype(type(r)), weak=not shape)
        return None

    def _infer_generic(self, eqn):
        prim = eqn.prim
        if prim.impl is None:
            return None
        vals = {k: self.value(a, True) for k, a in eqn.args.items()}
        av = _gufunc_aval(prim, vals)
        if av is not None:
            return av
        with np.errstate(all="ignore"):
            try:
                r = _call(prim, vals)
            except Exception:
                # matrices of ones are singular: np.linalg.inv/solve/cholesky learn their
                # result's shape from identity matrices instead
                r = _call(prim, {k: _regular(v) for k, v in vals.items()})
        if isinstance(r, np.ndarray):
            return AVal(r.shape, r.dtype)
        if isinstance(r, np.generic):
            return AVal((), r.dtype)
        if isinstance(r, (bool, int, float, complex)):
            return AVal((), np.dtype(type(r)), True)
        return None

    # -- rewriting -------------------------------------------------------------------------------

    def run(self):
        try:      # one binding per name (gradients accumulate with dx = dx + ...)
            body, outs = ssa(self.core, core_namer(self.core))
        except Exception:
            body, outs = self.core.body, self.core.outs
        for st in ir.walk_eqns(body):
            self.taken.add(st.out)
        for st in body:
            self.reads.update(ir.names_read(st))        # (nested statements included)
        self.multi = multi_bound(body)
        self.known_zeros = {st.out for st in ir.walk_eqns(body) if st.out not in self.multi
                            and st.prim in (zeros, zeros_like)}
        self.always_zero = always_zero(body, self.multi)
        self.zero_tolerant = zero_tolerant(body, outs)
        self.def_locs = {st.out: st.loc for st in ir.walk_eqns(body)}
        self.runs_first = runs_first(body, self.multi)
        self.top_level = {st.out for st in body if isinstance(st, Eqn) and st.out not in self.multi}
        self.fails_here = None
        self.top_eqns = {st.out for st in body if isinstance(st, Eqn)}
        self.fails_nested = None
        body = self.block(body)
        if self.fails_here is not None:
            body, outs = fails_at(self, body, *self.fails_here)
        outs = [self.atom(o) for o in outs]
        body = dce(body, outs)
        return body, outs

    def block(self, stmts):
        out = []
        for st in stmts:
            if isinstance(st, Eqn):
                self.eqn(st, out)
                failing = getattr(self, "fails_here", None)
                if failing is not None and failing[0].out == st.out:
                    break           # a shape mismatch every call reaches: the rest never runs
                nested, self.fails_nested = self.fails_nested, None
                if nested is not None and nested[0].out == st.out:
                    # a mismatch in a branch or loop: raised there, when it runs
                    out[:] = [o for o in out if not (isinstance(o, Eqn) and o.out == st.out)]
                    out.append(raise_mismatch(self, *nested))
                    break
            elif isinstance(st, ir.Comment):
                out.append(st)
            elif isinstance(st, ir.If):
                cond = self.atom(st.cond)
                if isinstance(cond, Const):
                    out += self.block(st.body if cond.value else st.orelse)
                else:
                    out.append(ir.If(cond, self.block(st.body), self.block(st.orelse), st.loc))
            elif isinstance(st, (ir.ForRange, ir.While)):
                if isinstance(st, ir.ForRange) and st.var in self.subst:
                    # a range loop that runs zero times leaves its variable as it was: the
                    # value folded into its name is bound to it again (read after the loop)
                    out.append(Eqn(st.var, by_name("assign"), {"x": self.subst[st.var]},
                                   st.loc))
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

    # results of the rewrites (optimize/specialize_rewrites.py, optimize/specialize_batch.py): eqn.out bound to
    # a broadcast / a reshape of x

    def _bcast(self, eqn, out, x, shape):
        self.subst.pop(eqn.out, None)
        self.emit(out, BCAST, {"x": x, "shape": Const(tuple(shape))}, eqn.loc, name=eqn.out)
        return True

    def _reshape(self, eqn, out, x, shape):
        self.emit(out, by_name("reshape"), {"x": x, "shape": Const(tuple(shape))}, eqn.loc,
                  name=eqn.out)
        return True

    def _list_indices(self, index, st, out):
        """x[[k, p]] with p known at run time (a row swap): the list becomes an integer array
        (np.asarray([k, p])) before the subscript, which then indexes with an array."""
        items = list(index.items)
        for n, it in enumerate(items):
            if not (isinstance(it, TupleArg) and it.kind == "list" and it.items and
                    any(isinstance(x, Var) for x in it.items)):
                continue
            avs = [self.aval(x) for x in it.items]
            if any(a is None or a.shape or a.dtype.kind not in "iu" for a in avs) or \
                    any(isinstance(x, Const) and isinstance(x.value, bool) for x in it.items):
                continue
            items[n] = self.emit(out, by_name("array"),
                                 {"x": it, "dtype": Const(np.int64)}, st.loc, base="at")
        return IndexArg(tuple(items)) if items != list(index.items) else index

    def eqn(self, st, out):
        self._eqn(st, out)
        kept = self.subst.get(st.out)
        if isinstance(kept, Var) and kept.name in self.multi:
            # st.out stands for a name bound more than once (a loop-carried value, a branch's
            # join): that name is rebound later (at the end of the loop body, on the next
            # iteration) while st.out must keep the value it has now. Substituting it would
            # read the new value (`db = db_new; da = db` for the swap `da, db = db, da + ...`
            # at the end of a loop body), so it stays a copy.
            del self.subst[st.out]
            self.avals[st.out] = self.avals.get(kept.name)
            out.append(Eqn(st.out, _ASSIGN, {"x": kept}, st.loc))

    def _eqn(self, st, out):
        args = {k: map_atoms(v, self.atom) for k, v in st.args.items()}
        if isinstance(args.get("index"), IndexArg):
            args["index"] = self._list_indices(args["index"], st, out)
        eqn = resolve_if_array(self, Eqn(st.out, st.prim, args, st.loc), out)
        args = eqn.args
        if eqn.out in self.always_zero:      # every binding is the constant 0 (an adjoint reset)
            self.subst[eqn.out] = self.always_zero[eqn.out]
            return
        note_copy(self, eqn)
        note_offset(self, eqn)
        if eqn.out in self.multi:
            # bound more than once: never folded or aliased; its value is the join
            old = self.avals.get(eqn.out)
            old_unsized = self.unsized.get(eqn.out)
            av = self.infer(eqn)           # (may read its own old value: x_2 = x_2)
            self.avals.pop(eqn.out, None)
            if old_unsized is not None or eqn.out in self.unsized:
                # a value of run-time length among its bindings: the name has one when its
                # bindings share a rank and dtype (slices of several lengths), else a conflict
                join_unsized(self, eqn, old or old_unsized, av or self.unsized.get(eqn.out))
                out.append(eqn)
                return
            if old is not None:
                self.avals[eqn.out] = old
            bind_joined(self, eqn, av)
            out.append(eqn)
            return
        rewrite = REWRITES.get(eqn.prim) if self.rewrite else None
        if rewrite is not None:
            try:
                if rewrite(self, eqn, out):
                    return
            except _Unknown:
                pass
        if eqn.prim in (identity, stop_gradient):
            return self.alias(eqn, args["x"])
        av = self.infer(eqn)
        atoms = list(ir.iter_atoms(args.values()))
        all_const = atoms and all(isinstance(a, Const) for a in atoms)
        # fold what the shapes alone decide (x.shape, len(x)) and what only reads constants;
        # int(v), bool(v), float(v), range(n) of a run-time value are never folded: the
        # stand-in values used for shapes are not the data
        if eqn.prim.pure and (eqn.prim.query or (all_const and (av is None or not av.shape))):
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
                    elif isinstance(r, np.integer) and eqn.prim.query:
                        r = int(r)      # (a size; np.int64(1) written by the user stays one)
                    self.subst[eqn.out] = self.count_const(eqn, r) or Const(r)
                    return
            except Exception:
                pass
        if av is None and all(isinstance(a, Const) for a in ir.iter_atoms(args.values())):
            pass
        out.append(eqn)


    def count_const(self, eqn, r):
        """x.size / np.size(x) / a reduction's count / x.shape[k] / len(x) as an
        ir.SizeConst, x.shape as an ir.ShapeConst (None: none of those, or an axis argument
        this does not follow)."""
        x = eqn.args.get("x")
        if any(eqn.prim is p for p in _SHAPES) and isinstance(r, tuple) \
                and all(type(n) is int for n in r):
            return ir.ShapeConst(r)
        if type(r) is not int:
            return None
        if eqn.prim is _GETITEM:
            return ir.SizeConst(r, (r,)) if isinstance(x, ir.ShapeConst) and r in x.value \
                else None
        if eqn.prim is _LEN:
            av = self.aval(x)
            return ir.SizeConst(r, (r,)) if av is not None and av.shape else None
        if not any(eqn.prim is p for p in _COUNTS):
            return None
        av = self.aval(x)
        if av is None or not av.shape:
            return None
        axis = eqn.args.get("axis", Const(None))
        if not isinstance(axis, Const):
            return None
        axes = axis.value
        if axes is None:
            axes = range(len(av.shape))
        elif isinstance(axes, int):
            axes = (axes,)
        try:
            dims = tuple(int(av.shape[a]) for a in axes)
        except (TypeError, IndexError):
            return None
        if int(np.prod(dims)) != r:
            return None
        return ir.SizeConst(r, dims)


class _Unknown(Exception):
    pass


def _tuple_index(index):
    """x[idx] with idx a tuple (for idx in np.ndindex(shape)) indexes as x[i, j]."""
    if len(index.items) == 1 and isinstance(index.items[0], TupleArg) and \
            index.items[0].kind == "tuple":
        return IndexArg(index.items[0].items)
    return index


def _masked(sp, eqn, writes=False):
    """x[mask] with a boolean array (and rt.written_part(g, mask); `writes`: the index of a
    write x[mask] = v): as many elements as the mask has True values; and np.repeat(x, counts)
    with an array of counts: as many as they add up to."""
    counts = eqn.args.get("repeats") if eqn.prim is repeat else None
    if isinstance(counts, Var) and (sp.aval(counts) is None or sp.aval(counts).shape):
        return True
    index = eqn.args.get("index") if eqn.prim is getitem or eqn.prim is written_part or \
        writes else None
    if not isinstance(index, IndexArg):
        return False
    for it in index.items:
        av = sp.aval(it) if isinstance(it, Var) else None
        if av is not None and av.shape and av.dtype == np.bool_:
            return True
    return False


_CORE = re.compile(r"\(([^)]*)\)")


def _ufunc_dtype(s, prim, args):
    """The result dtype of a one-output ufunc row for its operands' dtypes (Python scalars
    weak), without running it; None where the row is no such ufunc."""
    ufunc = prim.impl
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or len(args) != ufunc.nin:
        return None
    dtypes = []
    for p in prim.params[:ufunc.nin]:
        a = args.get(p.name)
        if isinstance(a, Const) and isinstance(a.value, (bool, int, float, complex)):
            dtypes.append(type(a.value))
            continue
        av = s.aval(a) if isinstance(a, (Var, Const)) else None
        if av is None:
            return None
        dtypes.append(av.dtype.type(0).item().__class__ if av.weak else av.dtype)
    try:
        return np.dtype(ufunc.resolve_dtypes(tuple(dtypes) + (None,))[-1])
    except Exception:
        return None


def _gufunc_aval(prim, vals):
    """The result of a generalized ufunc (np.matmul) from its signature, without running it
    on the stand-ins (NumPy multiplies zero-strided stand-ins in a slow loop: 3-16 ms per MLP
    layer, most of what generating the code of a new batch size cost). None: run it."""
    impl = prim.impl
    if not isinstance(impl, np.ufunc) or impl.signature is None or impl.nout != 1:
        return None
    names = [p.name for p in prim.params]
    if set(vals) != set(names[:impl.nin]):
        return None
    xs = [vals[n] for n in names[:impl.nin]]
    if not all(isinstance(x, np.ndarray) for x in xs):
        return None
    ins, out = impl.signature.replace(" ", "").split("->")
    specs = [[d for d in c.split(",") if d] for c in _CORE.findall(ins)]
    out_spec = [d for d in _CORE.findall(out)[0].split(",") if d]
    sizes, loops = {}, []
    for x, spec in zip(xs, specs):
        if x.ndim < len(spec):
            present = [d for d in spec if not d.endswith("?")]
            if x.ndim < len(present):
                return None
        else:
            present = spec
        k = x.ndim - len(present)
        loops.append(x.shape[:k])
        for d, n in zip(present, x.shape[k:]):
            if d.isdigit():
                if int(d) != n:
                    return None
                continue
            if sizes.setdefault(d.rstrip("?"), n) != n:
                return None            # mismatched core dimensions: running it says why
    try:
        loop = np.broadcast_shapes(*loops)
        shape = tuple(loop) + tuple(sizes[d.rstrip("?")] if not d.isdigit() else int(d)
                                    for d in out_spec if d.rstrip("?") in sizes or d.isdigit())
        tiny = impl(*[np.ones((1,) * x.ndim, x.dtype) for x in xs])
    except (ValueError, TypeError, KeyError):
        return None
    return AVal(shape, np.asarray(tiny).dtype)


def _regular(value):
    """A stand-in matrix (stack) that linear algebra accepts: identity matrices."""
    if isinstance(value, np.ndarray) and value.ndim >= 2:
        return np.broadcast_to(np.eye(value.shape[-2], value.shape[-1], dtype=value.dtype),
                               value.shape)
    return value


def _call(prim, vals):
    if not prim.pure:       # (a collective, a print, a draw: run only by the program)
        raise _Unknown(prim.name)
    if prim is getitem and isinstance(vals.get("x"), (tuple, list)):
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


def fails_at(sp, body, eqn, mismatch):
    """The top-level body cut at `eqn`, whose operands' shapes never fit (after a check of the
    user's, which may raise first): it ends with raising the mismatch (compiled code; the
    message then comes from the NumPy version, core/runtime_errors.py). outs: never reached."""
    kept = [st for st in body if not (isinstance(st, Eqn) and st.out == eqn.out)]
    kept.append(raise_mismatch(sp, eqn, mismatch))
    return kept, []


def raise_mismatch(sp, eqn, mismatch):
    """The statement raising `mismatch` in place of `eqn`."""
    return Eqn(sp.fresh("shape_error"), by_name("raise_error"),
               {"exc": Const("ValueError"), "template": Const(str(mismatch).split("\n")[0]
                                                             .replace("{", "{{")
                                                             .replace("}", "}}")),
                "values": TupleArg(())}, eqn.loc)


def runs_first(body, multi):
    """Names of the top-level equations that run on every call before any user check (an
    assert, a raise) could stop it: a shape mismatch there is an error now (optimize/shape_errors.py)."""
    names = set()
    for st in body:
        if any(e.prim.check for e in ir.walk_eqns([st])):   # the check may raise first
            break
        if isinstance(st, Eqn) and st.out not in multi:
            names.add(st.out)
    return names


def specialize(core, in_avals):
    """(body, outs, avals) of `core` specialized to the abstract values of its parameters."""
    sp = Specializer(core, in_avals)
    body, outs = sp.run()
    return body, outs, sp.avals
