"""Numba lowering of the statements control flow brings into core Python.

Called by the Numba CPU code generator (lowering/cpu/module.py) for every statement before its generic
equation lowering. After specialization (optimize/specialize.py, optimize/specialize_control.py)
every name has one abstract value, joined over branches and loop iterations, so:

* `x_3 = rt.assign(x_2)` (the copies SSA puts at branch joins and around loops) is a
  rebinding, with the value converted to the joined type where a Python scalar met a NumPy
  one (`np.float32(s)`), or zeros of the joined shape where the constant 0 met an array (an
  accumulator's start, an adjoint's reset);
* `y = rt.setitem(x, i, v)` is `y = x.copy(); y[i] = v`, and an in-place store `x[i] = v;
  y = x` where optimize/inplace.py proved nothing reads the old value (O(1) per write);
  the value is cast to the array's dtype as NumPy does (float into int truncates);
* a tape (split per pushed name by ad/tape_split.py) is a preallocated array of its
  values' shape and dtype plus a count: push stores and counts (the buffer doubles when
  full), pop counts down and reads;
* `rt.cast_into`, `rt.float_part`, `rt.adjoint_like`, `rt.trip_count` become casts, zeros and
  `len(range(...))`.

A name whose values cannot share one type (specialize_control.Conflict) raises `Unlowerable`
naming the user's variable and line.
"""

import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, Var, construct_of
from transpile.lowering.cpu import advanced
from transpile.lowering.cpu.text import (MASK_SHAPE, Unlowerable, atom_const_text, const_text,
                                         dtype_ctor, shape_text, size_text, where_text)
from transpile.optimize.specialize_windows import MARK
from transpile.primitives.internal import control as C
from transpile.primitives.numpy.nondiff import bool_, float_, int_
from transpile.primitives.numpy.structure import array, getitem

TAPE_START = 16

def check_conflicts(lw, body):
    """Refuse, naming the user's variable and line, a name with no single type (that is still
    there: dead code dropped after specializing may have held the conflict)."""
    conflicts = getattr(lw.avals, "conflicts", {})
    alive = set(ir.bound_names(body))
    for st in body:
        alive.update(ir.names_read(st))
    for name, c in conflicts.items():
        if name not in alive:
            continue
        raise Unlowerable(None, c.describe(), loc=c.loc,
                          construct="a value changing type in a loop or branch")


def lower_stmt(lw, st, indent, out):
    """Append the lowering of `st` to `out` and return True, or return False (not ours)."""
    if isinstance(st, ir.Push):
        lw.comment(st.loc, indent, out)
        out += [indent + line for line in push_lines(lw, st)]
        return True
    if not isinstance(st, Eqn):
        return False
    handler = _HANDLERS.get(st.prim)
    if handler is None:
        return False
    lw.comment(st.loc, indent, out)
    out += [indent + line for line in handler(lw, st)]
    return True


def _unlowerable(st, why):
    return Unlowerable(st, why, construct=construct_of(st))


def convert(lw, atom, to, st):
    """Text of `atom` converted to the abstract value `to` (a join's type)."""
    src = lw.av(atom) if isinstance(atom, Var) else None
    if to is None:
        raise _unlowerable(st, "unknown result shape")
    if isinstance(atom, Const):
        if to.shape:
            v = atom.value
            if isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and v == 0:
                return f"np.zeros({shape_text(to.shape)}, {dtype_ctor(to.dtype)})"
            return f"np.full({shape_text(to.shape)}, {atom_const_text(atom, to.dtype)}, {dtype_ctor(to.dtype)})"
        if isinstance(atom.value, (bool, np.bool_)) and to.dtype == np.bool_:
            return const_text(atom.value)
        return atom_const_text(atom, to.dtype)
    if src is None:
        raise _unlowerable(st, "unknown shape of " + atom.name)
    if src.shape == to.shape and src.dtype == to.dtype:
        return atom.name
    if not to.shape:
        return f"{dtype_ctor(to.dtype)}({atom.name})"
    if not src.shape:
        return f"np.full({shape_text(to.shape)}, {atom.name}, {dtype_ctor(to.dtype)})"
    if src.shape == to.shape:
        return f"{atom.name}.astype({dtype_ctor(to.dtype)})"
    raise _unlowerable(st, f"{atom.name} has shape {src.shape}, expected {to.shape}")


