"""Lists of numbers whose length is known only when the code runs.

A list the function builds (`out = []`) has a structure known while the code is generated as
long as it grows the same way on every path. Where it does not (an append in a loop with a
run-time trip count, or under an `if` on array data), it becomes a `RunList`: its items live in
a 1-D array, twice as long when it is full, and a count, two ordinary variables of the function
(`out_items`, `out_count`) that loops carry and ifs join like any other; the name `out` holds
the RunList itself. The conversion happens where the paths meet: at the join of an if whose
branches leave the list with different lengths, and before a loop whose body (read ahead) makes
it grow.

Appends and pops, len(), indexing (checked against the count: IndexError, as Python), truth
(`while out:`), iteration (`for v in out`, the list not changed in the loop) and the list as a
NumPy argument (np.array(out), np.sum(out), sum(out): a copy of the items) are written as code
over the two variables, so every transform sees plain array code. The items must be numbers of
a type known when the code is generated (from the shapes known under jit, or integers, booleans
and floats the normalizer can tell apart); an item of another kind, a value that does not fit
the list's dtype, or a list of arrays or tuples is refused with the line.
"""
import gast
import numpy as np

from transpile.core.avals import AVal

from transpile.core.ir import Const, IndexArg, SliceArg, Var
from transpile.errors import ShapesNeeded, TranspileError
from transpile.frontend.normalize.values import RunList, Struct
from transpile.primitives import by_name
from transpile.primitives.internal.control import assign as assign_prim
from transpile.primitives.internal.control import cast_into as cast_into_prim
from transpile.primitives.internal.control import setitem as setitem_prim
from transpile.primitives.numpy.structure import copy as copy_prim
from transpile.primitives.numpy.structure import getitem as getitem_prim

_NUMBER_KINDS = "biufc"


def item_dtype(norm, value, node, user):
    """The NumPy dtype np.array gives a number `value` (None where it is not a number)."""
    if isinstance(value, Const):
        v = value.value
        if isinstance(v, (bool, int, float, complex, np.generic)) and \
                np.asarray(v).dtype.kind in _NUMBER_KINDS:
            return np.asarray(v).dtype
        return None
    if not isinstance(value, Var):
        return None
    d = dtype_ndim(norm, value)
    if d is not None:
        return d[0] if d[1] == 0 and d[0].kind in _NUMBER_KINDS else None
    raise norm.error(node, f"the list {user!r} grows by a number of items known only when "
                     "the code runs, and the type of its items must be known when the code "
                     "is generated", cls=ShapesNeeded,
                     hint="call the function under jit (argument shapes known), or write into "
                          "an array: y = np.zeros(n); y[k] = v; k += 1")


