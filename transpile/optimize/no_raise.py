"""Which statements of a specialized body can raise when compiled: jit writes into its arguments
in place only where no statement can raise after the first write.

A call of `jit(f)` that raises leaves its arguments as they were (docs/debugging.md), and the
NumPy version that core/runtime_errors.py runs again for the error's message reads them
unchanged. So by default the writes go to a copy, written back when the call returns. That copy
costs a pass over the array (or one per loop iteration, where each iteration writes the
argument), which made in-place kernels slower than NumPy. When nothing from the first write on
can raise, the copy guards nothing: `owned_arguments` lets optimize/inplace.py write those
arguments in place.

What cannot raise (shapes and dtypes are known: a specialization serves one set of argument
shapes): a row with an elementwise scalar form (the Numba loops use NumPy's error model:
no ZeroDivisionError), sums, means and products, assignments, copies, shape queries, basic
subscripts (slices, `...`, None, constant integers inside the axis, a boolean mask of the
array's own shape, an integer known to lie inside the axis: a loop's variable over a `range`
of constants, or `i % n` with the axis length n, as np.put's writes are) and writes through
them of a scalar or of a value of the selected shape,
the final write into an argument, and loops and branches made of these (a `range` with a
constant step). Anything else (an index read at run time, an assert, a library call, a
max of a possibly empty array, anything reading or binding a value of run-time length, whose
operands may not fit) counts as able to raise.
"""
from collections import Counter

import numpy as np

from transpile.core import ir
from transpile.core.avals import AVal
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.primitives.internal.control import assign, write_back
from transpile.primitives.internal.debugging import (
    debug_breakpoint, debug_print, debug_printf, raise_error)
from transpile.primitives.numpy.arrays import mod as mod_row
from transpile.primitives import by_name
from transpile.primitives.numpy.elementwise import add, subtract
from transpile.primitives.numpy.nondiff import all_, any_, argmax, argmin, count_nonzero
from transpile.primitives.numpy.structure import copy as copy_row

_SAFE_REDUCE = ("sum", "mean", "prod")
_COUNTS = (count_nonzero, any_, all_)
greater = by_name("greater")
_PRINTS = (debug_print, debug_printf, debug_breakpoint)   # (output before a later error)
_JUMPS = (ir.Break, ir.Continue, ir.While)       # (a loop that may leave before a read)
_EXTREMES = (argmax, argmin)


def owned_arguments(body, avals, params, proved=None):
    """The arguments the function writes into (`rt.write_back`) that may be written in place:
    every statement from the first top-level statement that writes anything on cannot raise.
    Empty when one can (the writes then go to copies). `proved`: loop variables whose range
    a check before the loop established (checks_before_loops)."""
    written = {st.args["dest"].name for st in ir.walk_eqns(body)
               if st.prim is write_back and isinstance(st.args["dest"], Var)
               and st.args["dest"].name in params}
    if not written:
        return set()
    first = next((k for k, st in enumerate(body) if _writes(st)), len(body))
    ranges = index_ranges(body, avals, proved)
    if all(not may_raise(st, avals, ranges) for st in body[first:]):
        return written
    return set()


def _writes(st):
    if isinstance(st, Eqn):
        return st.prim.writes_arg or st.prim.subscript_write
    return any(_writes(s) for s in _children(st))


def _children(st):
    if isinstance(st, ir.If):
        return list(st.body) + list(st.orelse)
    if isinstance(st, ir.ForRange):
        return list(st.body)
    if isinstance(st, ir.While):
        return list(st.cond_body) + list(st.body)
    return []


def checks_before_loops(body, avals):
    """(body, proved): a loop of the function's body over `range(start, n)` (constant start,
    step 1, n read at run time) that reads `x[i]` or `x[i + c]` at the top of its body (no
    break, continue, while or print in it) gets one check before it, raising IndexError when
    n is past what x's axis allows, so the reads inside cannot raise and writes into the
    arguments need no copies (fdtd-style `ey[0, :] = fict[t]` for t in range(steps)).

    The loop would have raised at that read anyway; the check raises before any iteration
    instead of at the first bad one, which a call that raises may do: arguments are left as
    they were, and core/runtime_errors.py reruns NumPy for the message. `proved` maps each
    such loop variable to its range (lo, hi) after the check."""
    out, proved = [], {}
    bound = Counter(st.out for st in ir.walk_eqns(body))
    for st in body:
        if isinstance(st, ir.ForRange):
            found = _loop_check(st, avals, bound, len(proved))
            if found is not None:
                lines, rng = found
                out += lines
                proved[st.var] = rng
        out.append(st)
    return out, proved


