"""Augmented assignment on a value that may be a scalar (part of transpile/frontend/normalize/aliasing.py's model).

`v op= e` writes in place when v is an array, so every alias and the base of a view see it;
when v is a scalar (`acc = x[0]` on a vector, `s = np.dot(x, x)`, a float argument) it only
rebinds v: NumPy copied the element, and the other names keep the old value. Which of the two
happens is known when the code is generated only for values known to be arrays
(`known_array`); for the others the generated code decides when it runs:

  * the base of an element view is written through `rt.setitem_if_array(base, index, v_new,
    v_old)` (base unchanged when v_old is a scalar);
  * every other name whose value the write changes (an alias of v, a view re-derived from
    it) gets `rt.if_array(v_old, its_new_value, its_old_value)`.
"""
from transpile.core.ir import SliceArg, Var
from transpile.frontend.normalize.values import Struct
from transpile.primitives import by_name
from transpile.primitives.internal.control import assign, cast_into
from transpile.primitives.numpy.structure import getitem


def known_array(model, name, depth=0):
    """Is core variable `name` certainly an ndarray (never a NumPy or Python scalar)?"""
    avals = model.norm.b.avals       # an argument's, where its shape is known (jit, retries)
    if avals is not None and avals.get(name) is not None:
        return bool(avals[name].shape)
    eqn = model.defs.get(name)
    if eqn is None and name in model.carried_from and depth <= 30:
        return known_array(model, model.carried_from[name], depth + 1)   # a loop's variable
    if eqn is None or depth > 30:
        return False
    if eqn.prim.array_result:
        return True
    if eqn.prim is getitem:
        items = eqn.args["index"].items
        return any(isinstance(it, SliceArg) or it is None or it is Ellipsis for it in items)
    if eqn.prim in (assign, cast_into):
        x = eqn.args.get("like", eqn.args.get("x"))
        return isinstance(x, Var) and known_array(model, x.name, depth + 1)
    if eqn.prim.elementwise:
        return any(isinstance(a, Var) and known_array(model, a.name, depth + 1)
                   for a in eqn.args.values())
    return False


def guard_others(model, target, memo, own, parents):
    """The rebinding map for names other than the one written (`own`): each new value but
    the bases' (already conditional) becomes `rt.if_array(target, new, old)`."""
    held = set()
    for env, name, value in model.entries():
        if not (env is own[0] and name == own[1]):
            held |= {leaf.name for leaf in leaves(value)}
    out = {}
    for k, v in memo.items():
        if k in held and k not in parents and v != Var(k):
            sel = select(model, target, v, Var(k), _stem(k))
            model.rel[sel.name] = (v, ("identity",))   # an alias of v when v is an array
            v = sel
        out[k] = v
    return out


def select(model, probe, if_array, otherwise, base):
    """`rt.if_array(probe, if_array, otherwise)`."""
    return model.norm.b.emit(by_name("if_array"), {"probe": probe, "a": if_array,
                                                   "b": otherwise}, base=base)


def write_back_element(model, parent, index, child_new, probe, base):
    """`rt.setitem_if_array(parent, index, child_new, probe)`."""
    return model.norm.b.emit(by_name("setitem_if_array"), {"x": parent, "index": index,
                                                           "v": child_new, "probe": probe},
                             base=base)


def leaves(value):
    """Var leaves of an env value (Struct items included)."""
    if isinstance(value, Var):
        return [value]
    if isinstance(value, Struct):
        out = []
        for item in value.items:
            out += leaves(item)
        return out
    return []


def _stem(name):
    head, _, tail = name.rpartition("_")
    return head if head and tail.isdigit() else name