def _assign(lw, st):
    x = st.args["x"]
    if st.out in getattr(lw.avals, "zero_stand_ins", ()) and isinstance(x, Const):
        # an adjoint reset of run-time length: a zero that broadcasts to any of its lengths
        u = lw.unsized[st.out]
        return [f"{st.out} = np.zeros({shape_text((1,) * u.ndim)}, {dtype_ctor(u.dtype)})"]
    return [f"{st.out} = {convert(lw, x, lw.avals.get(st.out), st)}"]


def _value_for(lw, v, dest_av, st):
    """A written value, cast to the destination's dtype (NumPy casts on assignment)."""
    if isinstance(v, Const):
        return atom_const_text(v, dest_av.dtype) if not isinstance(v.value, bool) \
            else const_text(v.value)
    if isinstance(v, ir.TupleArg):          # traj[k] = (x, y, z): an array of the numbers
        items = [_value_for(lw, it, dest_av, st) for it in v.items]
        if any(isinstance(it, Var) and (lw.av(it) is None or lw.av(it).shape)
               for it in v.items) or any(isinstance(it, ir.TupleArg) for it in v.items):
            raise _unlowerable(st, "a written sequence of anything but numbers")
        return f"np.array([{', '.join(items)}], {dtype_ctor(dest_av.dtype)})"
    if not isinstance(v, Var):
        raise _unlowerable(st, "a written value of this kind")
    vav = lw.av(v) or lw.unsized.get(v.name)    # (x[idx] = v, v of run-time length)
    if vav is None:
        raise _unlowerable(st, "unknown shape of the written value")
    if vav.dtype == dest_av.dtype:
        return v.name
    if not vav.shape:
        return f"{dtype_ctor(dest_av.dtype)}({v.name})"
    return f"{v.name}.astype({dtype_ctor(dest_av.dtype)})"


def _mask(lw, index, xav):
    """The boolean mask of x[mask] = v (a Var of x's shape, or of its leading axes: rows),
    or None."""
    if not isinstance(index, ir.IndexArg) or len(index.items) != 1:
        return None
    m = index.items[0]
    mav = lw.av(m) if isinstance(m, Var) else None
    if mav is None and isinstance(m, Var) and m.name in lw.unsized:
        # a mask of run-time length (`counts > 0` of np.bincount): its shape checked when
        # the code runs
        u = lw.unsized[m.name]
        return m if u.dtype == np.bool_ and 1 <= u.ndim <= len(xav.shape) else None
    if mav is None or mav.dtype != np.bool_ or not mav.shape or \
            tuple(mav.shape) != tuple(xav.shape)[:mav.ndim]:
        return None
    return m


_MASK_COUNT = ("NumPy boolean array indexing assignment cannot assign this many input values "
               "to the output values where the mask is true")


