"""Shapes and dtypes through control flow, for optimize/specialize.py.

After SSA (core/rename.py) the only names bound more than once are the join names of
branches (`x_3 = x_2` at the end of both paths) and loop-carried names (copied in before the
loop, copied back at the end of its body). Their abstract value is the *join* of every value
bound to them; a loop body is specialized again until the carried values stop changing (a
small lattice: two or three passes).

The join keeps NumPy's numbers exactly:

    same shape and dtype                      that value
    a Python scalar (weak) and a NumPy value  the NumPy dtype, when NumPy 2's weak promotion
      of the same or a wider kind               would have turned the scalar into it anyway
    the constant 0 and an array               the array (zeros of its shape: the 0.0 that
                                                starts an accumulator or resets an adjoint)
    anything else (an array whose shape or    no join: `Conflict`, which the lowering
      dtype changes per iteration, ...)         reports naming the user's variable and line
"""
from collections import Counter

import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var
from transpile.primitives.registry import by_name
from transpile.core.rename import _stem
from transpile.primitives.internal import control as C
from transpile.primitives.internal.collectives import axis_index, pmax, pmean, pmin, psum
from transpile.primitives.internal.adjoint_helpers import getitem_vjp
from transpile.primitives.numpy.elementwise import add
from transpile.primitives.numpy.structure import getitem
from transpile.core.avals import AVal

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


class Conflict:
    """A name whose values cannot share one Numba type."""

    def __init__(self, name, loc, first, second, none=False):
        self.name, self.loc, self.first, self.second = name, loc, first, second
        self.none = none            # one of its values is None

    def describe(self):
        if self.none:
            return (f"the variable {_stem(self.name)!r} is None on one path and a value on "
                    "another (start it as a value with a separate flag, e.g. "
                    "`found = False`)")
        if self.first is None or self.second is None:
            return (f"the shape of the variable {_stem(self.name)!r} depends on values known "
                    "only at run time (a slice with computed bounds, x[i:i + 3]?)")
        return (f"the variable {_stem(self.name)!r} holds {self.first!r} and also "
                f"{self.second!r} (its shape or dtype changes between iterations or branches)")