def dtype_ndim(norm, atom, depth=0):
    """(dtype, number of axes) of a value computed while normalizing, None where not known:
    from the shapes known under jit, else from what made it (an element or slice of an array
    of known dtype, an integer, a comparison, an elementwise row or a full reduction of known
    operands, a variable a loop or an if joins from values of one type: mem.dtypes)."""
    if isinstance(atom, Const):
        v = atom.value
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            a = np.asarray(v)
            return (a.dtype, a.ndim) if a.dtype.kind in _NUMBER_KINDS else None
        return None
    if not isinstance(atom, Var) or depth > 40:
        return None
    avals = norm.b.avals
    av = avals.get(atom.name) if avals is not None else None
    if av is not None:
        return np.dtype(av.dtype), av.ndim
    known = norm.mem.dtypes.get(atom.name)
    if known is not None:
        norm.mem.dtypes_used.add(atom.name)
        return known
    if norm.mem.is_int(atom):
        return np.dtype(np.int64), 0
    eqn = norm.mem.defs.get(atom.name)
    if eqn is None:
        return None
    prim, args = eqn.prim, eqn.args
    if prim in (setitem_prim, assign_prim, copy_prim):       # x's type and axes
        return dtype_ndim(norm, args.get("x"), depth + 1)
    if prim is cast_into_prim:                                 # like's type, x's axes
        like, x = dtype_ndim(norm, args.get("like"), depth + 1), \
            dtype_ndim(norm, args.get("x"), depth + 1)
        return (like[0], x[1]) if like is not None and x is not None else None
    if prim is getitem_prim:
        x = dtype_ndim(norm, args.get("x"), depth + 1)
        index = args.get("index")
        if x is None or not isinstance(index, IndexArg):
            return None
        nd = x[1]
        for it in index.items:
            if isinstance(it, SliceArg):
                continue
            if it is None:
                nd += 1
            elif it is Ellipsis:
                return None
            else:
                i = dtype_ndim(norm, it, depth + 1)
                if i is None or i[1] != 0 or i[0].kind not in "iu":
                    return None         # an array of indices (or unknown): a gather
                nd -= 1
        return (x[0], nd) if nd >= 0 else None
    operands = [a for a in args.values() if isinstance(a, (Var, Const))]
    if prim.elementwise and prim.impl is not None:
        vals, nd = [], 0
        for a in args.values():
            if isinstance(a, Const) and isinstance(a.value, (bool, int, float, complex)):
                vals.append(a.value)        # a Python number: NumPy's weak scalar
                continue
            d = dtype_ndim(norm, a, depth + 1) if isinstance(a, (Var, Const)) else None
            if d is None:
                return None
            vals.append(d[0].type(1))
            nd = max(nd, d[1])
        try:
            with np.errstate(all="ignore"):
                return np.asarray(prim.impl(*vals)).dtype, nd
        except Exception:       # noqa: BLE001 - not a plain function of its operands
            return None
    if prim.reduction and prim.impl is not None:
        axis, keep = args.get("axis", Const(None)), args.get("keepdims", Const(False))
        x = dtype_ndim(norm, args.get("x"), depth + 1) if "x" in args else None
        if x is None or not (isinstance(axis, Const) and axis.value is None) or \
                not (isinstance(keep, Const) and not keep.value) or len(operands) != 1:
            return None
        try:
            with np.errstate(all="ignore"):
                return np.asarray(prim.impl(np.ones((1,) * x[1], x[0]))).dtype, 0
        except Exception:       # noqa: BLE001
            return None
    if prim.bool_result:
        nds = [dtype_ndim(norm, a, depth + 1) for a in operands]
        if any(d is None for d in nds):
            return None
        return np.dtype(np.bool_), max([d[1] for d in nds] + [0])
    return None


def same_dtype(norm, atoms):
    """(dtype, axes) every one of these values has (None: not known or not the same)."""
    found = [dtype_ndim(norm, a) for a in atoms]
    if not found or any(f is None for f in found) or any(f != found[0] for f in found[1:]):
        return None
    return found[0]


def list_dtype(norm, values, node, user):
    """np.array's dtype for a list holding these values (RunLists and numbers)."""
    dtypes = []
    for v in values:
        if isinstance(v, RunList):
            dtypes.append(v.dtype)
            continue
        d = item_dtype(norm, v, node, user)
        if d is None:
            raise norm.error(node, f"the list {user!r} grows by a number of items known only "
                             "when the code runs: only lists of numbers are supported then",
                             cls=TranspileError,
                             hint="a list of arrays or tuples must grow the same way on every "
                                  "path (or preallocate an array and write rows into it)")
        dtypes.append(d)
    kinds = sorted({str(d) for d in dtypes})
    if len(kinds) > 1:
        # np.array of the list would have a type that depends on which items it holds
        raise norm.error(node, f"the list {user!r} grows by a number of items known only when "
                         f"the code runs and holds items of several types ({', '.join(kinds)}): "
                         "the type of np.array of it would depend on the data",
                         cls=TranspileError, hint="give its items one type (float(v), 0.0)")
    return dtypes[0] if dtypes else np.dtype(np.float64)


def items_of_lists(values):
    out = []
    for v in values:
        if isinstance(v, Struct):
            out += v.items
        elif isinstance(v, RunList):
            out.append(v)
    return out


SLACK = 8      # items a buffer made where paths meet has room for beyond the longest path


def new_runlist(norm, user, dtype, frame=None):
    return RunList(user, norm.namer.fresh(f"{user.lstrip('.')}_items"),
                   norm.namer.fresh(f"{user.lstrip('.')}_count"), np.dtype(dtype),
                   frame if frame is not None else norm.frame)


