"""Loops in the normalizer.

  * `for` over `range(...)`/`np.arange(...)`, over an array's first axis, over `zip`/`enumerate`
    becomes a `ForRange` index loop; `for` over a tuple/list of known structure (`for W, b in
    params:`) is unrolled while generating code,
  * `while` becomes `While`,
  * `break`/`continue` become flags (`_break_1 = True`, the rest of the body under
    `if not (_break_1 or _continue_1)`), so the transforms never see a jump.

Loop-carried variables keep one name through the loop (copied into it before the loop when the
value came from elsewhere); the transforms' SSA pass (core/rename.py) gives each binding
its own name where a transform needs it.
"""
import copy
from collections import Counter

import gast
import numpy as np

from transpile.core import ir
from transpile.core.avals import AVal
from transpile.frontend.normalize.aliasing import (PARAM_PREFIX, Stale, read_ahead, stale_error,
                                                   writes_in)

ITER_PREFIX = ".iter."   # hidden env entries: the array a for loop iterates over
from transpile.errors import ShapesNeeded, TranspileError
from transpile.core.ir import Const, IndexArg, SliceArg, Var
from transpile.frontend.normalize.branches import chosen, typed_like
from transpile.frontend.normalize.bindings import (bound_names, emit_copy, join_name, protect,
                                          read_before_bound, rebuild_value, store_names,
                                          sub_body, tree_eq, trip_test, value_leaves)
from transpile.frontend.normalize import runlists
from transpile.frontend.parse import unrolled_container
from transpile.frontend.normalize.returns import lift_jumping_elses
from transpile.frontend.normalize.values import (Placeholder, Raised, RunList, Static, Struct,
                                                iteration_items)
from transpile.primitives import by_name
from transpile.frontend.normalize.builtins import (_plus, _zip_keywords, enumerate_call, rows_known,
                                                   items_of)


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _set_flag(flag, value, like):
    node = gast.Assign(targets=[_name(flag, True)], value=gast.Constant(value=value, kind=None),
                       type_comment=None)
    return gast.copy_location(node, like)


def _has_jump(stmts):
    """break/continue belonging to this loop (not to a nested one)."""
    for st in stmts:
        if isinstance(st, (gast.Break, gast.Continue)):
            return True
        if isinstance(st, gast.If) and (_has_jump(st.body) or _has_jump(st.orelse)):
            return True
        if isinstance(st, (gast.With,)) and _has_jump(st.body):
            return True
    return False


def lower_jumps(norm, node):
    """Rewrite break/continue of this loop into flags. Returns the flag to test (or None)."""
    stmts = lift_jumping_elses(node.body)
    if not _has_jump(stmts):
        return None, None
    brk = norm.namer.fresh("_break")
    cont = norm.namer.fresh("_continue")

    def lower(stmts):
        out = []
        for k, st in enumerate(stmts):
            if isinstance(st, gast.Break):
                out.append(_set_flag(brk, True, st))
                return out
            if isinstance(st, gast.Continue):
                out.append(_set_flag(cont, True, st))
                return out
            if isinstance(st, gast.If) and (_has_jump(st.body) or _has_jump(st.orelse)):
                new = gast.If(test=st.test, body=lower(st.body) or [gast.Pass()],
                              orelse=lower(st.orelse))
                out.append(gast.copy_location(new, st))
                rest = stmts[k + 1:]
                if rest:
                    test = gast.UnaryOp(op=gast.Not(), operand=gast.BoolOp(
                        op=gast.Or(), values=[_name(brk), _name(cont)]))
                    guard = gast.If(test=gast.copy_location(test, st), body=lower(rest),
                                    orelse=[])
                    out.append(gast.copy_location(guard, rest[0]))
                return out
            out.append(st)
        return out
    body = [_set_flag(cont, False, stmts[0])] + lower(stmts)
    return brk, body


def _trip_count(norm, start, stop, step):
    """The number of iterations of range(start, stop, step) (None: a step known only at run
    time), an int atom."""
    if not isinstance(step, Const) or not isinstance(step.value, (int, np.integer)) or \
            step.value == 0:
        return None
    s = int(step.value)
    span = norm.b.emit(by_name("subtract"), {"x": stop, "y": start} if s > 0 else
                       {"x": start, "y": stop}, base="trips")
    if abs(s) != 1:
        span = norm.b.emit(by_name("add"), {"x": span, "y": Const(abs(s) - 1)}, base="trips")
        span = norm.b.emit(by_name("floor_divide"), {"x": span, "y": Const(abs(s))},
                           base="trips")
    n = norm.b.emit(by_name("maximum"), {"x": span, "y": Const(0)}, base="trips")
    if isinstance(n, Var):
        norm.mem.int_vars.add(n.name)
    return n


def _appends_per_iteration(node, name):
    """Appends to `name` in a loop body outside loops nested in it (None: one inside a nested
    loop, whose count is not known)."""
    count = 0
    for n in gast.walk(gast.Module(body=node.body, type_ignores=[])):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                n.func.attr in ("extend", "insert") and isinstance(n.func.value, gast.Name) \
                and n.func.value.id == name or isinstance(n, gast.AugAssign) and \
                isinstance(n.target, gast.Name) and n.target.id == name:
            return None         # items added in numbers not counted here: the buffer grows

    def walk(stmts):
        nonlocal count
        for st in stmts:
            if isinstance(st, (gast.For, gast.While)):
                if any(_is_append(n, name) for n in gast.walk(st)):
                    return False
                continue
            for n in gast.walk(st):
                count += _is_append(n, name)
        return True
    return count if walk(node.body) else None


def _removes(node, name):
    """Does the loop body take items out of the list `name` (pop, clear...: appends may then
    outnumber its length; its buffer grows instead)?"""
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
               n.func.attr in ("pop", "clear", "remove") and isinstance(n.func.value, gast.Name)
               and n.func.value.id == name for n in gast.walk(gast.Module(body=node.body,
                                                                           type_ignores=[])))


def _is_append(n, name):
    return isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
        n.func.attr == "append" and isinstance(n.func.value, gast.Name) and \
        n.func.value.id == name