def _loop_check(loop, avals, bound, k):
    start, step = _int_const(loop.start), _int_const(loop.step)
    stop = loop.stop
    sav = avals.get(stop.name) if isinstance(stop, Var) else None
    if start is None or start < 0 or step != 1 or sav is None or sav.shape or \
            not np.issubdtype(sav.dtype, np.integer) or bound[loop.var] or \
            any(isinstance(s, _JUMPS) for s in _statements(loop.body)) or \
            any(e.prim in _PRINTS for e in ir.walk_eqns(loop.body)):
        return None
    offsets = {loop.var: 0}       # names of this iteration: the loop variable plus a constant
    limit = None                  # the largest n with every read inside its axis
    for st in loop.body:
        if not isinstance(st, Eqn):
            continue
        shifted = _shifted(st, offsets, bound)
        if shifted is not None:
            offsets[st.out] = offsets[shifted[0]] + shifted[1]
            continue
        x = st.args.get("x")
        index = st.args.get("index")
        if st.prim.view != "index" or st.prim.subscript_write or not isinstance(index, IndexArg):
            continue
        xs = _shape(x, avals)
        named = [(k, it.name) for k, it in enumerate(index.items)
                 if isinstance(it, Var) and it.name in offsets]
        if xs is None or len(named) != 1 or any(i is None or i is Ellipsis
                                                for i in index.items[:named[0][0]]):
            continue
        axis, name = named[0]
        c = offsets[name]
        if axis >= len(xs) or start + c < -xs[axis] or selected_shape(
                x, index, avals, {name: (start + c, start + c + 1)}) is None:
            continue
        n = xs[axis] - c
        limit = n if limit is None else min(limit, n)
    if limit is None:
        return None
    top = max(limit, start)
    past, at = Var(f"{loop.var}_past_end_{k + 1}"), loop.loc
    avals[past.name] = AVal((), np.dtype(np.bool_))
    raise_ = Eqn(f"{loop.var}_index_error_{k + 1}", raise_error,
                 {"exc": Const("IndexError"), "template": Const(
                     f"index out of bounds: the loop over {loop.var} reads past an array's end"),
                  "values": TupleArg(())}, at)
    return [Eqn(past.name, greater, {"x": stop, "y": Const(top)}, at),
            ir.If(past, [raise_], [], at)], (start, top)


def _statements(body):
    for st in body:
        yield st
        if not isinstance(st, (ir.ForRange, ir.While)):    # (a nested loop's own jumps)
            yield from _statements(_children(st))


def index_ranges(body, avals, proved=None):
    """Integer names whose value lies in [lo, hi) wherever they are read, name -> (lo, hi): the
    variable of a loop over `range` of constants (a positive step, the name bound nowhere else),
    such a name plus or minus a constant, and `y % c` of an integer y and a constant c > 0
    (floor modulo, as Python's and NumPy's)."""
    bound = Counter(st.out for st in ir.walk_eqns(body))
    loops = []

    def visit(stmts):
        for st in stmts:
            if isinstance(st, ir.ForRange):
                loops.append(st)
            for child in _children(st):
                visit([child])
    visit(body)
    bound.update(loop.var for loop in loops)
    ranges = {}
    for var, rng in (proved or {}).items():
        if bound[var] == 1 and rng[0] < rng[1]:
            ranges[var] = rng
    for loop in loops:
        start, stop, step = (_int_const(b) for b in (loop.start, loop.stop, loop.step))
        if bound[loop.var] == 1 and None not in (start, stop, step) and step > 0 and start >= 0:
            ranges[loop.var] = (start, max(start, stop))
    for st in ir.walk_eqns(body):       # (in order: a name's operands are bound before it)
        shifted = _shifted(st, ranges, bound)
        if shifted is not None:                                 # i + 1, i - 1
            lo, hi = ranges[shifted[0]]
            ranges[st.out] = (lo + shifted[1], hi + shifted[1])
        if st.prim is mod_row and bound[st.out] == 1:
            c = _int_const(st.args.get("y"))
            x = st.args.get("x")
            xav = avals.get(x.name) if isinstance(x, Var) else None
            if c is not None and c > 0 and (_int_const(x) is not None or xav is not None and
                                             np.issubdtype(xav.dtype, np.integer)):
                ranges[st.out] = (0, c)
    return ranges


def _shifted(st, known, bound):
    """(name, c) when st binds, once, a name of `known` plus or minus an integer constant c."""
    x, c = st.args.get("x"), _int_const(st.args.get("y"))
    if (st.prim is add or st.prim is subtract) and isinstance(x, Var) and x.name in known and \
            c is not None and bound[st.out] == 1:
        return x.name, (c if st.prim is add else -c)
    return None


def _int_const(a):
    if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
        return int(a)           # (a loop's bounds may be plain numbers)
    if isinstance(a, Const) and isinstance(a.value, (int, np.integer)) and \
            not isinstance(a.value, (bool, np.bool_)):
        return int(a.value)
    return None