def absorb(norm, h, value, node, env, capacity=0):
    """Make `env` (a path's names) hold `value` (a list) as the RunList `h`, emitting the code
    where the builder is now (the end of that path). A list of known items gets a buffer of
    `capacity` items at least (paths that meet give their buffers one shape)."""
    if value is h:
        return
    if isinstance(value, RunList):
        if not np.can_cast(value.dtype, h.dtype, "safe"):
            raise norm.error(node, f"the list {h.user!r} holds items of other types on the "
                             "paths that meet here", cls=TranspileError)
        items = value.frame.env[value.items]
        if value.dtype != h.dtype:
            items = norm.apply(by_name("astype"), [items, Const(h.dtype.type)], {}, node,
                               h.items)
        env[h.items] = items
        env[h.count] = value.frame.env[value.count]
        _register(norm, h, env)
        h.capacity, h.bound = None, None        # another list's: not known here
        return
    for v in value.items:
        _check_fits(norm, h, v, node)
    pad = max(capacity - len(value.items), 0)
    if value.items:
        padded = Struct("list", list(value.items) + [Const(h.dtype.type(0))] * pad)
        buf = norm.apply(by_name("array"), [padded], {"dtype": Const(h.dtype.type)}, node,
                         h.items)
    else:
        buf = norm.b.emit(by_name("zeros"), {"shape": Const((pad,)), "dtype": Const(h.dtype.type)},
                          base=h.items)
    env[h.items] = buf
    env[h.count] = Const(len(value.items))
    _register(norm, h, env)
    length = len(value.items) + pad
    h.capacity = length if h.capacity is None else min(h.capacity, length)
    h.bound = len(value.items) if h.bound is None else max(h.bound, len(value.items))


def _register(norm, h, env):
    """The buffer's variable holds h.dtype items (one axis): known to the type inference."""
    buf = env.get(h.items)
    if isinstance(buf, Var):
        norm.mem.dtypes[buf.name] = (h.dtype, 1)


def _check_fits(norm, h, v, node):
    d = item_dtype(norm, v, node, h.user)
    if d is None or not np.can_cast(d, h.dtype, "safe"):
        raise norm.error(node, f"appending {'a value that is not a number' if d is None else d}"
                         f" to the list {h.user!r} of {h.dtype} items: np.array of it would have "
                         "another type", cls=TranspileError,
                         hint="append values of one type (float(v), int(v))")


def is_list(value):
    return isinstance(value, RunList) or (isinstance(value, Struct) and value.kind == "list")


def needs_join(a, b):
    """Do the lists two paths leave in one name need a RunList to be joined?"""
    if a is b or not (is_list(a) and is_list(b)):
        return False
    return isinstance(a, RunList) or isinstance(b, RunList) or len(a.items) != len(b.items)


def join_lists(norm, user, values, bodies, envs, node, frame):
    """Lists on the paths of an if that differ in length (or are RunLists): one RunList."""
    handles = [v for v in values if isinstance(v, RunList)]
    h = handles[0] if handles and all(x is handles[0] for x in handles) else None
    if h is not None and not all(np.can_cast(d, h.dtype, "safe") for d in
                                 [list_dtype(norm, items_of_lists([v]), node, user)
                                  for v in values if v is not h]):
        h = None
    if h is None:
        dtype = list_dtype(norm, items_of_lists(values), node, user)
        h = new_runlist(norm, user, dtype, frame)
    # (room for a few more appends without a growth step: an unrolled loop's next items)
    capacity = max([len(v.items) for v in values if isinstance(v, Struct)] + [0]) + SLACK
    for value, body, env in zip(values, bodies, envs):
        saved = norm.b.body
        norm.b.body = body
        try:
            absorb(norm, h, value, node, env, capacity)
        finally:
            norm.b.body = saved
        env[user] = h
    return h


def grows_in_loop(entry, post):
    """Does a loop body (read ahead) leave the list `entry` as another list `post`?"""
    return isinstance(entry, Struct) and entry.kind == "list" and post is not None and \
        post is not entry and is_list(post) and \
        (isinstance(post, RunList) or len(post.items) != len(entry.items))