def carried_setup(norm, stmts, extra=(), plan=None, node=None, trips=None):
    """Before a loop: every value the body changes gets one name that holds it at the top
    of each iteration (copied in here, copied back at the end of the body). Names that
    share a buffer and change together (a write seen through aliases) share that name."""
    frame = norm.frame
    entries = [(frame.env, n) for n in store_names(stmts) + list(extra)]
    if plan is not None:
        if plan.split and plan.split_argument:
            raise norm.error(node, f"{plan.split!r} is written in place by the loop body and "
                             "then rebound to another array in the same body: the caller's "
                             "array is written on the first iteration only, which the "
                             "transforms cannot follow",
                             construct="for/while loop", cls=TranspileError,
                             hint=f"keep one buffer ({plan.split}[...] = ... instead of "
                                  f"{plan.split} = ...), or write into a copy "
                                  f"({plan.split} = {plan.split}.copy() before the loop) and "
                                  "copy what the caller must see into the argument after it")
        if plan.split:
            raise norm.error(node, f"{plan.split!r} shares an array with another name when "
                             "a loop body writes into it, but the two are bound to different "
                             "values by the end of the body: the transforms cannot follow "
                             "which buffer each one holds on the next iteration",
                             construct="for/while loop", cls=TranspileError,
                             hint="make the copy explicit (np.copy(...)) before the loop")
        entries += plan.changed
    carried, joined, seen = Carried(), {}, set()
    entered = []        # (join variable, its value on entry): view facts once all are joined
    # arguments whose buffer the loop writes: their own name stays the caller's array (it is
    # written back after the function), so the loop carries the new versions under a new name
    written_args = {n[len(PARAM_PREFIX):] for _, n in entries if n.startswith(PARAM_PREFIX)}
    at_entry = {}       # leaf name on entry -> the join variables it went to (argument buffers)
    by_leaf = {}        # leaf name on entry -> [(entry name, join variable)]
    for env, n in entries:
        if (id(env), n) in seen or n not in env:
            continue
        seen.add((id(env), n))
        value = env[n]
        post_value = plan.post_values.get((id(env), n)) if plan is not None else None
        if runlists.grows_in_loop(value, post_value):
            # a list the body makes grow: a RunList, its two variables carried by the loop
            # (its buffer as long as the loop can make it, where the body appends a known
            # number of times per iteration: no growth, the loop counts its trips)
            frame_of = next(f for f in norm.frames if f.env is env)
            per = _appends_per_iteration(node, n) if trips is not None and \
                not _removes(node, n) else None
            n_trips = trips() if per else None
            value = runlists.before_loop(norm, n, value, post_value, node, frame_of,
                                         n_trips, per)
            if value.presized:
                carried.presized.append(value)
            entries += [(env, value.items), (env, value.count)]
            continue
        if isinstance(value, Placeholder):
            # a return's result (frontend/normalize/returns.py): zeros typed like the value
            # the body leaves in it (read ahead), so the loop carries one type
            post = plan.post_values.get((id(env), n)) if plan is not None else None
            if post is None or isinstance(post, Placeholder):
                continue
            value = env[n] = typed_like(norm, post, norm.b.body, node)
        leaves, tree = value_leaves(value, None)
        if not leaves:
            if isinstance(value, Struct):
                # an empty list (or one of constants): its structure must not change either
                carried[(id(env), n)] = (env, n, tree, [])
            continue
        names = []
        for k, leaf in enumerate(leaves):
            gkey = None
            post = plan.key(env, n, k) if plan is not None else None
            if plan is not None and isinstance(leaf, Var):
                gkey = (leaf.name, post)
            if gkey in joined:
                names.append(Var(joined[gkey]))
                continue
            j = join_name(norm, n, k, len(leaves)) if env is frame.env else \
                norm.namer.fresh(n.lstrip("."))
            if leaf == Var(j) and (j in written_args or j in norm.mem.unbound_unless_run
                                   or held_elsewhere(norm, j, plan, gkey, env, n)):
                j = norm.namer.fresh(j)
            if leaf != Var(j):
                leaf = _bound_if_the_loop_ran(norm, leaf, n)
                protect(norm, env, j, n)
                emit_copy(norm, j, leaf)
                entered.append((j, leaf))
            elif isinstance(leaf, Var) and norm.mem.view(leaf.name) is not None:
                # a view carried under its own name (`y = x[1:]` before a loop writing x):
                # its parent may be carried under a new name, which its relation must follow
                # (or the view is not derived again after a write, and reads a stale value)
                entered.append((j, leaf))
            if gkey is not None:
                joined[gkey] = j
            if post is None and plan is not None:      # the body ends it as a constant
                end = value_leaves(plan.post_values.get((id(env), n)), None)[0] \
                    if (id(env), n) in plan.post_values else []
                post = end[k] if k < len(end) and isinstance(end[k], Const) else None
            _mark_int(norm, j, leaf, post)
            if post is not None:
                # the body (read ahead) ends it with the type it entered with: its type
                end = post if isinstance(post, Const) else Var(post)
                d = runlists.same_dtype(norm, [leaf, end])
                if d is not None:
                    norm.mem.dtypes[j] = d
            elif j not in norm.mem.dtypes:
                # the type it enters with, checked at the end of the body (carried_finish)
                d = runlists.dtype_ndim(norm, leaf)
                if d is not None:
                    norm.mem.dtypes[j] = d
                    carried.tentative[j] = d
            if isinstance(leaf, Var) and leaf.name in written_args:
                at_entry.setdefault(leaf.name, set()).add(j)
            if isinstance(leaf, Var):
                by_leaf.setdefault(leaf.name, []).append((n, j))
                carried.entry_leaf[j] = leaf.name
            names.append(Var(j))
        env[n] = rebuild_value(tree, iter(names))
        carried[(id(env), n)] = (env, n, tree, names)
    for leaf, held in by_leaf.items():
        if len({j for _, j in held}) > 1:      # one array on entry, several names for it after
            for n, j in held:
                carried.split[j] = n.replace(PARAM_PREFIX, "")
    avals = norm.b.avals
    numbers = getattr(norm.b, "numbers", ())
    for arg, js in at_entry.items():
        av = avals.get(arg) if avals is not None else None
        if len(js) > 1 and (av is None or not av.weak) and arg not in numbers:
            # `x += v` on an argument in the loop: an array is written in place (the caller
            # sees it), a number is rebound; which one x is must be known to follow it
            raise norm.error(node, f"{arg!r} is written in a loop by an augmented assignment, "
                             "and whether it is an array (written in place) or a number "
                             "(rebound) is not known when the code is generated",
                             cls=ShapesNeeded)
    # a view's parent may be joined after the view itself (`v = V[1:-1]` carried before `V`)
    for j, leaf in entered:
        norm.mem.loop_entry(j, leaf, joined)
    return carried


def _unfold_changing_shapes(norm, carried, run):
    """A loop variable that keeps its entry value's name also keeps its shape, known while
    normalizing (jit), and reads of it fold (`buf.shape[0]`, `len(buf)`). Where the body gives
    it another shape (`buf = np.concatenate(...)` in some iteration), that shape is not the
    one of later iterations: the loop is read once more with the variables as they are at the
    top of an iteration, and a variable the body ends with another shape (carried_finish's copy
    then drops its shape) is read as of run-time shape from then on."""
    avals = norm.b.avals
    if avals is None or not any(j.name in avals for _, _, _, names in carried.values()
                                for j in names):
        return
    read_ahead(norm, run)


def _int_aval(norm, var):
    """A range loop's counter is a Python int (its type known while normalizing, under jit:
    the shapes of the values it indexes are known too)."""
    if norm.b.avals is not None and var not in norm.b.avals:
        norm.b.avals[var] = AVal((), np.dtype(np.int64), True)


def _sets_placeholder(norm, stmts):
    """Does the body set a name that holds a placeholder (its type is read ahead)?"""
    env = norm.frame.env
    return any(isinstance(env.get(n), Placeholder) for n in store_names(stmts))


def _mark_int(norm, j, leaf, post):
    """The loop variable j is an integer when it enters as one and the body, read ahead with
    it holding that integer, ends it as one (built from integers by integer operations: the
    same holds on every later iteration). Then `x[j]` is an element or a row view, never a
    gather by an integer array (a view the alias model can follow through writes)."""
    mem = norm.mem
    if post is None or not mem.is_int(leaf):
        return
    if isinstance(post, Const):
        if mem.is_int(post):
            mem.int_vars.add(j)
        return
    if post == getattr(leaf, "name", None) or mem.is_int(Var(post)):
        mem.int_vars.add(j)


