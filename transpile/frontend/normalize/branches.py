"""Data-dependent `if`/`elif`/`else` and `a if c else b` in the normalizer: both paths are read
into their own statement lists and become one `If`; a variable bound differently on the two
paths is copied into one name at the end of each branch (and what the paths may alias is
joined in the alias model, transpile/frontend/normalize/aliasing.py). Conditions known when the code is generated
pick a branch before this (frontend/normalize/statements.py, frontend/normalize/expressions.py)."""
import numpy as np

from transpile.core import ir
from transpile.frontend.normalize import runlists
from transpile.frontend.normalize.aliasing import PARAM_PREFIX, Stale
from transpile.frontend.normalize.returns import RESULT_PREFIX
from transpile.frontend.normalize.values import RAISED, Placeholder, Raised
from transpile.errors import ReadBeforeSet, TranspileError
from transpile.core.ir import Const, Var
from transpile.primitives import by_name
from transpile.frontend.normalize.bindings import (emit_copy, join_name, join_scalar_aval, protect,
                                                   rebuild_value, sub_body,
                                          tree_eq, value_leaves)


def dynamic_if(norm, node, cond):
    cond = norm.to_arg(cond, node)
    frame = norm.frame
    loc = norm.b.loc
    frames = []
    for f in norm.frames:
        if all(f is not g for g in frames):
            frames.append(f)
    pres = [dict(f.env) for f in frames]
    results = []
    for stmts in (node.body, node.orelse):
        for f, pre in zip(frames, pres):
            f.env.clear()
            f.env.update(pre)
        frame.returned = None
        norm.b.loc = loc
        try:
            body, _ = sub_body(norm, lambda: norm.run_body(stmts))
        except ReadBeforeSet:
            if norm.mem.events is None:
                raise
            # reading a loop body ahead (loops.py): this path reads what an earlier
            # iteration left in a name the loop binds first; the other path gives its type
            for f, pre in zip(frames, pres):
                f.env.clear()
                f.env.update(pre)
            body, frame.returned = [], RAISED
        results.append((body, [dict(f.env) for f in frames], frame.returned))
    (b1, envs1, r1), (b2, envs2, r2) = results
    for f, pre in zip(frames, pres):
        f.env.clear()
        f.env.update(pre)
    # a path that raised neither returns nor goes on: the if does what the other path does
    raised = [isinstance(r, Raised) for r in (r1, r2)]
    if raised[0] or raised[1]:
        r1 = r2 = r2 if raised[0] else r1
    if (r1 is None) != (r2 is None):
        raise norm.error(node, "a return inside an if on array data needs a return on the "
                         "other path too", construct="if ...: return ...",
                         hint="assign the result to a variable in both branches and return "
                         "it after the if (or use np.where)")
    bodies = [b1, b2]
    # a list that grows on one path only (or by different counts): one RunList on both paths
    for f, pre, e1, e2 in zip(frames, pres, envs1, envs2):
        for n in [n for n in e1 if n in e2 and (e1[n] is not pre.get(n) or
                                               e2[n] is not pre.get(n))]:
            if runlists.needs_join(e1[n], e2[n]):
                runlists.join_lists(norm, n, [e1[n], e2[n]], bodies, [e1, e2], node, f)
    memo = {}
    # the current frame first (its names get the user's names), then inlined callers
    order = sorted(range(len(frames)), key=lambda i: frames[i] is not frame)
    joined = [set() for _ in frames]
    returned = set()        # join variables of a value returned from inside a loop
    # a join into a name (y = y_1 at the end of a branch) gives the names that held its value
    # before the if copies on that path (bindings.protect: `z = y` before `if c: y = y + 1`
    # makes z_2 = y there), so those names join too: rounds until no name is left
    while True:
        pending = [(i, n) for i in order for n in dict.fromkeys(list(envs1[i]) + list(envs2[i]))
                   if n not in joined[i] and (envs1[i].get(n) is not pres[i].get(n)
                                              or envs2[i].get(n) is not pres[i].get(n))]
        if not pending:
            break
        _join_names(norm, node, pending, frames, frame, pres, envs1, envs2, bodies, memo,
                    joined, returned)
    join_aliasing(norm, memo, frames, [envs1, envs2])
    for j in returned & set(memo.values()):
        norm.mem.maybe.pop(j, None)
        norm.mem.rel[j] = None
    if isinstance(r1, Raised) or (r1 is not None and r1 is r2):
        frame.returned = r1         # (both raised, or one raised and the other returned)
    elif r1 is not None:
        frame.returned = join_values(norm, "out", [r1, r2], bodies, [{}, {}], node)
    norm.b.loc = loc
    norm.b.body.append(ir.If(cond, b1, b2, loc))