def before_loop(norm, user, entry, post, node, frame, trips=None, per_trip=None):
    """The loop body (read ahead) leaves the list `entry` as `post`: a RunList from here on
    (its two variables bound before the loop, where the builder is now). With the loop's trip
    count and the appends per iteration, the buffer is made long enough for all of them (the
    appends in this loop need no growth: `presized`)."""
    dtype = list_dtype(norm, items_of_lists([entry, post]), node, user)
    h = new_runlist(norm, user, dtype, frame)
    if trips is None:
        absorb(norm, h, entry, node, frame.env)
        h.bound = None          # the loop appends a number of items known only at run time
    else:
        for v in entry.items:
            _check_fits(norm, h, v, node)
        cap = norm.b.emit(by_name("multiply"), {"x": trips, "y": Const(per_trip)}, base="cap")
        cap = norm.b.emit(by_name("add"), {"x": cap, "y": Const(len(entry.items))}, base="cap")
        buf = norm.b.emit(by_name("zeros"), {"shape": norm.to_arg(Struct("tuple", [cap]), node),
                                             "dtype": Const(h.dtype.type)}, base=h.items)
        frame.env[h.items] = buf
        frame.env[h.count] = Const(0)
        _register(norm, h, frame.env)
        for v in entry.items:
            _run_in(norm, frame, node, f"{h.items}[{h.count}] = {_NEW}\n{h.count} = {h.count} + 1\n",
                    v)
        h.presized = True
        h.capacity, h.bound = None, None
    frame.env[user] = h
    return h


_NEW = "_runlist_new_item"


def _run_in(norm, frame, node, text, value):
    if frame is not norm.frame:
        raise norm.error(node, "a list of run-time length in an inlined function's loop",
                         cls=TranspileError)
    _run(norm, node, text, [(_NEW, value)])


def changed_in(norm, stmts, h):
    """Do these statements call a list method on a name holding `h`?"""
    from transpile.frontend.normalize.bindings import LIST_METHODS
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in LIST_METHODS and isinstance(n.func.value, gast.Name) and \
                    norm.frame.env.get(n.func.value.id) is h:
                return True
    return False


# ---- code over a RunList's two variables ------------------------------------------------------

def _here(norm, h, node):
    if h.frame is not norm.frame:
        raise norm.error(node, f"the list {h.user!r} (its length known only when the code runs) "
                         "is changed in another function than the one that built it",
                         cls=TranspileError, hint="build and change it in one function")


def _run(norm, node, text, values=()):
    """Normalize `text` at `node`'s line, with `values` bound to hidden names first."""
    env = norm.frame.env
    for name, value in values:
        env[name] = value
    try:
        for st in gast.parse(text).body:
            for sub in gast.walk(st):
                if "lineno" in sub._attributes:
                    gast.copy_location(sub, node)
                    sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
            norm.stmt(st)
    finally:
        for name, _ in values:
            env.pop(name, None)


def _dt(h):
    return f"np.{h.dtype.type.__name__}"


def append(norm, h, value, node):
    _here(norm, h, node)
    _check_fits(norm, h, value, node)
    b, c = h.items, h.count
    v, g = norm.namer.fresh(f"{h.user}_new"), norm.namer.fresh(f"{h.user}_grown")
    if h.presized or (h.bound is not None and h.capacity is not None and
                      h.bound < h.capacity):
        # (the loop made the buffer long enough, or it has room for every item appended so
        # far: no growth step, whose adjoint the compiled grad could not lower)
        _run(norm, node, f"{b}[{c}] = {v}\n{c} = {c} + 1\n", [(v, value)])
        if h.bound is not None:
            h.bound += 1
        return
    h.capacity = None           # grown at run time
    if h.bound is not None:
        h.bound += 1
    _run(norm, node, f"if {c} == {b}.shape[0]:\n"
                     f"    {g} = np.zeros(2 * {c} + 1, dtype={_dt(h)})\n"
                     f"    {g}[:{c}] = {b}\n"
                     f"    {b} = {g}\n"
                     f"{b}[{c}] = {v}\n"
                     f"{c} = {c} + 1\n", [(v, value)])
    norm.frame.env.pop(g, None)


def _index(norm, h, index, node, message):
    """A hidden name bound to the position `index` means (negative from the end), checked."""
    i, k = norm.namer.fresh(f"{h.user}_at"), norm.namer.fresh(f"{h.user}_index")
    c = h.count
    _run(norm, node, f"{k} = {i} + {c} if {i} < 0 else {i}\n"
                     f"if {k} < 0 or {k} >= {c}:\n"
                     f"    raise IndexError({message!r})\n", [(i, index)])
    return k