def _check_tentative_types(norm, carried, node):
    """A loop variable was taken to keep the type it entered with (mem.dtypes): the body must
    end it with that type (computed with the assumption: the same on every iteration). Where it
    does not, the assumption is dropped; a list of run-time length that relied on it is
    refused (its items' type would not be known)."""
    for env, n, tree, names in carried.values():
        value = env.get(n)
        if value is None:
            continue
        leaves = value_leaves(value, node)[0]
        for leaf, j in zip(leaves, names):
            d = carried.tentative.get(j.name)
            if d is None or norm.mem.dtypes.get(j.name) != d:
                continue
            if leaf == j:
                continue
            # (reading the body's result may read j's own assumed type: that is not a list
            # relying on it, so what this check reads is not recorded as used)
            used = set(norm.mem.dtypes_used)
            post = runlists.dtype_ndim(norm, leaf)
            norm.mem.dtypes_used = used
            if post != d:
                del norm.mem.dtypes[j.name]
                if j.name in norm.mem.dtypes_used:
                    raise norm.error(node, f"{n!r} changes type in this loop, and a list whose "
                                     "length is known only when the code runs holds values "
                                     "computed from it", cls=TranspileError,
                                     hint=f"give {n!r} its final type before the loop "
                                          "(0.0, not 0)")


def _held_apart(norm, carried, j):
    """Is the array loop variable j took on entry also held by a name the loop does not carry
    (the caller's argument, an alias made before the loop)?"""
    entry = carried.entry_leaf.get(j)
    if entry is None:
        return False
    keys = {(id(env), n) for env, n, _, _ in carried.values()}
    for env, name, value in norm.mem.entries():
        if (id(env), name) in keys:
            continue
        if any(isinstance(l, Var) and (l.name == entry or entry in norm.mem.ancestors(l.name))
               for l in value_leaves(value, None)[0]):
            return True
    return False


class Carried(dict):
    """carried_setup's result: (id(env), name) -> (env, name, tree, join variables), and in
    `split` the join variables of names that held one array on entry but are carried apart
    (the name each stands for)."""

    def __init__(self):
        super().__init__()
        self.split = {}
        self.entry_leaf = {}    # join variable -> the name of the value it took on entry
        self.presized = []      # RunLists whose buffer holds every item the loop appends
        self.tentative = {}     # join variable -> the type assumed on entry (mem.dtypes)


def held_elsewhere(norm, j, plan, gkey, env0, n0):
    """Is variable j held by a name that does not change with it in the loop?"""
    for env, name, value in norm.mem.entries():
        if env is env0 and name == n0:
            continue
        ls = value_leaves(value, None)[0]
        if any(isinstance(l, Var) and l.name == j for l in ls):
            if plan is None or gkey not in [(j, plan.key(env, name, k)) for k in range(len(ls))]:
                return True
    return False


def carried_finish(norm, carried, node):
    _check_tentative_types(norm, carried, node)
    done = {}
    written = _written_names(getattr(node, "body", []))
    walking = written & _rebound_to_own_view(getattr(node, "body", []))
    if walking:
        n = sorted(walking)[0]
        raise norm.error(node, f"{n!r} is written through in this loop and rebound to a view "
                         f"of itself ({n} = {n}[...]): the transforms cannot follow which "
                         "elements of its base it covers from one iteration to the next",
                         cls=TranspileError, construct=f"{n} = {n}[...] in a loop",
                         hint="index the base with a moving offset instead (a[k + i])")
    joins = {j.name: n for _, n, _, names in carried.values() for j in names}
    for env, n, tree, names in carried.values():
        for leaf in value_leaves(env.get(n), None)[0] if n in written else ():
            if isinstance(leaf, Var) and leaf.name in joins and joins[leaf.name] != n and (
                    leaf.name in carried.split or norm.mem.view(leaf.name) is not None
                    or _held_apart(norm, carried, leaf.name)):
                # `u, un = un, u` where u is also held by another name (the caller's array):
                # from the next iteration on, a write through `un` must change both
                raise norm.error(node, f"{n!r} is written into in this loop and ends the body "
                                 f"holding the array {joins[leaf.name]!r} held at its "
                                 "start, which another name (or the caller) also holds: the "
                                 "transforms cannot follow which buffer each name holds from "
                                 "one iteration to the next", cls=TranspileError,
                                 hint="copy instead of swapping names (un[...] = u), or write "
                                      "the result into a new array each step")
    for env, n, tree, names in carried.values():
        value = env.get(n)
        leaves, t = value_leaves(value, node) if value is not None else ([], None)
        if value is not None and isinstance(value, Struct) and value.kind == "list" and \
                tree[0] == "struct" and tree[1] == "list" and len(value.items) != len(tree[3]):
            raise norm.error(node, f"the list {n!r} grows or shrinks in a loop whose trip count "
                             "is known only when the code runs (a while loop, a range or array "
                             "of run-time length, or an append under an if on array data)",
                             cls=ShapesNeeded, construct=f"{n}.append(...) in a loop",
                             hint="write into an array instead (y = np.zeros(n); y[k] = v; "
                                  "k += 1; then y[:k]), or loop over a length known when the "
                                  "code is generated")
        if value is None or not tree_eq(t, tree):
            raise norm.error(node, f"{n!r} changes structure (or Python object) inside a loop",
                             cls=TranspileError,
                             hint="keep loop variables arrays/numbers of one structure")
        for leaf, j in zip(leaves, names):
            if j.name in done:
                if done[j.name] != leaf:
                    raise norm.error(node, f"{n!r} shared an array with another name at "
                                     "the start of the loop body but not at its end",
                                     cls=TranspileError,
                                     hint="make the copy explicit (np.copy(...))")
                continue
            done[j.name] = leaf
            if leaf != j:
                protect(norm, env, j.name, n)
                emit_copy(norm, j.name, leaf)
        env[n] = rebuild_value(tree, iter(names))


# calls that write into an array: its methods (`y.sort()`, `A[i].fill(0)`, `y.put(...)`) and
# functions given it first (`np.add.at(y, ...)`, `np.put(y, ...)`, `np.fill_diagonal(y, v)`)
_WRITING_METHODS = ("sort", "fill", "put")
_WRITING_FUNCTIONS = ("at", "put", "fill_diagonal")


def _rebound_to_own_view(stmts):
    """Names the statements rebind to a view of themselves (`cur = cur[1:]`, `v = v.T`,
    `w = w.reshape(-1)`)."""
    out = set()
    for st in stmts:
        for n in gast.walk(st):
            if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and
                    isinstance(n.targets[0], gast.Name)):
                continue
            value, name, view = n.value, n.targets[0].id, False
            while True:
                if isinstance(value, gast.Subscript) and _basic_index(value.slice):
                    value = value.value
                elif isinstance(value, gast.Attribute) and value.attr == "T":
                    value = value.value
                elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
                        and value.func.attr in _VIEW_METHODS:
                    value = value.func.value
                else:
                    break
                view = True
            if view and isinstance(value, gast.Name) and value.id == name:
                out.add(name)
    return out


_VIEW_METHODS = ("reshape", "ravel", "transpose", "squeeze", "swapaxes")


def _basic_index(index):
    """A subscript of slices and integer constants (a view, never a gather)."""
    items = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(i, gast.Slice) for i in items) and all(
        isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and
        isinstance(i.value, int) for i in items)


def _written_names(stmts):
    """Names written through in these statements (`y[i] = v`, `y += v`, `y[...] += v`,
    `y.sort()`, `np.add.at(y, i, v)`, `np.exp(y, out=y)`)."""
    out = set()
    for st in stmts:
        for n in gast.walk(st):
            target = None
            if isinstance(n, gast.AugAssign):
                target = n.target
            elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
                target = n
            elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
                owner = n.func.value
                if n.func.attr in _WRITING_METHODS and not (
                        isinstance(owner, gast.Name) and owner.id == "np"):
                    target = owner              # y.sort(), A[i].fill(0), y.put(i, v)
                elif n.func.attr in _WRITING_FUNCTIONS and n.args:
                    target = n.args[0]          # np.add.at(y, i, v), np.put(y, i, v)
            if isinstance(n, gast.keyword) and n.arg == "out":
                target = n.value
            while isinstance(target, (gast.Subscript, gast.Attribute)):
                target = target.value
            if isinstance(target, gast.Name):
                out.add(target.id)
    return out