def _mask_write(lw, st, x, mask, v, xav):
    """x[mask] = v element by element, in C order (in place, or into a copy): a scalar at
    every true position; an array's elements one after the other (its length, the count of
    true values or 1, is checked first, as NumPy does); a mask of x's leading axes picks
    sub-arrays (rows), each written the value's next row (or the value itself)."""
    mav = lw.av(mask)
    lines = []
    if mav is None:                 # of run-time length: NumPy's error where shapes differ
        mav = lw.unsized[mask.name]
        dims = [f"{mask.name}.shape[{k}]" for k in range(mav.ndim)]
        same = " or ".join(f"{d} != {x.name}.shape[{k}]" for k, d in enumerate(dims))
        lines += [f"if {same}:     # NumPy's error, from NumPy",
                  f"    raise IndexError({MARK + ' ' + where_text(st) + MASK_SHAPE!r})"]
    else:
        dims = [size_text(n) for n in mav.shape]
    rows = mav.ndim < len(xav.shape)
    vav = (lw.av(v) or lw.unsized.get(v.name)) if isinstance(v, Var) else None
    if isinstance(v, Var) and vav is None:
        raise _unlowerable(st, "unknown shape of the written value")
    if isinstance(v, Const) and np.ndim(v.value):
        raise _unlowerable(st, "a boolean-mask write of a constant sequence")
    per_true = vav is not None and vav.ndim > (len(xav.shape) - mav.ndim if rows else 0)
    if per_true and vav.ndim != len(xav.shape) - mav.ndim + 1:
        raise _unlowerable(st, "a boolean-mask write of a value of another rank")
    val = _value_for(lw, v, xav, st)
    dest = x.name if (st.prim is C.write_in_place or id(st) in lw.in_place) else st.out
    o = st.out
    at = ", ".join(f"{o}_i{k}" for k in range(mav.ndim))
    if per_true:
        # as many values as true elements (or one for all): counted before anything is written
        lines += [f"{o}_n = 0"] + _mask_loops(o, dims, [f"if {mask.name}[{at}]:",
                                                       f"    {o}_n += 1"]) + [
                  f"if {v.name}.shape[0] != {o}_n and {v.name}.shape[0] != 1:",
                  f"    raise ValueError({_MASK_COUNT!r})",
                  f"{o}_step = 0 if {v.name}.shape[0] == 1 else 1",
                  f"{o}_j = 0"]
        if val != v.name:
            lines.append(f"{o}_v = {val}")
            val = f"{o}_v"
        elif dest == x.name:
            lines += _unshared(st, dest, [v.name])
        val = f"{val}[{o}_j]"
    if dest != x.name:
        lines.append(f"{o} = {x.name}.copy()")
    body = [f"if {mask.name}[{at}]:", f"    {dest}[{at}] = {val}"]
    if per_true:
        body.append(f"    {o}_j += {o}_step")
    lines += _mask_loops(o, dims, body)
    if dest == x.name:
        lines.append(f"{st.out} = {x.name}")
    return lines


def _unshared(st, dest, names):
    """Lines checking that the arrays `names` (a written value, index arrays) share no memory
    with the array written in place (x[m] = x[:k][::-1]): where one does, NumPy's result
    depends on how it buffers the copy, so the call runs NumPy (before anything is written)."""
    if not names:
        return []
    why = (f"{MARK} {where_text(st)} | a value or index array written into the array it "
           "is a view of (NumPy's result depends on how it buffers it)")
    test = " or ".join(f"overlaps({dest}, {n})" for n in dict.fromkeys(names))
    return [f"if {test}:", f"    raise IndexError({why!r})"]


def _mask_loops(o, dims, body):
    """One loop per axis of the mask (`dims`: their lengths' text; np.ndindex's tuples cost
    2-3x as much per element), in C order, around `body`."""
    lines = [f"{'    ' * k}for {o}_i{k} in range({n}):" for k, n in enumerate(dims)]
    return lines + ["    " * len(dims) + line for line in body]


def _setitem(lw, st):
    x, v = st.args["x"], st.args["v"]
    xav = lw.av(x)
    if xav is None and isinstance(x, Var) and x.name in lw.unsized:
        return _setitem_unsized(lw, st, x, v)
    if xav is None or not xav.shape or not isinstance(x, Var):
        raise _unlowerable(st, "a subscript write into a scalar")
    mask = _mask(lw, st.args["index"], xav)
    if mask is not None:
        return _mask_write(lw, st, x, mask, v, xav)
    p = advanced.plan(lw, x, st.args["index"], st)
    if p is not None:
        return _advanced_write(lw, st, x, v, xav, p)
    ix = lw.index(st.args["index"], st)
    val = _value_for(lw, v, xav, st)
    if st.prim is C.write_in_place or id(st) in lw.in_place:
        return [f"{x.name}[{ix}] = {val}", f"{st.out} = {x.name}"]
    return [f"{st.out} = {x.name}.copy()", f"{st.out}[{ix}] = {val}"]