def _join_names(norm, node, pending, frames, frame, pres, envs1, envs2, bodies, memo, joined,
                returned):
    """Join the (frame index, name) pairs bound differently on the two paths of an if."""
    for i, n in pending:
        f, pre, e1, e2 = frames[i], pres[i], envs1[i], envs2[i]
        joined[i].add(n)
        if n not in e1 or n not in e2:
            f.env.pop(n, None)
            continue
        if isinstance(e1[n], Stale) or isinstance(e2[n], Stale):
            f.env[n] = e1[n] if isinstance(e1[n], Stale) else e2[n]
            continue
        # a placeholder (frontend/normalize/returns.py) is read only on the paths that set
        # it: the value of the path that set it, copied there (a loop's counter moves on
        # after the break), with no copy on the other path
        if isinstance(e1[n], Placeholder) and isinstance(e2[n], Placeholder):
            f.env[n] = e1[n]
            continue
        result = isinstance(e1[n], Placeholder) or isinstance(e2[n], Placeholder) or \
            n.startswith(RESULT_PREFIX)
        if isinstance(e1[n], Placeholder):
            e1[n] = typed_like(norm, e2[n], bodies[0], node)
        elif isinstance(e2[n], Placeholder):
            e2[n] = typed_like(norm, e1[n], bodies[1], node)
        f.env[n] = join_values(norm, n, [e1[n], e2[n]], bodies, [e1, e2], node,
                               memo=memo, own=f is frame)
        if result:
            # a value returned from inside a loop: the loop breaks right after it is set, so
            # no later write changes it (`return a` in a loop writing a): its own buffer
            returned.update(l.name for l in value_leaves(f.env[n], None)[0]
                            if isinstance(l, Var))


def typed_like(norm, value, body, node):
    """Zeros with the structure and types of `value`, emitted at the end of `body` (where a
    placeholder meets a value: frontend/normalize/values.py). The types come from the shapes
    known while normalizing, else integers stay integers, booleans booleans, and other
    numbers are floats."""
    saved = norm.b.body
    norm.b.body = body
    try:
        leaves, tree = value_leaves(value, node)
        return rebuild_value(tree, iter([_zero_like(norm, leaf, node) for leaf in leaves]))
    finally:
        norm.b.body = saved


def _zero_like(norm, leaf, node):
    if isinstance(leaf, Const):
        v = leaf.value
        if isinstance(v, (bool, int, float, complex)) or hasattr(v, "dtype"):
            return Const(type(v)(0))
        return leaf                 # None, a string: the same constant
    avals = norm.b.avals
    av = avals.get(leaf.name) if avals is not None else None
    if av is not None:
        if av.shape:
            return norm.b.emit(by_name("zeros"), {"shape": Const(tuple(int(d) for d in av.shape)),
                                                  "dtype": Const(av.dtype.type)}, base="unset")
        return Const(av.dtype.type(0).item() if av.weak else av.dtype.type(0))
    if norm.mem.is_int(leaf):
        return Const(0)
    eqn = norm.mem.defs.get(leaf.name)
    if eqn is not None and eqn.prim.bool_result:
        return Const(False)
    known = runlists.dtype_ndim(norm, leaf)      # (a variable joined from values of one type)
    if known is not None and known[1] > 0:
        # an array whose length is known only at run time (`return A[i:]` in a loop): an
        # empty one of its rank and dtype (the other path's value is read)
        return norm.b.emit(by_name("zeros"), {"shape": Const((0,) * known[1]),
                                              "dtype": Const(known[0].type)}, base="unset")
    if known is not None and known[1] == 0:
        kind = known[0].kind
        if kind == "b":
            return Const(False)
        if kind in "iu" and known[0] == np.dtype(np.int64):
            return Const(0)
        return Const(known[0].type(0))
    return Const(0.0)


def join_aliasing(norm, memo, frames, branch_envs):
    """What the variables that join the paths of an if may share (transpile/frontend/normalize/aliasing.py)."""
    partners = {tuple(a.name for a in key if isinstance(a, Var)): j for key, j in memo.items()}
    for key, j in memo.items():
        norm.mem.join_relation(j, list(key), partners)
        if _versions_of_one_argument(norm, key, branch_envs):
            # `if c: a[0] = 5` on an argument: a on each path is that path's version of the
            # caller's array (a write on one path only), not another array
            norm.mem.maybe.pop(j, None)
        # a path's value also held by a name that does not join into j: j may alias it
        for k, envs in enumerate(branch_envs):
            leaf = key[k]
            if not isinstance(leaf, Var):
                continue
            for f, env in zip(frames, envs):
                for name, value in env.items():
                    if name not in f.env:
                        continue
                    if any(l == leaf for l in value_leaves(value, None)[0]) and not any(
                            l == Var(j) for l in value_leaves(f.env.get(name), None)[0]):
                        norm.mem.maybe.setdefault(j, set()).add(norm.mem.root(leaf.name))