def run_loop_body(norm, stmts, node):
    norm.run_body(stmts)
    if isinstance(norm.frame.returned, Raised):
        norm.frame.returned = None      # (the loop may run no iteration: code after it runs)
    if norm.frame.returned is not None:
        raise norm.error(node, "return inside a loop is not supported",
                         construct="return (inside a loop)",
                         hint="store the value, break, and return after the loop")


def _breaks_into(stmts, flag):
    """The loop body with `flag = False` before each of this loop's own breaks."""
    out = []
    for st in stmts:
        if isinstance(st, gast.Break):
            out += [_set_flag(flag, False, st), st]
        elif isinstance(st, gast.If):
            st = gast.copy_location(gast.If(test=st.test, body=_breaks_into(st.body, flag),
                                            orelse=_breaks_into(st.orelse, flag)), st)
            out.append(st)
        else:
            out.append(st)
    return out


def loop_with_else(norm, node, run):
    """for/while ... else: the else block runs when the loop ended without a break (a flag
    cleared before each break of this loop, tested after it)."""
    loop = copy.copy(node)
    loop.orelse = []
    # `for ...: if c: found = i; break / else: found = -1`: bound on every way out of the
    # loop, but not before it; the loop starts it as a placeholder (typed where it is joined)
    for n in set(store_names(node.body)) & set(store_names(node.orelse)):
        if n not in norm.frame.env:
            norm.frame.env[n] = Placeholder()
    if not _has_jump(node.body):
        run(norm, loop)
        norm.run_body(node.orelse)
        return
    flag = norm.namer.fresh("_no_break")
    norm.run_body([_set_flag(flag, True, node)])
    loop.body = _breaks_into(node.body, flag)
    run(norm, loop)
    test = gast.copy_location(_name(flag), node)
    norm.run_body([gast.copy_location(gast.If(test=test, body=node.orelse, orelse=[]), node)])


def _bound_in_a_loop_with_break(norm, node):
    """`for ...: lam = ...; if done: break` then `return lam`: a loop with a break runs its
    body under a flag (lower_jumps), so a name the body binds first is bound on one path of
    an if only and would not exist after the loop. A name bound first in the body and read
    outside the loop starts as a placeholder (frontend/normalize/values.py): zeros typed like
    the body's value, carried by the loop, as Python leaves the last iteration's value."""
    parsed = norm.frame.parsed
    if parsed is None or getattr(parsed, "node", None) is None:
        return
    def loads(tree):
        return Counter(n.id for n in gast.walk(tree)
                       if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    everywhere, inside = loads(parsed.node), loads(node)
    for n in store_names(node.body):
        if n not in norm.frame.env and everywhere[n] > inside[n]:
            norm.frame.env[n] = Placeholder()


def _carried_from_an_earlier_iteration(norm, node):
    """`for i ...: if i == 0: best = x[i] / else: best = max(best, x[i])`: a name the body
    binds, not bound before the loop, and read on some path before the body binds it reads
    the previous iteration's value. It starts as a placeholder (values.py), typed by the body
    read ahead; a read on the first iteration would raise UnboundLocalError in Python (and
    here at the line, where the code makes it certain)."""
    bound = bound_names(node.body)
    for n in read_before_bound(node.body):
        if n not in norm.frame.env and n in bound:      # (not `np` of np.sort(x))
            norm.frame.env[n] = Placeholder()


def stmt_For(norm, node):
    if node.orelse:
        return loop_with_else(norm, node, stmt_For)
    _carried_from_an_earlier_iteration(norm, node)
    brk, body_stmts = lower_jumps(norm, node)
    if brk:
        _bound_in_a_loop_with_break(norm, node)
    stmts = body_stmts if brk else node.body
    if brk:
        norm.frame.env[brk] = Const(False)
        if _breaks_here(node.body):
            node, body_stmts = _target_in_guard(norm, node, body_stmts)
        test = gast.UnaryOp(op=gast.Not(), operand=_name(brk))
        stmts = [gast.copy_location(gast.If(test=gast.copy_location(test, node),
                                            body=body_stmts, orelse=[]), node)]
    it = node.iter
    if _reversed_range(norm, it):      # for i in range(n)[::-1]: reversed(range(n))
        return reversed_loop(norm, node, stmts, it.value)
    func = None
    if isinstance(it, gast.Call):
        func = norm.expr(it.func, "f")
    obj = func.obj if isinstance(func, Static) else None
    if obj is reversed and len(it.args) == 1 and not it.keywords:
        done = reversed_loop(norm, node, stmts, it.args[0])
        if done:
            return
    # sequences of known structure: unroll
    if obj is zip or obj is enumerate or func is None or not isinstance(func, Static):
        value = None if obj in (zip, enumerate) else norm.expr(it, "seq")
        start = None
        if obj is enumerate:
            seq_node, start = enumerate_call(norm, it)
        elif obj is zip:
            _zip_keywords(norm, it)
        if obj is enumerate and _is_call_of(norm, seq_node, zip):
            _zip_keywords(norm, seq_node)
            inner = [norm.expr(a, "seq") for a in seq_node.args]
            if any(items_of(norm, p, it, "zip") is None for p in inner):
                # enumerate(zip(x, y)) over arrays of lengths known at run time: one loop
                return index_loop(norm, node, stmts, inner + [start], "enumerate_zip")
        if obj in (zip, enumerate):
            parts = [norm.expr(a, "seq") for a in (it.args if obj is zip else [seq_node])]
            for k, p in enumerate(parts):
                if isinstance(p, RunList):      # a list of run-time length: its items' array
                    if runlists.changed_in(norm, node.body, p):
                        raise norm.error(node, f"the list {p.user!r} is changed inside the "
                                         "loop that runs over it", cls=TranspileError,
                                         hint="loop over a copy: for v in list(...)")
                    parts[k] = runlists.loop_view(norm, p, node)
            known = [_known_items(norm, p) for p in parts]
            if any(k is not None for k in known):
                # sequences of known structure unroll; so do zip(params, range(n)) and
                # zip(params, x): the list's length is known now (as a loop, the list would
                # be one stacked array)
                n = min(len(k) for k in known if k is not None)
                seqs = [k if k is not None else _items_to(norm, p, it, n)
                        for p, k in zip(parts, known)]
                return unroll(norm, node, stmts, _zipped(norm, obj, seqs, start, node))
            if appends_to_list(norm, node.body):
                # the list grows by one item per iteration: unrolled where the trip count is
                # known and small (or the items are not numbers), else a RunList (runlists.py)
                seqs = [items_of(norm, p, it, f"a {obj.__name__} loop that appends to a list")
                        for p in parts]
                items = None
                if all(q is not None for q in seqs):
                    items = _zipped(norm, obj, seqs, start, node)
                if unroll_appends(norm, node, stmts, items):
                    return unroll(norm, node, stmts, items)
            return index_loop(norm, node, stmts, parts + ([start] if obj is enumerate else []),
                              obj)
        if isinstance(value, Struct):
            return unroll(norm, node, stmts, iteration_items(value))
        if isinstance(value, RunList):
            if runlists.changed_in(norm, node.body, value):
                raise norm.error(node, f"the list {value.user!r} is changed inside the loop "
                                 "that runs over it", cls=TranspileError,
                                 hint="loop over a copy: for v in list(...)")
            return array_loop(norm, node, stmts, runlists.loop_view(norm, value, node))
        if isinstance(value, Static) and isinstance(value.obj, (tuple, list)):
            return unroll(norm, node, stmts, [norm.classify(v, None) for v in value.obj])
        if isinstance(value, Static) and isinstance(value.obj, dict):
            return unroll(norm, node, stmts, [norm.classify(v, None) for v in value.obj])
        if isinstance(value, (Var, Const)):
            return array_loop(norm, node, stmts, value)
        raise norm.error(node, "cannot loop over this value", construct="for")
    if obj is np.ndindex:
        return ndindex_loop(norm, node, it)
    if obj is range or obj is np.arange:
        if it.keywords:
            raise norm.error(it, "keyword arguments to range/np.arange in a for loop are "
                             "not supported")
        args = [norm.atom(a, "n") for a in it.args]
        if obj is np.arange:
            for a in args:
                if isinstance(a, Const) and not isinstance(a.value, int):
                    raise norm.error(it, "np.arange with non-integer bounds in a for loop "
                                     "is not supported", hint="use integer bounds")
        if len(args) == 1:
            start, stop, step = Const(0), args[0], Const(1)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], Const(1)
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise norm.error(it, "range takes 1 to 3 arguments")
        bounds = [start, stop, step]
        items = [Const(i) for i in range(*(int(b.value) for b in bounds))] \
            if all(isinstance(b, Const) and isinstance(b.value, (int, np.integer))
                   for b in bounds) else None
        if appends_to_list(norm, node.body):
            if unroll_appends(norm, node, stmts, items):
                return unroll(norm, node, stmts, items)
        elif items is not None and len(items) <= INDEX_UNROLL_LIMIT and \
                indexes_a_list(norm, node.body, node.target):
            return unroll(norm, node, stmts, items)
        return range_loop(norm, node, stmts, start, stop, step, target=node.target)
    value = norm.expr(it, "seq")
    if isinstance(value, Struct):
        return unroll(norm, node, stmts, iteration_items(value))
    if isinstance(value, (Var, Const)):
        return array_loop(norm, node, stmts, value)
    raise norm.error(node, "cannot loop over this value", construct="for")