def _advanced_write(lw, st, x, v, xav, p):
    """x[r, c] = v with integer arrays NumPy broadcasts together (lowering/cpu/advanced.py):
    a loop over their positions, in NumPy's order (a repeated index keeps the last value)."""
    dest = x.name if (st.prim is C.write_in_place or id(st) in lw.in_place) else st.out
    lines = [] if dest == x.name else [f"{st.out} = {x.name}.copy()"]
    vav = lw.av(v) if isinstance(v, Var) else None
    if isinstance(v, Var) and vav is None:
        raise _unlowerable(st, "a value of run-time length written at index arrays")
    if dest == x.name:
        # written in place: a value or an index array that is a view of x itself
        shared = [it.name for it in advanced.index_arrays(st.args["index"])
                  if lw.av(it) is not None and lw.av(it).shape]
        if isinstance(v, Var) and vav is not None and vav.shape:
            shared.append(v.name)
        lines += _unshared(st, dest, shared)
    if isinstance(v, Var) and vav is not None and vav.shape:
        val = _value_for(lw, v, xav, st)
        if val != v.name:           # cast once to x's dtype (NumPy casts on assignment)
            lines.append(f"{st.out}_v = {val}")
            val = f"{st.out}_v"
        # an element written twice keeps the value NumPy's order writes last
        operands = [it.name for it in advanced.index_arrays(st.args["index"])] + [v.name]
        lines += advanced.checked_write(lw, st, dest, p, val, vav, operands)
        if dest == x.name:
            lines.append(f"{st.out} = {x.name}")
        return lines
    elif isinstance(v, Const) and np.ndim(v.value):
        raise _unlowerable(st, "a written constant sequence at an index array")
    else:
        val = _value_for(lw, v, xav, st)
    lines += advanced.scatter(lw, st, dest, p, val, vav)
    if dest == x.name:
        lines.append(f"{st.out} = {x.name}")
    return lines


def _setitem_unsized(lw, st, x, v):
    """x[i] = v into an array whose length is known at run time only (np.zeros(len(u))):
    integers and slices as written, the value cast to x's dtype."""
    xu = lw.unsized[x.name]
    index = st.args["index"]
    if not isinstance(index, ir.IndexArg) or any(
            it is None or it is Ellipsis or isinstance(it, Var) and (
                lw.av(it) is None or lw.av(it).shape or lw.av(it).dtype.kind not in "iu")
            for it in index.items):
        raise _unlowerable(st, "a write into an array of run-time length at an index other "
                               "than integers and slices")
    ix = lw.index(index, st)
    val = _value_for(lw, v, xu, st)
    if st.prim is C.write_in_place or id(st) in lw.in_place:
        return [f"{x.name}[{ix}] = {val}", f"{st.out} = {x.name}"]
    return [f"{st.out} = {x.name}.copy()", f"{st.out}[{ix}] = {val}"]


def _cast_into(lw, st):
    return [f"{st.out} = {convert(lw, st.args['x'], lw.avals.get(st.out), st)}"]


def _float_part(lw, st):
    like = lw.av(st.args["like"]) if isinstance(st.args["like"], Var) else None
    to = lw.avals.get(st.out)
    if like is not None and np.issubdtype(like.dtype, np.inexact):
        return [f"{st.out} = {convert(lw, st.args['t'], to, st)}"]
    if to is None:
        raise _unlowerable(st, "unknown result shape")
    zero = f"np.zeros({shape_text(to.shape)}, {dtype_ctor(to.dtype)})" if to.shape else \
        f"{dtype_ctor(to.dtype)}(0)"
    return [f"{st.out} = {zero}"]


def _adjoint_like(lw, st):
    d, to = st.args["d"], lw.avals.get(st.out)
    if to is None and isinstance(d, Var):
        dav = lw.av(d)
        if dav is None or dav.shape:
            # a compiled adjoint is never the scalar 0.0 (a reset is zeros of its shape):
            # d itself, also where x's length is known only at run time (a scalar d there
            # would not type in Numba: a refusal, never a wrong number)
            return [f"{st.out} = {d.name}"]
    return [f"{st.out} = {convert(lw, d, to, st)}"]


def _trip_count(lw, st):
    a = [lw.fmt(st.args[k]) for k in ("start", "stop", "step")]
    return [f"{st.out} = len(range({', '.join(a)}))"]


# -- the tape ---------------------------------------------------------------------------------