class AvalMap(dict):
    """name -> AVal, plus the conflicts found while joining (read by the lowering)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.conflicts = {}
        self.tapes = {}          # tape name -> AVal of the values pushed on it (one type)
        self.windows = {}        # x[i:i + 3] -> (its fixed shape, loc): checked at run time
        # name -> AVal of a value whose length depends on the data (x[mask], np.argwhere(x),
        # x[:i]): its rank and dtype hold, its shape is a stand-in's and is never a length
        self.unsized = {}
        self.unsized_shapes = {}  # x.shape of an unsized x -> its length (a run-time tuple)
        self.list_tapes = {}     # tape -> the unsized AVal of the values it holds (a list)
        # unsized names whose constant 0 is np.zeros((1,) * ndim) (zero_tolerant)
        self.zero_stand_ins = set()


def multi_bound(body):
    """Names bound more than once (Eqn outputs; loop variables count once)."""
    c = Counter(st.out for st in ir.walk_eqns(body))
    return {n for n, k in c.items() if k > 1}


def is_zero(atom):
    return isinstance(atom, Const) and isinstance(atom.value, (int, float, np.number)) and \
        not isinstance(atom.value, bool) and atom.value == 0


def join(old, new, new_atom=None, old_zero=False):
    """The joined AVal of two values bound to one name, or None when there is none."""
    if old is None or new is None:
        return None
    if old == new:
        return old
    if old.shape != new.shape:
        if not new.shape and is_zero(new_atom):
            return old if (new.weak or new.dtype.kind in "biu" or
                           _absorbs(old.dtype, new.dtype)) else None
        if not old.shape and old_zero:
            return new if (old.weak or _absorbs(new.dtype, old.dtype)) else None
        return None
    if old.weak and new.weak:
        hi = old if _KIND_RANK[old.dtype.kind] >= _KIND_RANK[new.dtype.kind] else new
        return hi
    if old.weak or new.weak:
        weak, strong = (old, new) if old.weak else (new, old)
        if _KIND_RANK[strong.dtype.kind] >= _KIND_RANK[weak.dtype.kind]:
            return strong
        return None
    return None


def _absorbs(big, small):
    return np.dtype(big) == np.result_type(big, small)


def loop_carried(st, avals):
    """Names bound inside loop `st` that already had a value before it."""
    return [n for n in dict.fromkeys(ir.bound_names(st.body if isinstance(st, ir.ForRange)
                                                    else st.cond_body + st.body))
            if n in avals]


def specialize_loop(sp, st):
    """Specialize a ForRange/While, re-running its body until the carried values are stable.
    Returns the new statement."""
    # what a pass with the carried values not yet joined said of tapes and conflicts is
    # discarded with it (a placeholder 0 pushed in the first pass is an array in the next)
    facts = (dict(sp.avals.tapes), dict(sp.avals.list_tapes), dict(sp.avals.conflicts))
    for attempt in range(6):
        if attempt:
            _restore_facts(sp, facts)
        carried = loop_carried(st, sp.avals)
        before = {n: sp.avals[n] for n in carried}
        snap = (dict(sp.avals), dict(sp.subst), sp.counter, set(sp.taken), dict(sp.zero_names))
        if isinstance(st, ir.ForRange):
            sp.avals[st.var] = loop_index_aval(sp)
            # the index is a new value at each iteration: a constant bound to its name before
            # the loop (the last index of an unrolled loop of the same name) is not it
            sp.subst.pop(st.var, None)
            new = ir.ForRange(st.var, sp.atom(st.start), sp.atom(st.stop), sp.atom(st.step),
                              sp.block(st.body), st.loc)
        else:
            cb = sp.block(st.cond_body)
            new = ir.While(cb, sp.atom(st.cond), sp.block(st.body), st.loc)
        changed = {n: sp.avals.get(n) for n in carried if sp.avals.get(n) != before[n]}
        # carried names that now hold values of run-time length: the body again, with them
        # unsized from its start (no statement may have read a length from the first binding)
        unsized = {n: sp.unsized[n] for n in changed if changed[n] is None and n in sp.unsized}
        if unsized:
            avals, subst, counter, taken, zeros = snap
            sp.avals.clear()
            sp.avals.update(avals)
            for n, u in unsized.items():
                sp.avals.pop(n, None)
                sp.unsized[n] = u
            sp.subst, sp.counter, sp.taken, sp.zero_names = subst, counter, taken, zeros
            continue
        if not changed or any(v is None for v in changed.values()):
            return new
        avals, subst, counter, taken, zeros = snap
        sp.avals.clear()
        sp.avals.update(avals)
        sp.avals.update(changed)
        sp.subst, sp.counter, sp.taken, sp.zero_names = subst, counter, taken, zeros
    return new


def _restore_facts(sp, facts):
    for have, saved in zip((sp.avals.tapes, sp.avals.list_tapes, sp.avals.conflicts), facts):
        have.clear()
        have.update(saved)


def bind_joined(sp, eqn, av):
    """Record the abstract value of a name bound more than once (joined with earlier ones)."""
    old = sp.avals.get(eqn.out)
    atom = eqn.args.get("x") if eqn.prim is C.assign else None
    _note_none(sp, eqn)
    if old is None:
        sp.avals[eqn.out] = av
        if is_zero(atom):
            sp.zero_names[eqn.out] = True
        if isinstance(atom, ir.Var) and atom.name in sp.zero_bcasts:
            sp.zero_first[eqn.out] = atom.name
        return
    j = join(old, av, atom, old_zero=sp.zero_names.get(eqn.out, False))
    if j is None and isinstance(atom, ir.Var):
        j = _widen_zeros(sp, atom.name, old)
    if j is None and eqn.out in sp.zero_first:
        j = _widen_zeros(sp, sp.zero_first[eqn.out], av)
    if j is None and _lengths_differ(old, av):
        # an array whose lengths differ between bindings (a buffer grown in a loop, a
        # slice of another length on one path): one of run-time length from here on
        join_unsized(sp, eqn, old, av)
        return
    if j is None:
        if eqn.out not in sp.avals.conflicts:     # blame the line that made the new value
            loc = getattr(sp, "def_locs", {}).get(atom.name) if isinstance(atom, ir.Var) \
                else None
            sp.avals.conflicts[eqn.out] = Conflict(eqn.out, loc or eqn.loc, old, av,
                                                   eqn.out in sp.none_bound)
        return
    if not is_zero(atom) and not av.shape:
        sp.zero_names[eqn.out] = False      # a scalar that may not be 0: never widened
    sp.avals[eqn.out] = j


def _note_none(sp, eqn):
    """Remember a name bound to the constant None (named as such if its values conflict)."""
    x = eqn.args.get("x") if eqn.prim is C.assign else None
    if isinstance(x, Const) and x.value is None:
        sp.none_bound.add(eqn.out)


def _lengths_differ(a, b):
    """Two arrays of one rank and dtype (neither a weak Python scalar), other lengths."""
    return a is not None and b is not None and a.ndim >= 1 and a.ndim == b.ndim and \
        a.dtype == b.dtype and not a.weak and not b.weak and a.shape != b.shape


def join_unsized(sp, eqn, old, new):
    """A name bound more than once, one of its values of run-time length: of run-time length
    (kept in sp.unsized, never in sp.avals: no binding's length is taken for the others')
    when every binding so far has the same rank (at least 1) and dtype; else a conflict."""
    _note_none(sp, eqn)
    sp.avals.pop(eqn.out, None)
    sp.unsized.pop(eqn.out, None)
    if old is None and new is not None:
        sp.unsized[eqn.out] = new               # its first binding
        return
    rebinds_itself = eqn.prim is C.assign and isinstance(eqn.args.get("x"), ir.Var) and \
        eqn.args["x"].name == eqn.out           # (x_2 = x_2)
    if old is None or new is None and not rebinds_itself:
        sp.avals.conflicts.setdefault(eqn.out, Conflict(eqn.out, eqn.loc, old, new,
                                                        eqn.out in sp.none_bound))
        return
    new = new or old
    if old.ndim == new.ndim and old.ndim and old.dtype == new.dtype and not new.weak:
        sp.unsized[eqn.out] = old
        return
    atom = eqn.args.get("x") if eqn.prim is C.assign else None
    zero_new, zero_old = is_zero(atom) and not new.ndim, \
        sp.zero_names.get(eqn.out, False) and not old.ndim
    arr = old if zero_new else new if zero_old else None
    if arr is not None and arr.ndim and np.issubdtype(arr.dtype, np.inexact) and \
            eqn.out in sp.zero_tolerant:
        # an adjoint's 0.0 meets its value of run-time length: a broadcastable zero array
        sp.unsized[eqn.out] = arr
        sp.avals.zero_stand_ins.add(eqn.out)
        return
    sp.avals.conflicts.setdefault(eqn.out, Conflict(eqn.out, eqn.loc, old, new,
                                                    eqn.out in sp.none_bound))


def _widen_zeros(sp, name, target):
    """A batch of zeros (`name`, made when a branch join batched a reset adjoint, its only
    reader the join) joins an array: the zeros take the array's shape and dtype (the joined
    AVal), or None."""
    eqn = sp.zero_bcasts.get(name)
    if eqn is None or target is None or sp.reads.get(name, 0) != 1 or not target.shape or \
            not np.issubdtype(target.dtype, np.inexact):
        return None
    eqn.args = dict(eqn.args, x=Const(target.dtype.type(0)), shape=Const(tuple(target.shape)))
    sp.avals[name] = target
    return target


def loop_index_aval(sp):
    """A range loop's index: a Python int in NumPy (weak: x[i] * i stays float32)."""
    return AVal((), np.dtype(np.int64), True)