def _target_in_guard(norm, node, body):
    """A loop with a break runs its remaining iterations with the body skipped (the flag),
    but Python's loop variable keeps the item of the iteration that broke: the loop binds a
    hidden name, and the user's target is bound from it inside the guarded body. A target not
    bound before the loop starts as a placeholder (frontend/normalize/values.py)."""
    hidden = norm.namer.fresh("_item")
    for n in store_names([node.target]):
        if n not in norm.frame.env:
            norm.frame.env[n] = Placeholder()
    bind = gast.copy_location(gast.Assign(targets=[node.target], value=_name(hidden),
                                          type_comment=None), node)
    node = copy.copy(node)
    node.target = gast.copy_location(_name(hidden, store=True), node.target)
    return node, [bind] + list(body)


def _reversed_range(norm, it):
    """Is `it` a range (or np.arange) call sliced with [::-1]?"""
    if not (isinstance(it, gast.Subscript) and isinstance(it.slice, gast.Slice)):
        return False
    sl, step = it.slice, it.slice.step
    minus_one = isinstance(step, gast.UnaryOp) and isinstance(step.op, gast.USub) and \
        isinstance(step.operand, gast.Constant) and step.operand.value == 1
    return sl.lower is None and sl.upper is None and (
        minus_one or isinstance(step, gast.Constant) and step.value == -1) and \
        (_is_call_of(norm, it.value, range) or _is_call_of(norm, it.value, np.arange))


def reversed_loop(norm, node, stmts, seq):
    """`for ... in reversed(range(a, b, s))` (a range loop running backwards: the step must be
    known when the code is generated) and `for ... in reversed(x)` over an array (a loop over
    the reversed view x[::-1], which sees writes into x as Python's iterator does). Returns
    False where the sequence has a known structure (a list/tuple: the loop is unrolled)."""
    if _is_call_of(norm, seq, range) or _is_call_of(norm, seq, np.arange):
        if seq.keywords:
            raise norm.error(seq, "keyword arguments to range/np.arange in a for loop are "
                             "not supported")
        args = [norm.atom(a, "n") for a in seq.args]
        if not 1 <= len(args) <= 3:
            raise norm.error(seq, "range takes 1 to 3 arguments")
        if any(isinstance(a, Const) and not isinstance(a.value, (int, np.integer))
               for a in args):
            raise norm.error(seq, "reversed(np.arange(...)) with non-integer bounds in a for "
                             "loop is not supported", hint="use integer bounds")
        start, stop, step = ((Const(0), args[0], Const(1)) if len(args) == 1 else
                             (args[0], args[1], Const(1)) if len(args) == 2 else args)
        if appends_to_list(norm, node.body):
            items = [Const(i) for i in reversed(range(start.value, stop.value, step.value))] \
                if all(isinstance(a, Const) for a in (start, stop, step)) else None
            if unroll_appends(norm, node, stmts, items):
                return unroll(norm, node, stmts, items) or True
        if not isinstance(step, Const) or step.value == 0:
            raise norm.error(seq, "reversed(range(...)) in a for loop needs a step known when "
                             "the code is generated (its sign decides where the loop starts)",
                             cls=ShapesNeeded, construct="reversed(range(...))")
        # the last element: start + ((stop - start - sign) // step) * step; then down to start
        sign = 1 if step.value > 0 else -1
        span = norm.b.emit(by_name("subtract"), {"x": stop, "y": start}, base="n")
        span = norm.b.emit(by_name("subtract"), {"x": span, "y": Const(sign)}, base="n")
        count = norm.b.emit(by_name("floor_divide"), {"x": span, "y": step}, base="n")
        off = norm.b.emit(by_name("multiply"), {"x": count, "y": step}, base="n")
        last = norm.b.emit(by_name("add"), {"x": start, "y": off}, base="last")
        end = norm.b.emit(by_name("subtract"), {"x": start, "y": step}, base="end")
        for v in (span, count, off, last, end):
            if isinstance(v, Var):
                norm.mem.int_vars.add(v.name)
        return range_loop(norm, node, stmts, last, end, Const(-step.value),
                          target=node.target) or True
    value = norm.expr(seq, "seq")
    if isinstance(value, (Var, Const)) and not isinstance(value, Static):
        if appends_to_list(norm, node.body) and unroll_appends(
                norm, node, stmts, items_of(norm, value, node, "reversed")):
            return False
        view = norm.b.emit(by_name("getitem"), {"x": norm.to_arg(value, node), "index": IndexArg(
            (SliceArg(None, None, Const(-1)),))}, base="rev")
        array_loop(norm, node, stmts, view)
        return True
    return False