def _tape_av(lw, tape, st):
    tapes = getattr(lw.avals, "tapes", {})
    if tape not in tapes:
        return None
    av = tapes[tape]
    if av is None:
        raise _unlowerable(st, "a reverse-mode tape holding values of unknown type")
    return av


def _list_tape(lw, tape):
    """A tape of values of run-time length (x[:i]): a list, pushed copies, popped back."""
    return tape in getattr(lw.avals, "list_tapes", {})


def _tape_new(lw, st):
    if _list_tape(lw, st.out):
        return [f"{st.out} = []     # values of run-time length (copies)"]
    av = _tape_av(lw, st.out, st)
    if av is None:
        if st.out in lw.pushed_tapes:
            raise _unlowerable(st, "a reverse-mode tape holding values of several types "
                               "(a derivative of a derivative through a loop)")
        return []          # nothing is ever pushed on it
    n = lw.pushed_tapes.get(st.out) or TAPE_START     # the trip counts, when known
    return [f"{st.out} = np.empty({shape_text((max(n, 1),) + tuple(av.shape))}, {dtype_ctor(av.dtype)})",
            f"{st.out}_n = 0"]


def push_lines(lw, st):
    t = st.tape.name
    if _list_tape(lw, t):
        return [f"{t}.append({st.value.name}.copy())"]
    av = _tape_av(lw, t, st)
    if av is None:
        raise _unlowerable(None, "a reverse-mode tape holding values of several types")
    value = _value_for(lw, st.value, av, None) if isinstance(st.value, Var) or \
        isinstance(st.value, Const) else lw.fmt(st.value)
    rest = "".join(f", {n}" for n in av.shape)
    store = [f"{t}[{t}_n] = {value}", f"{t}_n += 1"]
    if lw.pushed_tapes.get(t):
        return store        # sized by the trip counts: never full
    return [f"if {t}_n == {t}.shape[0]:     # full: double the buffer",
            f"    {t}_more = np.empty((2 * {t}_n{rest}), {dtype_ctor(av.dtype)})",
            f"    {t}_more[:{t}_n] = {t}",
            f"    {t} = {t}_more",
            f"{t}[{t}_n] = {value}",
            f"{t}_n += 1"]


def _tape_pop(lw, st):
    t = st.args["tape"].name
    if _list_tape(lw, t):
        return [f"{st.out} = {t}.pop()"]
    _tape_av(lw, t, st)
    return [f"{t}_n -= 1", f"{st.out} = {t}[{t}_n]"]


def pushed_tapes(body, times=1, counts=None):
    """{tape: how many values one call pushes on it}, None where a loop's trip count is not
    known when the code is generated (a while loop, a bound read at run time)."""
    counts = {} if counts is None else counts
    for st in body:
        if isinstance(st, ir.Push) and isinstance(st.tape, Var):
            t = st.tape.name
            counts[t] = None if times is None or counts.get(t, 0) is None \
                else counts.get(t, 0) + times
        elif isinstance(st, ir.ForRange):
            n = None
            if times is not None and all(isinstance(a, Const) for a in
                                         (st.start, st.stop, st.step)):
                n = times * len(range(st.start.value, st.stop.value, st.step.value))
            pushed_tapes(st.body, n, counts)
        elif isinstance(st, ir.While):
            pushed_tapes(st.cond_body + st.body, None, counts)
        elif isinstance(st, ir.If):
            pushed_tapes(st.body, times, counts)
            pushed_tapes(st.orelse, times, counts)
    return counts


def _scalar_cast(lw, st):
    """int(v), float(v), bool(v) of a scalar (Python's int truncates toward zero, as
    np.int64 does)."""
    x = st.args["x"]
    xa, out = lw.av(x) if isinstance(x, Var) else None, lw.avals.get(st.out)
    if isinstance(x, Var) and (xa is None or xa.shape) or out is None or out.shape:
        raise _unlowerable(st, f"{st.prim.name}() of an array")
    text = x.name if isinstance(x, Var) else atom_const_text(x)
    if st.prim is bool_:
        return [f"{st.out} = bool({text})"]
    return [f"{st.out} = {dtype_ctor(out.dtype)}({text})"]