def specialize_push(sp, st):
    """tape.push(v): the tape's values take v's abstract value (joined over its pushes)."""
    value = sp.atom(st.value)
    new = ir.Push(st.tape, value, st.loc)
    if not isinstance(st.tape, ir.Var):
        return new
    t = st.tape.name
    av = sp.aval(value)
    if av is None and isinstance(value, ir.Var) and value.name in sp.unsized:
        # values of run-time length (x[:i]): a list of them (lowering/cpu/control.py)
        u, old = sp.unsized[value.name], sp.avals.list_tapes.get(t)
        if old is not None and (old.ndim, old.dtype) != (u.ndim, u.dtype):
            sp.avals.conflicts.setdefault(t, Conflict(t, st.loc, old, u))
        sp.avals.list_tapes[t] = u
        return new
    old = sp.avals.tapes.get(t)
    if old is None:
        sp.avals.tapes[t] = av
    elif av is not None and old != av:
        j = join(old, av, value if isinstance(value, Const) else None)
        if j is None:
            sp.avals.conflicts.setdefault(t, Conflict(t, st.loc, old, av))
        else:
            sp.avals.tapes[t] = j
    return new


def pop_aval(sp, eqn):
    tape = eqn.args.get("tape")
    if isinstance(tape, ir.Var) and tape.name in sp.avals.list_tapes:
        sp.unsized[eqn.out] = sp.avals.list_tapes[tape.name]     # a length read at run time
        return None
    return sp.avals.tapes.get(tape.name) if isinstance(tape, ir.Var) else None