def ndindex_loop(norm, node, it):
    """`for i, j in np.ndindex(a.shape)`: one range loop per axis, nested, the target bound
    to the tuple of indices in the innermost body (the number of axes must be known when the
    code is generated; the lengths may be run-time values)."""
    if it.keywords:
        raise norm.error(it, "np.ndindex takes no keyword arguments")
    if _breaks_here(node.body) or node.orelse:
        raise norm.error(node, "break (or else) in a loop over np.ndindex is not supported",
                         construct="for ... in np.ndindex(...)",
                         hint="loop over each axis with range(...) instead")
    if len(it.args) == 1:
        dims = items_of(norm, norm.expr(it.args[0], "shape"), node, "np.ndindex")
        if dims is None:
            raise norm.error(it, "np.ndindex needs the number of axes when the code is "
                             "generated", cls=ShapesNeeded)
    else:
        dims = [norm.expr(a, "n") for a in it.args]
    names = [norm.namer.fresh(f"_axis{k}") for k in range(len(dims))]
    for n, d in zip(names, dims):
        norm.frame.env[n] = d
    index = [norm.namer.fresh(f"_i{k}") for k in range(len(dims))]
    target = gast.Tuple(elts=[_name(i) for i in index], ctx=gast.Load())
    inner = [gast.copy_location(gast.Assign(targets=[node.target], value=target), node)] + \
        list(node.body)
    loop = inner
    for i, n in reversed(list(zip(index, names))):
        rng = gast.Call(func=gast.Name(id="range", ctx=gast.Load(), annotation=None,
                                       type_comment=None), args=[_name(n)], keywords=[])
        loop = [gast.copy_location(gast.For(target=gast.Name(id=i, ctx=gast.Store(),
                                                             annotation=None, type_comment=None),
                                            iter=gast.copy_location(rng, it), body=loop,
                                            orelse=[], type_comment=None), node)]
    for st in loop:
        gast.fix_missing_locations(st)
    norm.run_body(loop)


def _breaks_here(stmts):
    """A break of this loop (not of a loop nested in it)."""
    for st in stmts:
        if isinstance(st, gast.Break):
            return True
        if isinstance(st, gast.If) and (_breaks_here(st.body) or _breaks_here(st.orelse)):
            return True
    return False


def array_loop(norm, node, stmts, value):
    """`for v in x` over an array: a loop over its rows, unrolled when the body appends to a
    list (its length must then be known when the code is generated)."""
    if appends_to_list(norm, node.body):
        n = rows_known(norm, value)
        items = _Rows(norm, value, n) if n is not None and n > UNROLL_LIMIT else \
            items_of(norm, value, node, "a loop that appends to a list")
        if unroll_appends(norm, node, stmts, items):
            return unroll(norm, node, stmts, items)
    return index_loop(norm, node, stmts, [value], None)


class _Rows:
    """The rows of an array, each read when it is asked for: a loop over 100,000 rows decides
    whether it is written out by reading its first row only (reading them all took seconds)."""

    def __init__(self, norm, value, n):
        self.norm, self.value, self.n = norm, value, n

    def __len__(self):
        return self.n

    def __getitem__(self, k):
        return self.norm.b.emit(by_name("getitem"), {"x": self.value,
                                                     "index": IndexArg((Const(k),))},
                                base="item")

    def __iter__(self):
        return (self[k] for k in range(self.n))


UNROLL_LIMIT = 8     # a loop appending to a list is unrolled up to this many items
WRITE_OUT_LIMIT = 256   # beyond, a loop appending numbers or arrays (a list of run-time length)


def unroll_appends(norm, node, stmts, items):
    """Is a loop whose body appends to a list unrolled (`items`: its items, None where the trip
    count is known only at run time)? Unrolled, the list keeps a structure known when the
    code is generated (items of any kind: arrays, tuples); as a run-time loop, a list of
    numbers becomes a RunList (runlists.py). Up to UNROLL_LIMIT items it is unrolled; beyond,
    the body is read once ahead and the loop stays a loop when it appends numbers only."""
    if items is None:
        if norm.b.avals is None:        # shapes not known yet: eager transforms retry with them
            raise norm.error(node, "a loop that appends to a list needs its trip count when "
                             "the code is generated", cls=ShapesNeeded,
                             hint="write into an array instead: y = np.zeros(n); y[i] = ...")
        return False
    if len(items) <= UNROLL_LIMIT:
        return True
    env = norm.frame.env
    lists = {n: env[n] for n in store_names(node.body)
             if isinstance(env.get(n), Struct) and env[n].kind == "list"}
    numbers = [True]
    arrays = [False]

    def ahead():
        norm.assign(node.target, items[0], node)
        run_loop_body(norm, stmts, node)
        for n, entry in lists.items():
            post = norm.frame.env.get(n)
            if isinstance(post, RunList) or post is entry:
                continue
            if not (isinstance(post, Struct) and post.kind == "list"):
                numbers[0] = False
                continue
            for v in post.items[len(entry.items):]:
                try:
                    kind = runlists.item_kind(norm, v, node, n)
                except TranspileError:
                    kind = None
                if kind is None:
                    numbers[0] = False
                elif kind[1]:
                    arrays[0] = True
    numbers[0] = False if read_ahead_failed(norm, ahead) else numbers[0]
    if numbers[0] and arrays[0]:
        # arrays of one kind: written out up to WRITE_OUT_LIMIT items (the aliasing of each
        # item followed exactly), beyond that a RunList of rows (writes into appended arrays
        # refused)
        return len(items) <= WRITE_OUT_LIMIT
    if not numbers[0] and len(items) > WRITE_OUT_LIMIT:
        # written out item by item, compiling takes seconds per hundred items (and the
        # NumPy version is generated the same way): an error now, not a wait without end
        raise norm.error(node, f"a loop that appends tuples or arrays to a list is written out "
                         f"item by item when the code is generated; this one has {len(items)} "
                         f"iterations (more than {WRITE_OUT_LIMIT})",
                         hint="append numbers (one list per field: xs.append(x); "
                              "ys.append(y)), or write rows into an array made before the "
                              "loop (out = np.empty((n, 2)); out[i] = ...)")
    return not numbers[0]


def read_ahead_failed(norm, run):
    """read_ahead(norm, run); True where reading the body raised."""
    failed = [False]

    def guarded():
        try:
            run()
        except TranspileError:
            failed[0] = True
            raise
    read_ahead(norm, guarded)
    return failed[0]


def appends_to_list(norm, stmts):
    """Does the loop body call .append/.extend on a list the function built (a list whose
    length grows per iteration: the loop is unrolled)?"""
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in ("append", "extend") and isinstance(n.func.value, gast.Name):
                v = norm.frame.env.get(n.func.value.id)
                if isinstance(v, Struct) and v.kind == "list":
                    return True
    return False


INDEX_UNROLL_LIMIT = 64   # a range loop indexing a list with its variable: unrolled up to this


def indexes_a_list(norm, stmts, target):
    """Does the loop body subscript a list or tuple the function built with the loop's
    variable (`acc = [0.0] * 3; for i in range(3): acc[i] = ...`)? An index into a list must
    be known when the code is generated: such a loop with a known trip count is unrolled."""
    if not isinstance(target, gast.Name):
        return False
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                    _a_list(norm, n.value.id) and any(
                        isinstance(m, gast.Name) and m.id == target.id
                        for m in gast.walk(n.slice)):
                return True
    return False


def _a_list(norm, name):
    """Is `name` a list or tuple of known structure (the function's, or a global's)?"""
    if name in norm.frame.env:
        v = norm.frame.env[name]
        return isinstance(v, Struct) and v.kind in ("list", "tuple")
    resolver = norm.frame.resolver
    try:
        obj, where = resolver.lookup(name) if resolver is not None else (None, None)
    except NameError:
        return False
    return where is not None and where[0] != "builtin" and unrolled_container(obj) and \
        type(obj) in (list, tuple)


def unroll(norm, node, stmts, items):
    for item in items:
        norm.assign(node.target, item, node)
        norm.run_body(stmts)
        if isinstance(norm.frame.returned, Raised):
            return          # this iteration raises: nothing after it runs
        if norm.frame.returned is not None:
            raise norm.error(node, "return inside a loop is not supported",
                             hint="store the value and return after the loop")