def _getitem(lw, st):
    """x[...]; a fixed-length window with run-time bounds (x[i:i + 3]) is checked right
    away: past an end NumPy gives a shorter slice, and this call then runs NumPy (api/jit.py)."""
    x = st.args["x"]
    p = advanced.plan(lw, x, st.args["index"], st) if isinstance(x, Var) else None
    if p is not None:          # x[r, c], A[idx, 1:3], ytr[idx2d]: loops over the index arrays
        out = lw.avals.get(st.out)
        if out is None or tuple(out.shape) != p.shape:
            raise _unlowerable(st, "unknown result shape")
        return advanced.gather(lw, st, x, p, out.dtype)
    lines = [f"{st.out} = {lw.expr(st)}"]
    window = getattr(lw.avals, "windows", {}).get(st.out)
    if window is not None:
        shape, loc = window
        where = f"{loc[0]}:{loc[1]}" if loc and loc[0] else "?"
        lines += [f"if {st.out}.shape != {shape_text(shape)}:     # a window past an end of the array",
                  f"    raise IndexError({MARK + ' ' + where!r})"]
    return lines


def _leaves(a):
    if isinstance(a, ir.TupleArg):
        out = []
        for it in a.items:
            sub = _leaves(it)
            if sub is None:
                return None
            out += sub
        return out
    return [a] if isinstance(a, (Var, Const)) else None


def _array(lw, st):
    """np.array([a, b, c]) / np.array([[...], [...]]) of scalars: one flat list, reshaped."""
    x, out = st.args["x"], lw.avals.get(st.out)
    if isinstance(x, Const) and isinstance(x.value, (tuple, list)) and out is not None and \
            out.shape and out.dtype.kind in "biufc":
        x = ir.TupleArg(tuple(Const(v) for v in np.asarray(x.value, dtype=out.dtype).ravel()))
    if not isinstance(x, ir.TupleArg):
        return [f"{st.out} = {lw.expr(st)}"]
    items = _leaves(x)
    if out is None or items is None or len(items) != int(np.prod(out.shape)) or any(
            isinstance(a, Var) and (lw.av(a) is None or lw.av(a).shape) for a in items):
        raise _unlowerable(st, "an array built from a nested list of arrays")
    text = ", ".join(a.name if isinstance(a, Var) else const_text(a.value, out.dtype)
                     for a in items)
    arr = f"np.array([{text}], dtype={dtype_ctor(out.dtype)})"
    if len(out.shape) != 1:
        arr += f".reshape({shape_text(out.shape)})"
    return [f"{st.out} = {arr}"]


def _written_part(lw, st):
    """rt.written_part(g, index): with integer arrays Numba's subscript cannot take, the loops
    of lowering/cpu/advanced.py (backwards: the last write of an element keeps its part);
    otherwise the row's own form."""
    g, out = st.args["x"], lw.avals.get(st.out)
    ok = isinstance(g, Var) and lw.av(g) is not None and lw.av(g).shape
    p = advanced.plan(lw, g, st.args["index"], st) if ok else None
    if p is None:
        try:
            form = lw.row_form(st)
        except Unlowerable:
            # (y[idx, 1] = v: an integer beside the vector) the loops take any index array
            p = advanced.plan(lw, g, st.args["index"], st, force=True) if ok else None
            if p is None:
                raise
        else:
            return form if isinstance(form, list) else [f"{st.out} = {form}"]
    if out is None or tuple(out.shape) != p.shape:
        raise _unlowerable(st, "unknown result shape")
    return advanced.last_writes(lw, st, g, p, out.dtype)


_HANDLERS = {
    getitem: _getitem, array: _array,
    int_: _scalar_cast, float_: _scalar_cast, bool_: _scalar_cast,
    C.assign: _assign, C.setitem: _setitem, C.write_in_place: _setitem,
    C.cast_into: _cast_into, C.float_part: _float_part, C.adjoint_like: _adjoint_like,
    C.trip_count: _trip_count, C.tape_new: _tape_new, C.tape_pop: _tape_pop,
    C.written_part: _written_part,
}