def rw_float_part(sp, eqn, out):
    """rt.float_part(t, like): t where like is inexact (its shape, not like's), else zeros."""
    t, like = eqn.args["t"], eqn.args["like"]
    ta, la = sp.aval(t), sp.aval(like)
    if la is None and isinstance(like, ir.Var):
        la = sp.unsized.get(like.name)
    if ta is None and isinstance(t, ir.Var) and t.name in sp.unsized and la is not None and \
            np.issubdtype(la.dtype, np.inexact):
        sp.alias(eqn, t)                # t of run-time length, like a float array
        return True
    if ta is None or la is None:
        return False
    if np.issubdtype(la.dtype, np.inexact):
        sp.alias(eqn, t)
        if isinstance(t, Const):
            sp.avals[eqn.out] = ta
        return True
    # like is an integer array: zeros of t's shape (not like's), float
    dt = np.result_type(ta.dtype, np.float64) if np.issubdtype(ta.dtype, np.inexact) \
        else np.dtype(np.float64)
    if not ta.shape:
        sp.subst[eqn.out] = Const(dt.type(0))
        return True
    sp.emit(out, by_name("zeros"), {"shape": Const(tuple(ta.shape)), "dtype": Const(dt.type)},
            eqn.loc, name=eqn.out)
    return True


def rw_cast_into(sp, eqn, out):
    """rt.cast_into(x, like): x, in like's dtype when like is an array."""
    x, like = eqn.args["x"], eqn.args["like"]
    xa, la = sp.aval(x), sp.aval(like)
    if xa is None and isinstance(x, ir.Var) and x.name in sp.unsized:
        # k /= k.sum(), k of run-time length: its rank and dtype decide
        xa = sp.unsized[x.name]
        if la is None and isinstance(like, ir.Var):
            la = sp.unsized.get(like.name)
        if la is None:
            return False
        if not la.shape or la.dtype == xa.dtype:
            sp.alias(eqn, x)
            return True
        sp.emit(out, by_name("astype"), {"x": x, "dtype": Const(la.dtype.type)}, eqn.loc,
                name=eqn.out)
        return True
    if xa is None or la is None:
        return False
    if not la.shape or la.dtype == xa.dtype:
        sp.alias(eqn, x)
        return True
    sp.emit(out, by_name("astype"), {"x": x, "dtype": Const(la.dtype.type)}, eqn.loc,
            name=eqn.out)
    return True


