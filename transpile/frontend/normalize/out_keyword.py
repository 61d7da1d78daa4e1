"""NumPy's `out=` keyword: `np.add(x, y, out=x)`, `np.clip(x, lo, hi, out=x)`,
`x.sum(axis=0, out=t)` write the call's result into the array named (as a statement or inside
an expression). The normalizer reads them as `t[...] = f(...)` followed by `t`."""
import copy

import gast
import numpy as np

from transpile.errors import TranspileError
from transpile.frontend.normalize.values import BoundMethod, Static


def numpy_out_call(norm, node):
    """The `out=` keyword of a NumPy call (`np.add(x, y, out=x)`, `np.clip(x, lo, hi,
    out=x)`, `x.sum(axis=0, out=t)`), or None: the call's result is written into it. A ufunc
    takes it by position too, after its inputs: `np.multiply(Z, Z, Z)` (a keyword made here)."""
    if not isinstance(node, gast.Call):
        return None
    kw = next((k for k in node.keywords if k.arg == "out"), None)
    if kw is None:
        return _positional_out(norm, node)
    if isinstance(kw.value, gast.Constant) and kw.value.value is None:
        return None
    try:
        func = norm.expr(node.func, "f")
    except TranspileError:
        return None
    if isinstance(func, BoundMethod):
        return kw
    obj = func.obj if isinstance(func, Static) else None
    if isinstance(obj, np.ufunc) or (getattr(obj, "__module__", None) or "").startswith("numpy"):
        return kw
    return None


def _positional_out(norm, node):
    """`np.add(x, y, t)`: a ufunc of one output given one argument more than its inputs; the
    last is its out (as the keyword `out=t`, which stands for it here)."""
    if not node.args or any(isinstance(a, gast.Starred) for a in node.args) or \
            isinstance(node.args[-1], gast.Constant):
        return None
    try:
        func = norm.expr(node.func, "f")
    except TranspileError:
        return None
    obj = func.obj if isinstance(func, Static) else None
    if not isinstance(obj, np.ufunc) or obj.nout != 1 or len(node.args) != obj.nin + 1:
        return None
    return gast.keyword(arg="out", value=node.args[-1])


def call_into_out(norm, node, kw, base):
    """`f(..., out=t)`: `t[...] = f(...)` (t keeps its dtype, every alias of t sees the
    write), and the value of the call is t."""
    target = kw.value
    if isinstance(target, gast.Tuple) and len(target.elts) == 1:
        target = target.elts[0]
    call_ = gast.copy_location(gast.Call(func=node.func,
                                         args=[a for a in node.args if a is not kw.value],
                                         keywords=[k for k in node.keywords if k is not kw]),
                               node)
    if isinstance(target, gast.Subscript):
        # out=Z[i]: a name for the view first (`Z_out = Z[i]`), then the write through it (the
        # alias model writes Z; through a copy, Z[idx] of an index array, it refuses)
        view = gast.Name(id=_view_name(norm, target), ctx=gast.Store(), annotation=None,
                         type_comment=None)
        bind = gast.copy_location(gast.Assign(targets=[view], value=copy.deepcopy(target),
                                              type_comment=None), node)
        gast.fix_missing_locations(bind)
        norm.run_body([bind])
        target = gast.Name(id=view.id, ctx=gast.Load(), annotation=None, type_comment=None)
    dest = gast.copy_location(gast.Subscript(value=copy.deepcopy(target),
                                             slice=gast.Constant(value=Ellipsis, kind=None),
                                             ctx=gast.Store()), node)
    write = gast.copy_location(gast.Assign(targets=[dest], value=call_, type_comment=None), node)
    gast.fix_missing_locations(write)
    norm.run_body([write])
    return norm.expr(copy.deepcopy(target), base)


def _view_name(norm, target):
    root = target
    while isinstance(root, (gast.Subscript, gast.Attribute)):
        root = root.value
    base = f"{root.id}_out" if isinstance(root, gast.Name) else "out_view"
    name, k = base, 1
    while name in norm.frame.env or name in norm.namer.taken:
        k += 1
        name = f"{base}_{k}"
    return name