def may_raise(st, avals, ranges=None):
    """Can this statement raise in the compiled code (conservative: True when unsure)? `ranges`
    holds the integer names known to lie inside a range (index_ranges)."""
    if isinstance(st, (ir.Comment, ir.Break, ir.Continue)):
        return False
    if isinstance(st, ir.ForRange):
        step = st.step
        if not (isinstance(step, Const) and isinstance(step.value, (int, np.integer))
                and step.value != 0):
            return True
        return any(may_raise(s, avals, ranges) for s in st.body)
    if isinstance(st, (ir.If, ir.While)):
        return any(may_raise(s, avals, ranges) for s in _children(st))
    if not isinstance(st, Eqn):
        return True
    prim = st.prim
    if prim.check or not prim.pure and prim is not write_back:
        return True
    unsized = getattr(avals, "unsized", {})
    if unsized and (st.out in unsized or any(isinstance(a, Var) and a.name in unsized
                                             for a in ir.iter_atoms(st.args.values()))):
        return True     # lengths read at run time: operands that do not fit raise
    if prim is assign or prim is copy_row or prim.meta or prim.query:
        return False
    if prim is write_back:
        return _shape(st.args["dest"], avals) != _shape(st.args["value"], avals)
    if prim.lower is not None and not prim.reduction:
        return False
    if prim in _COUNTS or prim in _EXTREMES or prim.reduction and prim.reduce in ("max", "min"):
        return not _reduction_fits(st, avals, empty_ok=prim in _COUNTS)
    if prim.reduction:
        return prim.reduce not in _SAFE_REDUCE
    if prim.view == "index" or prim.subscript_write:
        x = st.args.get("x")
        index = st.args.get("index")
        selected = selected_shape(x, index, avals, ranges)
        if selected is None:
            return True
        if not prim.subscript_write:
            return False
        v = st.args.get("v")
        vs = _shape(v, avals)
        if vs is None:
            return True
        if selected is _MASKED:
            return vs != ()
        try:
            np.broadcast_shapes(vs, selected)
        except ValueError:
            return True
        return len(vs) > len(selected) or np.broadcast_shapes(vs, selected) != selected
    return True


def _reduction_fits(st, avals, empty_ok):
    """A count, any/all or max/min/argmax/argmin over no axis or one constant axis of an array
    of known shape (not empty, for the extremes)."""
    shape = _shape(st.args.get("x"), avals)
    axis = st.args.get("axis")
    if shape is None or axis is not None and not (isinstance(axis, Const) and (
            axis.value is None or _int_const(axis) is not None
            and -len(shape) <= axis.value < len(shape))):
        return False
    return empty_ok or 0 not in shape


_MASKED = object()      # a boolean mask: as many elements as it has True values


def _shape(a, avals):
    if isinstance(a, Const):
        v = a.value
        if isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
            return ()
        return None
    if isinstance(a, Var):
        av = avals.get(a.name)
        return None if av is None else tuple(av.shape)
    return None


def selected_shape(x, index, avals, ranges=None):
    """The shape x[index] has (_MASKED for a mask of x's shape); None when the subscript can
    raise or is not one of the basic forms. An integer name in `ranges` (index_ranges) whose
    range lies inside its axis counts as an integer that cannot raise."""
    xs = _shape(x, avals)
    if xs is None or not isinstance(index, IndexArg):
        return None
    items = []
    for it in index.items:
        if it is Ellipsis or it is None:
            items.append(it)
        elif isinstance(it, Const) and (it.value is Ellipsis or it.value is None):
            items.append(it.value)
        elif isinstance(it, SliceArg):
            bounds = []
            for b in (it.lower, it.upper, it.step):
                if b is None or isinstance(b, Const) and b.value is None:
                    bounds.append(None)
                elif isinstance(b, Const) and isinstance(b.value, (int, np.integer)) \
                        and not isinstance(b.value, bool):
                    bounds.append(int(b.value))
                else:
                    return None
            if bounds[2] == 0:
                return None
            items.append(slice(*bounds))
        elif isinstance(it, Const) and isinstance(it.value, (int, np.integer)) \
                and not isinstance(it.value, bool):
            items.append(int(it.value))
        elif isinstance(it, Var) and it.name in (ranges or ()) and Ellipsis not in items:
            axis = sum(1 for i in items if i is not None)
            lo, hi = ranges[it.name]
            if axis >= len(xs) or not -xs[axis] <= lo < hi <= xs[axis]:
                return None
            items.append(lo)
        elif isinstance(it, Var) and len(index.items) == 1:
            av = avals.get(it.name)
            if av is not None and av.dtype == np.bool_ and tuple(av.shape) == xs:
                return _MASKED
            return None
        else:
            return None
    try:
        return np.empty(xs, np.bool_)[tuple(items)].shape
    except (IndexError, TypeError, ValueError):
        return None