def dynamic_slice(eqn):
    """x[a:b] with a bound computed at run time: the result's shape is not known (the
    stand-in values abstract evaluation uses would give a wrong one)."""
    if eqn.prim is not getitem:
        return False
    index = eqn.args.get("index")
    if not isinstance(index, ir.IndexArg):
        return False
    return any(isinstance(it, ir.SliceArg) and any(isinstance(b, ir.Var)
                                                   for b in (it.lower, it.upper, it.step))
               for it in index.items)


def sized_by_run_time_int(sp, eqn):
    """np.zeros(n), np.arange(k), x.reshape(n, -1) ... with n an integer computed at run time
    (a loop count): abstract evaluation with a stand-in for n would give a wrong shape."""
    prim = eqn.prim
    if prim.elementwise or prim.fusable or prim.shape_safe:   # shape never set by an int's value
        return False
    if prim.effect_aval is not None:     # a draw: its rule tells a bound from a size itself
        return False
    args = eqn.args if prim.sized_by is None else \
        {k: v for k, v in eqn.args.items() if k in prim.sized_by}
    for a in ir.iter_atoms(v for v in args.values() if not isinstance(v, ir.IndexArg)):
        if isinstance(a, ir.Var):
            av = sp.avals.get(a.name)
            if av is not None and not av.shape and av.dtype.kind in "iu":
                return True
    return False


def collective_of_unsized(sp, eqn):
    """psum & co. of a value of run-time length: that value's rank, and its dtype (pmean of
    integers: float64); None for any other row."""
    prim, x = eqn.prim, eqn.args.get("x")
    if prim in (psum, pmean, pmax, pmin) and isinstance(x, ir.Var) and x.name in sp.unsized:
        av = sp.unsized[x.name]
        if prim is pmean and av.dtype.kind in "biu":
            return AVal(av.shape, np.dtype(np.float64))
        return av
    return None


def collective_aval(sp, eqn):
    """A collective's result, known without running it (it would wait at a barrier for the
    other shards): psum & co. keep their operand's shape and dtype; axis_index is an int32."""
    prim, x = eqn.prim, eqn.args.get("x")
    if prim in (psum, pmean, pmax, pmin) and isinstance(x, (ir.Var, Const)):
        av = sp.aval(x)
        if av is not None and prim is pmean and av.dtype.kind in "biu":
            return AVal(av.shape, np.dtype(np.float64))
        return av
    if prim is axis_index:
        return AVal((), np.dtype(np.int32))
    if prim.effect_aval is not None:      # a draw from a np.random.Generator, ...
        def aval(atom):
            try:
                return sp.aval(atom)
            except Exception:
                return None
        found = prim.effect_aval(eqn.args, aval)
        if found is None:
            return None
        shape, dtype, weak = found
        return AVal(shape, dtype, weak)
    return None