def index_loop(norm, node, stmts, arrays, kind):
    start = Const(0)
    if kind is enumerate or kind == "enumerate_zip":     # the start is the last item
        arrays, start = arrays[:-1], norm.to_arg(arrays[-1], node)
    ranges = [_range_start_step(norm, a) for a in arrays]
    lens = [norm.b.emit(by_name("len"), {"x": norm.to_arg(a, node)}, base="n")
            if r is None else _trip_count(norm, *r) for a, r in zip(arrays, ranges)]
    n = lens[0]
    for m in lens[1:]:
        n = norm.b.emit(by_name("minimum"), {"x": n, "y": m}, base="n")
    # Python's iterator holds the array itself: a write into it (through any name) in the body
    # is seen by the next items. Each array is held under a hidden name, which the alias model
    # rebinds after such a write (the loop carries it), and each item is read from it.
    frame = norm.frame
    held = []
    for a, r in zip(arrays, ranges):
        if isinstance(a, Var) and r is None:
            key = ITER_PREFIX + norm.namer.fresh("seq")
            frame.env[key] = a
            held.append(key)
        else:
            held.append(a)

    def current(h):
        v = frame.env.get(h) if isinstance(h, str) else h
        if isinstance(v, Stale):
            raise stale_error(norm, node, v)
        return norm.to_arg(v, node)

    def element(i, h, k):
        if ranges[i] is not None:           # zip(x, range(n)): start + k * step, no array
            first, _, step = ranges[i]
            at = k if step == Const(1) else norm.b.emit(by_name("multiply"),
                                                         {"x": k, "y": step}, base="i")
            return at if first == Const(0) else norm.b.emit(by_name("add"),
                                                            {"x": at, "y": first}, base="i")
        return norm.b.emit(by_name("getitem"), {"x": current(h), "index": IndexArg((k,))},
                           base=_target_base(node.target, i))

    def bind(k):
        elems = [element(i, h, k) for i, h in enumerate(held)]
        i = k if start == Const(0) else norm.b.emit(by_name("add"), {"x": k, "y": start},
                                                    base="i")
        if kind is zip:
            value = Struct("tuple", elems)
        elif kind == "enumerate_zip":
            value = Struct("tuple", [i, Struct("tuple", elems)])
        elif kind is enumerate:
            value = Struct("tuple", [i, elems[0]])
        else:
            value = elems[0]
        norm.assign(node.target, value, node)
    try:
        return range_loop(norm, node, stmts, Const(0), n, Const(1), bind=bind)
    finally:
        for h in held:
            if isinstance(h, str):
                frame.env.pop(h, None)


def _later_iterations(norm, stmts):
    """Reading a loop body ahead (to find what it writes): a number the body rebinds holds
    later iterations' values too, so a test on it (`if i == 0: i += 1 / else: a[i] = ...`)
    is not decided by its value on entry (the write on the other path would go unseen, and
    the array not carried by the loop). Such numbers, tested by an if whose paths write into
    an array, are read as values known at run time."""
    env = norm.frame.env
    avals = norm.b.avals
    bound = bound_names(stmts)
    tested = set()
    for st in stmts:
        for node in gast.walk(st):
            if isinstance(node, gast.If) and any(
                    isinstance(m, gast.Subscript) and isinstance(m.ctx, gast.Store)
                    for b in node.body + node.orelse for m in gast.walk(b)):
                tested |= {m.id for m in gast.walk(node.test) if isinstance(m, gast.Name)}
    for n in bound & tested:
        value = env.get(n)
        if not isinstance(value, Const) or type(value.value) not in (bool, int, float):
            continue
        tmp = norm.namer.fresh(n)
        emit_copy(norm, tmp, value)
        if type(value.value) is int:
            norm.mem.int_vars.add(tmp)
        if avals is not None:
            avals[tmp] = AVal((), np.dtype(type(value.value)), type(value.value) is not bool)
        env[n] = Var(tmp)


def _unbound_runlists(norm, stmts):
    """A list of run-time length appended in a loop: its count has no bound known now."""
    for value in list(norm.frame.env.values()):
        if isinstance(value, RunList) and runlists.changed_in(norm, stmts, value):
            value.bound = None


def range_loop(norm, node, stmts, start, stop, step, target=None, bind=None):
    frame = norm.frame
    loc = norm.b.loc
    before = frame.env.get(target.id) if isinstance(target, gast.Name) else None
    bound_before = {t.id for t in gast.walk(node.target) if isinstance(t, gast.Name)
                    and t.id in frame.env} if bind is not None else set()
    _unbound_runlists(norm, stmts)
    plan = None
    if writes_in(stmts) or _sets_placeholder(norm, stmts):
        def ahead():
            tmp = norm.namer.fresh("i")
            norm.mem.int_vars.add(tmp)
            _int_aval(norm, tmp)
            if isinstance(target, gast.Name):
                frame.env[target.id] = Var(tmp)
            elif bind is not None:
                bind(Var(tmp))
            elif target is not None:
                norm.assign(target, Var(tmp), node)
            _later_iterations(norm, stmts)
            run_loop_body(norm, stmts, node)
        plan = read_ahead(norm, ahead)
    carried = carried_setup(norm, stmts + ([node.target] if bind else []), plan=plan,
                            node=node, trips=lambda: _trip_count(norm, start, stop, step))
    if isinstance(target, gast.Name):
        # a counter the body rebinds (`i = i + 1` in an if) has a name of its own: the
        # rebound value is another variable (a batched one under vmap, where the counter
        # is the same for every example)
        var = norm.core_name(target.id) if target.id not in store_names(stmts) else \
            norm.namer.fresh(target.id)
    else:
        var = norm.namer.fresh("k" if bind else "i")
    norm.mem.int_vars.add(var)
    _int_aval(norm, var)

    def body():
        norm.mem.unbound_unless_run.pop(var, None)      # bound inside its own loop
        if isinstance(target, gast.Name):
            frame.env[target.id] = Var(var)
        elif bind is not None:
            bind(Var(var))
        elif target is not None:
            norm.assign(target, Var(var), node)
        run_loop_body(norm, stmts, node)
        carried_finish(norm, carried, node)
    _unfold_changing_shapes(norm, carried, body)
    try:
        body_stmts, _ = sub_body(norm, body)
    finally:
        for h in carried.presized:
            h.presized = False          # appends after the loop may have to grow it
    norm.b.loc = loc
    norm.b.body.append(ir.ForRange(var, start, stop, step, body_stmts, loc))
    if isinstance(target, gast.Name) and target.id not in carried:
        if before is None:          # unbound where the loop ran zero times, as in Python
            norm.mem.unbound_unless_run[var] = (start, stop, step)
        else:
            norm.mem.unbound_unless_run.pop(var, None)
        _target_after(norm, target.id, var, before, start, stop, step, loc)
    elif bind is not None:
        _items_unbound_unless_run(norm, node.target, var, body_stmts, bound_before,
                                  (start, stop, step))


def _items_unbound_unless_run(norm, target, var, body_stmts, bound_before, bounds):
    """`for v in x[:n]` (an index loop): a target name the loop bound for the first time
    holds values made in the body, unbound where the loop ran zero times, as in Python; a later
    loop that carries the name enters with 0 there (_bound_if_the_loop_ran), not the unbound
    value. (A name bound before the loop is carried by it and keeps its value.)"""
    made = set(ir.bound_names(body_stmts)) | {var}
    for t in gast.walk(target):
        if not isinstance(t, gast.Name) or t.id in bound_before or \
                t.id not in norm.frame.env:
            continue
        for leaf in value_leaves(norm.frame.env.get(t.id), None)[0]:
            if isinstance(leaf, Var) and leaf.name in made:
                norm.mem.unbound_unless_run[leaf.name] = bounds


