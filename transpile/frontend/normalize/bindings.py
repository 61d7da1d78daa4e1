"""What the control-flow parts of the normalizer share: a value's leaves (the Var/Const atoms
inside a Struct) and its structure, running code into a separate statement list, copies into
the one name a variable has after an `if` or across a loop iteration, and copies that protect
other names aliasing that name before it is overwritten."""
import gast
import numpy as np

from transpile.core import ir
from transpile.core.avals import AVal
from transpile.frontend.normalize.aliasing import PARAM_PREFIX
from transpile.frontend.normalize.runlists import dtype_ndim
from transpile.core.ir import Const, Eqn, Var
from transpile.frontend.normalize.values import LIST_METHODS, Static, Struct
from transpile.primitives import by_name


def store_names(stmts):
    """Names these statements bind, and names of lists they change in place (`out.append(v)`:
    a loop carries them, so a list that grows by a different number of items than the loop
    knows when the code is generated is refused, never cut to the last item)."""
    out = []
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.append(n.id)
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in LIST_METHODS and isinstance(n.func.value, gast.Name):
                out.append(n.func.value.id)
    return list(dict.fromkeys(out))


def bound_names(stmts):
    """Names these statements bind by assignment (not lists changed through a method)."""
    return {n.id for st in stmts for n in gast.walk(st)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def sub_body(norm, fn):
    saved = norm.b.body
    norm.b.body = []
    norm.sub_depth = getattr(norm, "sub_depth", 0) + 1   # inside a run-time loop or branch
    try:
        result = fn()
    finally:
        body, norm.b.body = norm.b.body, saved
        norm.sub_depth -= 1
    return body, result


def emit_copy(norm, out, atom):
    norm.b.body.append(Eqn(out, by_name("assign"), {"x": atom}, norm.b.loc))
    avals = norm.b.avals       # (shapes known while normalizing, api/shape_folding.py)
    if avals is not None and out in avals and isinstance(atom, Var):
        # a loop's or a branch's join: another shape, or one known only at run time
        # (best = x[:i] in a loop), and `out`'s shape is not known (len(out) never folds)
        joined = avals.get(atom.name)
        if joined is None or joined.shape != avals[out].shape:
            del avals[out]
    return Var(out)


def join_scalar_aval(norm, out, leaves):
    """A new variable joining numbers of one dtype on every path is a number of that dtype
    (known while normalizing, under jit: `t = x * (a if c else 0.5)` keeps its shape)."""
    avals = norm.b.avals
    if avals is None or out in avals:
        return
    found = []
    for leaf in leaves:
        if isinstance(leaf, Const):
            v = leaf.value
            if not isinstance(v, (bool, int, float, complex, np.generic)):
                return
            found.append((np.asarray(v).dtype, not isinstance(v, np.generic)))
        elif isinstance(leaf, Var) and avals.get(leaf.name) is not None and \
                not avals[leaf.name].shape:
            found.append((avals[leaf.name].dtype, avals[leaf.name].weak))
        else:
            return
    if found and all(d == found[0][0] for d, _ in found):
        avals[out] = AVal((), found[0][0], all(w for _, w in found))


def value_leaves(value, node):
    if isinstance(value, Struct):
        leaves, tree = [], []
        for item in value.items:
            l, t = value_leaves(item, node)
            leaves += l
            tree.append(t)
        return leaves, ("struct", value.kind, tuple(value.keys), tuple(tree))
    if isinstance(value, (Var, Const)):
        return [value], "leaf"
    return [], ("static", id(value), value)


def rebuild_value(tree, it):
    if tree == "leaf":
        return next(it)
    if tree[0] == "struct":
        return Struct(tree[1], [rebuild_value(t, it) for t in tree[3]], tree[2])
    return tree[2]


def join_name(norm, user, k, n):
    base = user if n == 1 else f"{user}_{k}"
    if n != 1:
        return norm.namer.fresh(base)
    name = norm.core_name(user)
    if any(PARAM_PREFIX + name in f.env for f in norm.frames):
        # the name of an argument stays the caller's array (written back at the end)
        return norm.namer.fresh(name)
    return name


def aliased(env, target, keep):
    for name, value in env.items():
        if name != keep and any(isinstance(l, Var) and l.name == target
                                for l in value_leaves(value, None)[0]):
            return True
    return False


def _copy_of(norm, out, atom):
    """emit_copy into a new name, which keeps what is known of the value's type (a list
    appending the copy under a data `if` needs its dtype: frontend/normalize/runlists.py)."""
    known = dtype_ndim(norm, atom)          # (while the name still holds that value)
    emit_copy(norm, out, atom)
    avals = norm.b.avals
    if avals is not None and avals.get(atom.name) is not None:
        avals[out] = avals[atom.name]
    if known is not None:
        norm.mem.dtypes[out] = known
    if norm.mem.is_int(atom):
        norm.mem.int_vars.add(out)
    return Var(out)


def protect(norm, env, target, keep):
    """Before `target` is overwritten: values of other names that alias it get copies."""
    for name, value in list(env.items()):
        if name == keep:
            continue
        leaves, tree = value_leaves(value, None)
        if any(isinstance(l, Var) and l.name == target for l in leaves):
            new = []
            for l in leaves:
                if isinstance(l, Var) and l.name == target:
                    l = _copy_of(norm, norm.namer.fresh(name), l)
                new.append(l)
            env[name] = rebuild_value(tree, iter(new))


def tree_eq(a, b):
    if a == "leaf" or b == "leaf":
        return a == b
    if a[0] != b[0]:
        return False
    if a[0] == "static":
        x, y = a[2], b[2]
        if x is y:
            return True
        S = Static
        return isinstance(x, S) and isinstance(y, S) and (x.obj is y.obj or (
            ir.is_literal(x.obj) and type(x.obj) is type(y.obj) and x.obj == y.obj))
    return a[1:3] == b[1:3] and len(a[3]) == len(b[3]) and all(
        tree_eq(x, y) for x, y in zip(a[3], b[3]))


def read_before_bound(stmts):
    """Names a loop body may read before it binds them in the same iteration (on some path
    through it): `if i == 0: best = x[i] / else: best = max(best, x[i])` reads the previous
    iteration's `best`. A conservative reading of the statements in order: a name counts as
    bound after an `if` only where both paths bind it, never after a nested loop."""
    exposed = set()

    def loads(node, bound):
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in bound:
                exposed.add(n.id)

    def run(body, bound):
        for st in body:
            if isinstance(st, gast.If):
                loads(st.test, bound)
                b1, b2 = set(bound), set(bound)
                run(st.body, b1)
                run(st.orelse, b2)
                bound |= b1 & b2
            elif isinstance(st, (gast.For, gast.While)):
                loads(st.iter if isinstance(st, gast.For) else st.test, bound)
                inner = set(bound) | set(store_names([st.target])) \
                    if isinstance(st, gast.For) else set(bound)
                run(st.body, inner)
                run(st.orelse, set(bound))
            elif isinstance(st, gast.AugAssign):
                loads(st, bound)          # (the target is read first)
                bound.update(store_names([st]))
            elif isinstance(st, (gast.Assign, gast.AnnAssign)):
                if st.value is not None:
                    loads(st.value, bound)
                for t in (st.targets if isinstance(st, gast.Assign) else [st.target]):
                    loads(t, bound)       # (subscripts and attributes of stored names)
                bound.update(store_names([st]))
            else:
                loads(st, bound)
                bound.update(store_names([st]))
    run(stmts, set())
    return exposed


def trip_test(norm, start, stop, step, runs=True):
    """`stop > start` (step > 0; `<` for a negative step): does a range loop run at all?
    runs=False: the opposite test, `stop <= start`, that it runs zero times."""
    up = step.value > 0
    name = ("greater" if up else "less") if runs else ("less_equal" if up else "greater_equal")
    return norm.b.emit(by_name(name), {"x": stop, "y": start}, base="runs" if runs else "no_trip")
