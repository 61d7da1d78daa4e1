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
array's own shape) and writes through them of a scalar or of a value of the selected shape,
the final write into an argument, and loops and branches made of these (a `range` with a
constant step). Anything else (an index read at run time, an assert, a library call, a
max of a possibly empty array, anything reading or binding a value of run-time length, whose
operands may not fit) counts as able to raise.
"""
import numpy as np

from transpile.core import ir
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, Var
from transpile.primitives.internal.control import assign, write_back
from transpile.primitives.numpy.structure import copy as copy_row

_SAFE_REDUCE = ("sum", "mean", "prod")


def owned_arguments(body, avals, params):
    """The arguments the function writes into (`rt.write_back`) that may be written in place:
    every statement from the first top-level statement that writes anything on cannot raise.
    Empty when one can (the writes then go to copies)."""
    written = {st.args["dest"].name for st in ir.walk_eqns(body)
               if st.prim is write_back and isinstance(st.args["dest"], Var)
               and st.args["dest"].name in params}
    if not written:
        return set()
    first = next((k for k, st in enumerate(body) if _writes(st)), len(body))
    if all(not may_raise(st, avals) for st in body[first:]):
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


def may_raise(st, avals):
    """Can this statement raise in the compiled code (conservative: True when unsure)?"""
    if isinstance(st, (ir.Comment, ir.Break, ir.Continue)):
        return False
    if isinstance(st, ir.ForRange):
        step = st.step
        if not (isinstance(step, Const) and isinstance(step.value, (int, np.integer))
                and step.value != 0):
            return True
        return any(may_raise(s, avals) for s in st.body)
    if isinstance(st, (ir.If, ir.While)):
        return any(may_raise(s, avals) for s in _children(st))
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
    if prim.reduction:
        return prim.reduce not in _SAFE_REDUCE
    if prim.view == "index" or prim.subscript_write:
        x = st.args.get("x")
        index = st.args.get("index")
        selected = selected_shape(x, index, avals)
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


def selected_shape(x, index, avals):
    """The shape x[index] has (_MASKED for a mask of x's shape); None when the subscript can
    raise or is not one of the basic forms."""
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