def getitem(norm, h, index, node):
    if isinstance(index, Const) and not isinstance(index.value, (int, np.integer)):
        raise norm.error(node, f"the list {h.user!r} (its length known only when the code runs) "
                         "is indexed by an integer only", cls=TranspileError)
    k = _index(norm, h, index, node, "list index out of range")
    r = norm.namer.fresh(f"{h.user}_item")
    _run(norm, node, f"{r} = {h.items}[{k}]\n")
    out = norm.frame.env.pop(r)
    norm.frame.env.pop(k, None)
    return _typed(norm, h, out)


def _typed(norm, h, item):
    """An item read from the list: an integer where the list holds integers."""
    if isinstance(item, Var) and h.dtype.kind in "iu":
        norm.mem.int_vars.add(item.name)
    avals = norm.b.avals
    if isinstance(item, Var) and avals is not None and item.name not in avals:
        avals[item.name] = AVal((), h.dtype)        # an element of the list's buffer
    return item


def pop(norm, h, index, node):
    _here(norm, h, node)
    r = norm.namer.fresh(f"{h.user}_popped")
    b, c = h.items, h.count
    if index is None:
        _run(norm, node, f"if {c} == 0:\n"
                         f"    raise IndexError('pop from empty list')\n"
                         f"{c} = {c} - 1\n"
                         f"{r} = {b}[{c}]\n")
    else:
        k = _index(norm, h, index, node, "pop index out of range")
        j = norm.namer.fresh(f"{h.user}_shift")
        _run(norm, node, f"{r} = {b}[{k}]\n"
                         f"for {j} in range({k}, {c} - 1):\n"
                         f"    {b}[{j}] = {b}[{j} + 1]\n"
                         f"{c} = {c} - 1\n")
        norm.frame.env.pop(k, None)
        norm.frame.env.pop(j, None)
    return _typed(norm, h, norm.frame.env.pop(r))


def in_place(norm, h, name, node):
    """out.reverse() / out.sort() / out.clear()."""
    _here(norm, h, node)
    b, c = h.items, h.count
    t = norm.namer.fresh(f"{h.user}_{name}ed")
    if name == "clear":
        _run(norm, node, f"{c} = 0\n")
        return
    if name == "reverse":
        _run(norm, node, f"{t} = np.copy({b}[:{c}][::-1])\n{b}[:{c}] = {t}\n")
        norm.frame.env.pop(t, None)
        return
    # list.sort: a stable insertion sort of items[:count] (Python's order for numbers; a NaN
    # has no place in it, where Python's result depends on its algorithm: refused)
    i, j, key = (norm.namer.fresh(f"{h.user}_{p}") for p in ("i", "j", "key"))
    nan = "" if h.dtype.kind in "biu" else (
        f"    if {key} != {key}:\n"
        f"        raise ValueError('sorting a list that holds NaN is not supported here')\n")
    _run(norm, node,
         f"for {i} in range(0, {c}):\n"
         f"    {key} = {b}[{i}]\n" + nan +
         f"    {j} = {i} - 1\n"
         f"    while {j} >= 0 and {b}[{j}] > {key}:\n"
         f"        {b}[{j} + 1] = {b}[{j}]\n"
         f"        {j} = {j} - 1\n"
         f"    {b}[{j} + 1] = {key}\n")
    for name_ in (i, j, key):
        norm.frame.env.pop(name_, None)


def count(h):
    return h.frame.env[h.count]


def view(norm, h, node):
    """items[:count] (a view of the buffer)."""
    return norm.b.emit(by_name("getitem"), {"x": norm.to_arg(h.frame.env[h.items], node),
                                            "index": IndexArg((SliceArg(None, norm.to_arg(
                                                count(h), node), None),))}, base=h.user)


def as_array(norm, h, node):
    """The list as NumPy converts it: a new array of its items."""
    return norm.b.emit(by_name("copy"), {"x": view(norm, h, node)}, base=h.user)


def truth(norm, h, node):
    c = count(h)
    if isinstance(c, Const):
        return Const(c.value > 0)
    return norm.b.emit(by_name("greater"), {"x": c, "y": Const(0)}, base=f"{h.user}_nonempty")