def _versions_of_one_argument(norm, key, branch_envs):
    """Is the value on each path of an if the version of one argument's buffer that path
    leaves (its hidden entry, aliasing.param_entry), where none of them may alias another?"""
    if any(isinstance(a, Var) and a.name in norm.mem.maybe for a in key) or \
            not all(isinstance(a, Var) for a in key):
        return False
    entries = None
    for k, envs in enumerate(branch_envs):
        here = {name for env in envs for name, value in env.items()
                if name.startswith(PARAM_PREFIX) and value == key[k]}
        entries = here if entries is None else entries & here
        if not entries:
            return False
    return True


def join_values(norm, user, values, bodies, envs, node, memo=None, own=True):
    trees = []
    leaf_lists = []
    for v in values:
        l, t = value_leaves(v, node)
        leaf_lists.append(l)
        trees.append(t)
    if not all(tree_eq(trees[0], t) for t in trees[1:]):
        raise norm.error(node, f"{user!r} has a different structure (or a different Python "
                         "object) on the two paths of an if on array data",
                         construct=f"if ...: {user} = ...", cls=TranspileError,
                         hint="give it the same kind of value on both paths")
    out = []
    n = len(leaf_lists[0])
    for k in range(n):
        leaves = [l[k] for l in leaf_lists]
        if all(l == leaves[0] for l in leaves[1:]):
            out.append(leaves[0])
            continue
        key = tuple(leaves)
        if memo is not None and key in memo:
            out.append(Var(memo[key]))
            continue
        j = join_name(norm, user, k, n) if own else norm.namer.fresh(user.lstrip("."))
        if Var(j) not in leaves and memo is not None and norm.mem.referenced(j):
            j = norm.namer.fresh(j)     # the value before the if is still read in a branch
        for body, env, leaf in zip(bodies, envs, leaves):
            if leaf == Var(j):
                continue
            saved = norm.b.body
            norm.b.body = body
            try:
                protect(norm, env, j, user)
                emit_copy(norm, j, leaf)
            finally:
                norm.b.body = saved
        if memo is not None:
            memo[key] = j
        if all(norm.mem.is_int(leaf) for leaf in leaves):
            norm.mem.int_vars.add(j)        # an integer on every path
        d = runlists.same_dtype(norm, leaves)
        if d is not None:
            norm.mem.dtypes[j] = d          # one type on every path
        out.append(Var(j))
    return rebuild_value(trees[0], iter(out))


def dynamic_ifexp(norm, node, cond, base):
    cond = norm.to_arg(cond, node)
    loc = norm.b.loc
    bodies, values = [], []
    for e in (node.body, node.orelse):
        body, value = sub_body(norm, lambda: norm.to_arg(norm.expr(e, base), e))
        bodies.append(body)
        values.append(value)
    return chosen(norm, cond, bodies, values, base, loc)


def chosen(norm, cond, bodies, values, base, loc):
    """`values[0] if cond else values[1]`, each value computed by its statement list (an If
    binding one new name)."""
    out = norm.namer.fresh(base)
    for body, value in zip(bodies, values):
        norm.b.body, saved = body, norm.b.body
        emit_copy(norm, out, value)
        norm.b.body = saved
    norm.b.body.append(ir.If(cond, bodies[0], bodies[1], loc))
    join_scalar_aval(norm, out, values)
    if all(norm.mem.is_int(v) for v in values):
        norm.mem.int_vars.add(out)          # an integer on both paths
    d = runlists.same_dtype(norm, values)
    if d is not None:
        norm.mem.dtypes[out] = d
    # `new = cur if c else np.zeros_like(cur)`: out is cur's buffer on one path only, so a
    # write through either name is refused (frontend/normalize/aliasing.py) rather than seen by one of them only
    norm.mem.join_relation(out, values, {})
    if any(v != values[0] for v in values[1:]) and not all(
            not isinstance(v, Var) or norm.mem.is_number(v.name) for v in values):
        for v in values:
            if isinstance(v, Var) and norm.mem.referenced(v.name):
                norm.mem.maybe.setdefault(out, set()).add(norm.mem.root(v.name))
    return Var(out)