def _bound_if_the_loop_ran(norm, leaf, name):
    """A loop that carries the counter of an earlier range loop that may have run zero times
    and left it unbound (`for k in range(j)` ... then `for i ...: for k in range(2)` in a
    textbook Cholesky): its entry value is that counter where the loop ran, else 0, which
    the later loop rebinds before any read (the generated code read the unbound name)."""
    if not isinstance(leaf, Var) or leaf.name not in norm.mem.unbound_unless_run:
        return leaf
    start, stop, step = norm.mem.unbound_unless_run[leaf.name]
    runs = trip_test(norm, start, stop, step)
    return chosen(norm, runs, [[], []], [leaf, Const(0)], name, norm.b.loc)



def _target_after(norm, name, var, before, start, stop, step, loc):
    """The loop's target after a loop that may run zero times keeps the value it held before
    (`k = 2; for k in range(n): ...` leaves k == 2 when n == 0), as in Python."""
    if not isinstance(before, (Var, Const)) or not (
            isinstance(step, Const) and isinstance(step.value, (int, np.integer))):
        return
    runs = trip_test(norm, start, stop, step)
    known, truth = norm.static_truth(runs)
    if known:
        if not truth:
            norm.frame.env[name] = before
        return
    norm.frame.env[name] = chosen(norm, runs, [[], []], [Var(var), before], name, loc)


def stmt_While(norm, node):
    if node.orelse:
        return loop_with_else(norm, node, stmt_While)
    _carried_from_an_earlier_iteration(norm, node)
    brk, body_stmts = lower_jumps(norm, node)
    stmts = body_stmts if brk else node.body
    test = node.test
    if brk:
        _bound_in_a_loop_with_break(norm, node)
        norm.frame.env[brk] = Const(False)
        test = gast.copy_location(gast.BoolOp(op=gast.And(), values=[
            test, gast.UnaryOp(op=gast.Not(), operand=_name(brk))]), node)
    if _stays_known_as_a_loop(norm, stmts, test, node) and \
            _unroll_while(norm, stmts, test, node):
        return
    _unbound_runlists(norm, stmts)
    loc = norm.b.loc
    plan = None
    if writes_in(stmts) or _sets_placeholder(norm, stmts):
        def ahead():
            _later_iterations(norm, stmts)
            norm.condition(test, "cond")
            run_loop_body(norm, stmts, node)
        plan = read_ahead(norm, ahead)
    carried = carried_setup(norm, stmts, plan=plan, node=node)

    def body():
        run_loop_body(norm, stmts, node)
        carried_finish(norm, carried, node)
    _unfold_changing_shapes(norm, carried, lambda: (norm.condition(test, "cond"), body()))
    cond_body, cond = sub_body(norm, lambda: norm.condition(test, "cond"))
    known, truth = norm.static_truth(cond)
    if known and not truth:
        norm.b.body += cond_body
        return
    if known:
        raise norm.error(node, "while True without a data-dependent break would never end",
                         construct="while True")
    cond = norm.to_arg(cond, node)
    body_stmts2, _ = sub_body(norm, body)
    norm.b.loc = loc
    norm.b.body.append(ir.While(cond_body, cond, body_stmts2, loc))


WHILE_UNROLL_LIMIT = 64    # steps of a while loop whose condition is known at each step


def _stays_known_as_a_loop(norm, stmts, test, node):
    """Is the condition of this while loop known when the code is generated, even once the
    names the body rebinds are loop variables? (`while isinstance(o, tuple): o = o[0]`, a test
    on the structure of values.) Such a loop cannot be a compiled loop: it runs here, step by
    step (_unroll_while). A condition that is known only at entry (`i = 0; while i < n`) is
    not: it becomes a loop."""
    if isinstance(node.test, gast.Constant):
        return False            # while True: a loop ended by its breaks
    _, cond = sub_body(norm, lambda: norm.condition(test, "cond"))
    known, truth = norm.static_truth(cond)
    if not (known and truth):
        return False
    seen = []

    def probe():
        carried_setup(norm, stmts, plan=None, node=node)
        _, cond = sub_body(norm, lambda: norm.condition(test, "cond"))
        seen.append(norm.static_truth(cond))
    read_ahead(norm, probe)
    return seen == [(True, True)]


def _unroll_while(norm, stmts, test, node):
    """Run the loop's steps while its condition is known: True where the loop ended here,
    False where the condition came to depend on data (the rest is a compiled loop)."""
    for _ in range(WHILE_UNROLL_LIMIT):
        cond_body, cond = sub_body(norm, lambda: norm.condition(test, "cond"))
        known, truth = norm.static_truth(cond)
        if not known:
            return False
        norm.b.body += cond_body
        if not truth:
            return True
        norm.run_body(stmts)
        if isinstance(norm.frame.returned, Raised):
            return True         # this step raises: nothing after it runs
        if norm.frame.returned is not None:
            raise norm.error(node, "return inside a loop is not supported",
                             construct="return (inside a loop)",
                             hint="store the value, break, and return after the loop")
    raise norm.error(node, f"this while loop's condition is known when the code is generated "
                           f"and still true after {WHILE_UNROLL_LIMIT} steps",
                     construct="while (a condition on the structure of values)",
                     hint="make the condition depend on array data, or use a for loop")


def _target_base(target, i):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Tuple) and i < len(target.elts) and \
            isinstance(target.elts[i], gast.Name):
        return target.elts[i].id
    return "item"


def _range_start_step(norm, value):
    """(start, stop, step) of a value made by range(...) with a constant step, else None."""
    eqn = norm.mem.defs.get(value.name) if isinstance(value, Var) else None
    if eqn is None or eqn.prim is not by_name("range"):
        return None

    def given(k):
        v = eqn.args.get(k)
        return None if v is None or isinstance(v, Const) and v.value is None else v
    step = given("step") or Const(1)
    if not (isinstance(step, Const) and isinstance(step.value, (int, np.integer)) and step.value):
        return None
    if given("stop") is None:
        return Const(0), given("start"), step
    return given("start"), given("stop"), step


def _zipped(norm, obj, seqs, start, node):
    """The items a zip (or enumerate) loop visits, from its sequences' items."""
    if obj is zip:
        return [Struct("tuple", list(t)) for t in zip(*seqs)]
    return [Struct("tuple", [_plus(norm, start, i, node), v]) for i, v in enumerate(seqs[0])]


def _known_items(norm, part):
    """The items of a part of a zip known when the code is generated (a list, a tuple, a
    constant sequence, another Python iterable), else None."""
    if isinstance(part, Struct):
        return iteration_items(part)
    if isinstance(part, Static):
        return [norm.classify(v, None) for v in part.obj]
    if isinstance(part, Const) and isinstance(part.value, (tuple, list)):
        return [Const(v) for v in part.value]
    return None


def _items_to(norm, part, node, n):
    """The first n items of a part of a zip: all its items where they are known now, else
    part[0] ... part[n - 1] (read at run time; a shorter array raises IndexError)."""
    items = items_of(norm, part, node, "zip")
    if items is not None:
        return items
    return [norm.b.emit(by_name("getitem"), {"x": norm.to_arg(part, node),
                                             "index": IndexArg((Const(i),))}, base="item")
            for i in range(n)]


def _is_call_of(norm, node, fn):
    """Is `node` a call of the Python function `fn` (zip, enumerate...)?"""
    if not isinstance(node, gast.Call):
        return False
    try:
        f = norm.expr(node.func, "f")
    except Exception:
        return False
    return isinstance(f, Static) and f.obj is fn


STATEMENTS = {"For": stmt_For, "While": stmt_While}