def zero_tolerant(body, outs):
    """Names every reader of which takes a zero of any broadcastable shape for the zero of
    the right shape: copies and sums (`d_2 = rt.added_to_zero(d)`, `d_3 = d_2 + g`) into such
    names, and the value `ct` of `rt.add_at` and `rt.getitem_vjp` (written into a slice of an
    array of another's shape: + 0 either way). An adjoint reset to 0.0 in a loop whose primal
    had run-time lengths (a window that grows) stays an array of one rank: such a name's 0 is
    the broadcastable `np.zeros((1,) * ndim)`. A length, a shape, an output or any other
    reader makes the zero's own shape matter."""
    readers = {}
    blocked = {o.name for o in outs if isinstance(o, Var)}
    stack = list(body)
    while stack:
        st = stack.pop()
        if isinstance(st, Eqn):
            for k, a in st.args.items():
                for v in ir.iter_atoms([a]):
                    if not isinstance(v, Var):
                        continue
                    if st.prim in (C.assign, C.added_to_zero, add):
                        readers.setdefault(v.name, set()).add(st.out)
                    elif st.prim in (C.add_at, getitem_vjp) and k == "ct":
                        readers.setdefault(v.name, set()).add(None)   # x's shape decides
                    else:
                        blocked.add(v.name)
            continue
        blocked.update(n for n in _own_reads(st))
        if isinstance(st, ir.If):
            stack += st.body + st.orelse
        elif isinstance(st, ir.ForRange):
            stack += st.body
        elif isinstance(st, ir.While):
            stack += st.cond_body + st.body
    ok = set(readers) - blocked
    changed = True
    while changed:          # greatest fixed point: every copy or sum lands in such a name
        changed = False
        for n in list(ok):
            if any(r is not None and r not in ok for r in readers[n]):
                ok.discard(n)
                changed = True
    return ok


def _own_reads(st):
    """Names a control statement or a push reads itself (not its nested statements)."""
    if isinstance(st, ir.Push):
        return ir.names_read(st)
    atoms = {ir.If: lambda s: [s.cond], ir.While: lambda s: [s.cond],
             ir.ForRange: lambda s: [s.start, s.stop, s.step]}.get(type(st), lambda s: [])(st)
    return [a.name for a in atoms if isinstance(a, Var)]


def always_zero(body, multi):
    """Names bound more than once, every time to the constant 0 or to another such name
    (reverse mode resets an adjoint to 0.0 at the end of each loop iteration, and copies it
    around loops and branches): they are that constant. {name: the Const}"""
    binds = {}
    for st in ir.walk_eqns(body):
        binds.setdefault(st.out, []).append(st)
    found = {}
    for name, eqns in binds.items():
        if all(e.prim is C.assign and (is_zero(e.args.get("x")) or
                                            isinstance(e.args.get("x"), ir.Var))
               for e in eqns):
            found[name] = {(type(e.args["x"].value), e.args["x"].value) for e in eqns
                           if isinstance(e.args["x"], Const)}
    result = {}
    for const in {c for cs in found.values() for c in cs}:
        zero = {n for n, cs in found.items() if cs <= {const}}
        changed = True
        while changed:      # greatest fixed point: copies among such names stay that constant
            changed = False
            for name in list(zero):
                if any(isinstance(e.args["x"], ir.Var) and e.args["x"].name not in zero
                       for e in binds[name]):
                    zero.discard(name)
                    changed = True
        for n in zero:
            if n in multi:
                result[n] = Const(const[1])
    return result


def rw_add_zero(sp, eqn, out):
    """x + 0 (an adjoint accumulated into a reset one) is x, when the sum keeps x's type."""
    x, y = eqn.args.get("x"), eqn.args.get("y")
    for a, b in ((x, y), (y, x)):
        if is_zero(b) and isinstance(a, ir.Var):
            av = sp.aval(a)
            if av is None:
                return False
            r = sp.infer(eqn)
            if r is not None and r.shape == av.shape and r.dtype == av.dtype and \
                    r.weak == av.weak and np.issubdtype(av.dtype, np.inexact):
                sp.alias(eqn, a)
                return True
            return False
    return False


# `v op= e` written into v's array: the plain row, once v is known to be an array
_IF_ARRAY = {C.setitem_if_array: C.setitem, C.write_in_place_if_array: C.write_in_place}


def resolve_if_array(sp, eqn, out):
    """rt.if_array / rt.setitem_if_array / rt.write_in_place_if_array decide at run time whether
    `v op= e` wrote into an array or rebound a scalar (transpile/frontend/normalize/aliasing_scalars.py). Once the
    probe's shape is known the choice is made here, so the compiled code holds the plain form
    (identity or setitem / write_in_place). A probe of shape () is a scalar (NumPy copies an
    element out of its array)."""
    prim = eqn.prim
    if prim in (C.shape_like, C.shape_only):
        return _resolve_shape_like(sp, eqn)
    if prim is C.written_part:
        return _resolve_written_part(sp, eqn, out)
    if prim is not C.if_array and prim not in _IF_ARRAY:
        return eqn
    pa = sp.aval(eqn.args["probe"])
    if pa is None:
        return eqn
    is_array = bool(pa.shape)
    if prim is C.if_array:
        keep = eqn.args["a"] if is_array else eqn.args["b"]
        return Eqn(eqn.out, by_name("identity"), {"x": keep}, eqn.loc)
    if not is_array:
        return Eqn(eqn.out, by_name("identity"), {"x": eqn.args["x"]}, eqn.loc)
    args = {k: eqn.args[k] for k in ("x", "index", "v")}
    return Eqn(eqn.out, _IF_ARRAY[prim], args, eqn.loc)


def _resolve_shape_like(sp, eqn):
    """rt.shape_like(x), a zero shaped like x: np.zeros_like(x), or a zero of x's dtype for a
    scalar. Where the tape saves it (shape_only) only its type is read: a scalar x itself then,
    which keeps the type its loop joins gave it."""
    xa = sp.aval(eqn.args["x"])
    x = eqn.args["x"]
    if xa is None and isinstance(x, ir.Var) and x.name in sp.unsized:    # a run-time length
        return Eqn(eqn.out, by_name("zeros_like"), {"x": x}, eqn.loc)
    if xa is None:
        return eqn
    if not xa.shape:
        keep = eqn.args["x"] if eqn.prim is C.shape_only else \
            Const(np.dtype(xa.dtype).type(0))
        return Eqn(eqn.out, by_name("identity"), {"x": keep}, eqn.loc)
    return Eqn(eqn.out, by_name("zeros_like"), {"x": eqn.args["x"]}, eqn.loc)


def _basic_index(sp, index):
    """Slices, scalar integers, None and Ellipsis only: no element can be named twice."""
    if not isinstance(index, ir.IndexArg):
        items = (index,)
    else:
        items = index.items
    if len(items) == 1 and isinstance(items[0], ir.TupleArg) and items[0].kind == "tuple":
        items = items[0].items          # x[idx], idx = (i, j) (np.ndindex): x[i, j]
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, ir.SliceArg):
            continue
        if isinstance(it, Const):
            if isinstance(it.value, (int, np.integer)) and not isinstance(it.value, bool):
                continue
            return False
        av = sp.aval(it)
        if av is None or av.shape or not np.issubdtype(av.dtype, np.integer):
            return False
    return True


def _resolve_written_part(sp, eqn, out):
    """rt.written_part(x, index) with a basic index: a copy of x[index] (x[index] itself when it
    is one element), x of run-time length too (the cotangent of a list grown under an `if`).
    Integer-array indices keep the run-time helper (repeated elements)."""
    x, index = eqn.args["x"], eqn.args["index"]
    known = sp.aval(x) is not None or isinstance(x, Var) and x.name in sp.unsized
    if not known or not _basic_index(sp, index):
        return eqn
    sel = sp.emit(out, by_name("getitem"), {"x": x, "index": index}, eqn.loc, base="sel")
    sa = sp.aval(sel)
    if sa is None and sel.name in sp.unsized:       # y[:i] = v: as long as the slice
        return Eqn(eqn.out, by_name("copy"), {"x": sel}, eqn.loc)
    if sa is None:
        return eqn
    if not sa.shape:
        return Eqn(eqn.out, by_name("identity"), {"x": sel}, eqn.loc)
    return Eqn(eqn.out, by_name("copy"), {"x": sel}, eqn.loc)
