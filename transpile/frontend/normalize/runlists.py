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
the list's dtype, or a list of tuples is refused with the line.

A list of arrays (`traj.append(y)`, the states of a simulation) is a RunList too when its items
have one dtype and number of axes: the buffer has one more axis in front, and every append
checks at run time that the item has the buffer's row shape (np.array of arrays of different
shapes fails in NumPy as well). Python's list holds the appended object itself, so a write
into it afterwards would show in the list: such a write is refused (aliasing.MemoryModel.pin),
as is a write into an item read back from the list; items read back are copies.
"""
import gast
import numpy as np

from transpile.core.avals import AVal

from transpile.core.ir import Const, IndexArg, SliceArg, TupleArg, Var
from transpile.errors import ShapesNeeded, TranspileError
from transpile.frontend.normalize.values import LIST_METHODS, RunList, Struct
from transpile.primitives import by_name
from transpile.primitives.internal.control import assign as assign_prim
from transpile.primitives.internal.control import cast_into as cast_into_prim
from transpile.primitives.internal.control import setitem as setitem_prim
from transpile.primitives.numpy.arrays import flip as flip_prim
from transpile.primitives.numpy.nondiff import empty as empty_prim
from transpile.primitives.numpy.nondiff import full as full_prim
from transpile.primitives.numpy.nondiff import ones as ones_prim
from transpile.primitives.numpy.nondiff import zeros as zeros_prim
from transpile.primitives.numpy.structure import astype as astype_prim
from transpile.primitives.numpy.structure import copy as copy_prim
from transpile.primitives.numpy.structure import getitem as getitem_prim
from transpile.primitives.numpy.structure import moveaxis as moveaxis_prim
from transpile.primitives.numpy.structure import ravel as ravel_prim
from transpile.primitives.numpy.structure import reshape as reshape_prim
from transpile.primitives.numpy.structure import swapaxes as swapaxes_prim
from transpile.primitives.numpy.structure import transpose as transpose_prim

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


def item_kind(norm, value, node, user):
    """(dtype, number of axes) of a list item np.array would stack: a number (0 axes) or an
    array of numbers; None where it is neither."""
    if isinstance(value, Const):
        d = item_dtype(norm, value, node, user)
        return (d, 0) if d is not None else None
    if not isinstance(value, Var):
        return None
    d = dtype_ndim(norm, value)
    if d is not None:
        return (d[0], d[1]) if d[0].kind in _NUMBER_KINDS else None
    return (item_dtype(norm, value, node, user), 0)     # (raises: the type must be known)


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
    avals, unsized = norm.b.avals, norm.b.unsized
    av = avals.get(atom.name) if avals is not None else None
    if av is None and unsized is not None:
        av = unsized.get(atom.name)         # (a value of run-time length: its rank and dtype)
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
    if prim in (transpose_prim, moveaxis_prim, swapaxes_prim, flip_prim):
        return dtype_ndim(norm, args.get("x"), depth + 1)       # the same axes, reordered
    if prim is ravel_prim:
        x = dtype_ndim(norm, args.get("x"), depth + 1)
        return (x[0], 1) if x is not None else None
    if prim is reshape_prim:
        x, shape = dtype_ndim(norm, args.get("x"), depth + 1), args.get("shape")
        nd = len(shape.items) if isinstance(shape, TupleArg) else \
            (len(shape.value) if isinstance(shape.value, tuple) else 1) \
            if isinstance(shape, Const) else None
        return (x[0], nd) if x is not None and nd is not None else None
    if prim is astype_prim and isinstance(args.get("dtype"), Const):
        x = dtype_ndim(norm, args.get("x"), depth + 1)
        try:
            return (np.dtype(args["dtype"].value), x[1]) if x is not None else None
        except TypeError:
            return None
    if prim in (zeros_prim, ones_prim, empty_prim, full_prim) and \
            isinstance(args.get("dtype"), Const) \
            and args["dtype"].value is not None:
        shape = args.get("shape")
        if isinstance(shape, TupleArg):
            nd = len(shape.items)
        elif isinstance(shape, Const):
            nd = len(shape.value) if isinstance(shape.value, (tuple, list)) else 1
        else:
            nd = 1 if isinstance(shape, Var) and norm.mem.is_int(shape) else None
        try:
            return (np.dtype(args["dtype"].value), nd) if nd is not None else None
        except TypeError:
            return None
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
        if x is None or not isinstance(axis, Const) or not isinstance(keep, Const) or \
                set(args) - {"x", "axis", "keepdims"}:
            return None
        ax = axis.value
        if ax is None:
            nd = x[1] if keep.value else 0
        elif isinstance(ax, (int, np.integer)) and not isinstance(ax, bool) and \
                -x[1] <= ax < x[1]:
            nd = x[1] if keep.value else x[1] - 1
        else:
            return None
        try:
            with np.errstate(all="ignore"):
                return np.asarray(prim.impl(np.ones((1,) * x[1], x[0]))).dtype, nd
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


def list_kind(norm, values, node, user):
    """(np.array's dtype, axes of each item) for a list holding these values (RunLists,
    numbers, arrays)."""
    dtypes, ndims = [], set()
    for v in values:
        if isinstance(v, RunList):
            dtypes.append(v.dtype)
            ndims.add(v.ndim)
            continue
        k = item_kind(norm, v, node, user)
        if k is None:
            raise norm.error(node, f"the list {user!r} grows by a number of items known only "
                             "when the code runs: only lists of numbers or of arrays are "
                             "supported then", cls=TranspileError,
                             hint="a list of tuples must grow the same way on every path (or "
                                  "keep one list per field: xs.append(x); ys.append(y))")
        dtypes.append(k[0])
        ndims.add(k[1])
    if len(ndims) > 1:
        raise norm.error(node, f"the list {user!r} grows by a number of items known only when "
                         "the code runs and holds items with different numbers of axes "
                         f"({', '.join(str(n) for n in sorted(ndims))}): np.array of it would "
                         "fail", cls=TranspileError,
                         hint="append items of one shape")
    ndim = ndims.pop() if ndims else 0
    kinds = sorted({str(d) for d in dtypes})
    if len(kinds) > 1:
        # np.array of the list would have a type that depends on which items it holds
        raise norm.error(node, f"the list {user!r} grows by a number of items known only when "
                         f"the code runs and holds items of several types ({', '.join(kinds)}): "
                         "the type of np.array of it would depend on the data",
                         cls=TranspileError, hint="give its items one type (float(v), 0.0)")
    return (dtypes[0] if dtypes else np.dtype(np.float64)), ndim


def items_of_lists(values):
    out = []
    for v in values:
        if isinstance(v, Struct):
            out += v.items
        elif isinstance(v, RunList):
            out.append(v)
    return out


SLACK = 8      # items a buffer made where paths meet has room for beyond the longest path


def new_runlist(norm, user, dtype, frame=None, ndim=0):
    return RunList(user, norm.namer.fresh(f"{user.lstrip('.')}_items"),
                   norm.namer.fresh(f"{user.lstrip('.')}_count"), np.dtype(dtype),
                   frame if frame is not None else norm.frame, ndim)


def row_shape(norm, values):
    """The shape of the arrays among `values` where known when the code is generated (the
    shapes known under jit), else None."""
    avals = norm.b.avals
    for v in values:
        av = avals.get(v.name) if isinstance(v, Var) and avals is not None else None
        if av is not None and av.ndim and all(isinstance(d, (int, np.integer))
                                              for d in av.shape):
            return tuple(int(d) for d in av.shape)
    return None


def absorb(norm, h, value, node, env, capacity=0, row=None):
    """Make `env` (a path's names) hold `value` (a list) as the RunList `h`, emitting the code
    where the builder is now (the end of that path). A list of known items gets a buffer of
    `capacity` items at least (paths that meet give their buffers one shape). An empty list of
    arrays gets an empty buffer with rows of shape `row` (where known: else of no length)."""
    if value is h:
        return
    if isinstance(value, RunList):
        if not np.can_cast(value.dtype, h.dtype, "safe") or value.ndim != h.ndim:
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
    if h.ndim and not value.items:
        # no item to take the row shape from: an empty buffer, grown by the first append
        pad = 0
        row = row if row is not None and len(row) == h.ndim else (0,) * h.ndim
        buf = norm.b.emit(by_name("zeros"), {"shape": Const((0,) + row),
                                             "dtype": Const(h.dtype.type)}, base=h.items)
    elif h.ndim:
        # rows of the first item's shape (np.array checks that the items share it); the
        # padding rows are zeros of that shape
        fill = norm.b.emit(by_name("zeros_like"), {"x": norm.to_arg(value.items[0], node)},
                           base=h.items) if pad else None
        padded = Struct("list", list(value.items) + [fill] * pad)
        buf = norm.apply(by_name("array"), [padded], {"dtype": Const(h.dtype.type)}, node,
                         h.items)
    elif value.items:
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
    """The buffer's variable holds h.dtype items (one axis more than an item): known to the
    type inference."""
    buf = env.get(h.items)
    if isinstance(buf, Var):
        norm.mem.dtypes[buf.name] = (h.dtype, 1 + h.ndim)


def _check_fits(norm, h, v, node):
    k = item_kind(norm, v, node, h.user)
    if k is not None and k[1] != h.ndim:
        raise norm.error(node, f"appending {_describe(k)} to the list {h.user!r} of "
                         f"{_describe((h.dtype, h.ndim))} items: np.array of it would fail",
                         cls=TranspileError, hint="append items of one shape")
    if k is None or not np.can_cast(k[0], h.dtype, "safe"):
        what = "a value that is not a number or an array" if k is None else _describe(k)
        raise norm.error(node, f"appending {what} to the list {h.user!r} of "
                         f"{_describe((h.dtype, h.ndim))} items: np.array of it would have "
                         "another type", cls=TranspileError,
                         hint="append values of one type (float(v), int(v), x.astype(...))")


def _describe(kind):
    dtype, ndim = kind
    return str(dtype) if ndim == 0 else f"a {ndim}-axis {dtype} array" if ndim > 1 else \
        f"a {dtype} vector"


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
    if h is not None:
        kinds = [list_kind(norm, items_of_lists([v]), node, user)
                 for v in values if v is not h and items_of_lists([v])]
        if not all(np.can_cast(d, h.dtype, "safe") and n == h.ndim for d, n in kinds):
            h = None
    if h is None:
        dtype, ndim = list_kind(norm, items_of_lists(values), node, user)
        h = new_runlist(norm, user, dtype, frame, ndim)
    # (room for a few more appends without a growth step: an unrolled loop's next items)
    capacity = max([len(v.items) for v in values if isinstance(v, Struct)] + [0]) + SLACK
    row = row_shape(norm, items_of_lists(values)) if h.ndim else None
    h.row = row if h.row is None else h.row
    for value, body, env in zip(values, bodies, envs):
        saved = norm.b.body
        norm.b.body = body
        try:
            absorb(norm, h, value, node, env, capacity, row)
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
    dtype, ndim = list_kind(norm, items_of_lists([entry, post]), node, user)
    h = new_runlist(norm, user, dtype, frame, ndim)
    h.row = row_shape(norm, items_of_lists([entry, post])) if ndim else None
    if ndim and not entry.items and h.row is None:
        trips = None            # no row shape before the loop: the first append grows it
    if trips is None:
        absorb(norm, h, entry, node, frame.env, row=h.row)
        h.bound = None          # the loop appends a number of items known only at run time
    else:
        for v in entry.items:
            _check_fits(norm, h, v, node)
        cap = norm.b.emit(by_name("multiply"), {"x": trips, "y": Const(per_trip)}, base="cap")
        cap = norm.b.emit(by_name("add"), {"x": cap, "y": Const(len(entry.items))}, base="cap")
        if ndim and not entry.items:        # rows of the items' shape known under jit
            frame.env[h.items] = norm.b.emit(by_name("zeros"), {
                "shape": norm.to_arg(Struct("tuple", [cap] + [Const(n) for n in h.row]), node),
                "dtype": Const(h.dtype.type)}, base=h.items)
        elif ndim:
            # rows of the first item's shape (each item stored is checked against it)
            capname = norm.namer.fresh("_runlist_cap")
            dims = ", ".join(f"{_NEW}.shape[{a}]" for a in range(ndim))
            _run_in(norm, frame, node, f"{h.items} = np.zeros(({capname}, {dims}), "
                                       f"dtype={_dt(h)})\n", entry.items[0], [(capname, cap)])
        else:
            frame.env[h.items] = norm.b.emit(by_name("zeros"), {
                "shape": norm.to_arg(Struct("tuple", [cap]), node),
                "dtype": Const(h.dtype.type)}, base=h.items)
        frame.env[h.count] = Const(0)
        _register(norm, h, frame.env)
        for v in entry.items:
            _run_in(norm, frame, node, _store(h, _NEW), v)
        h.presized = True
        h.capacity, h.bound = None, None
    frame.env[user] = h
    return h


_NEW = "_runlist_new_item"


def _run_in(norm, frame, node, text, value, more=()):
    if frame is not norm.frame:
        raise norm.error(node, "a list of run-time length in an inlined function's loop",
                         cls=TranspileError)
    _run(norm, node, text, [(_NEW, value)] + list(more))


def _row_check(h, v, guard=""):
    """Code raising NumPy's ValueError where the array `v` has not the buffer's row shape."""
    if not h.ndim:
        return ""
    test = " or ".join(f"{v}.shape[{a}] != {h.items}.shape[{a + 1}]" for a in range(h.ndim))
    message = (f"the list {h.user!r} holds arrays of one shape in compiled code: an item of "
               "another shape was appended (np.array of such a list fails in NumPy too)")
    return f"if {guard}({test}):\n    raise ValueError({message!r})\n"


def _store(h, v):
    """Code storing the item `v` at the end of the buffer (room known to be there)."""
    return _row_check(h, v) + f"{h.items}[{h.count}] = {v}\n{h.count} = {h.count} + 1\n"


def changed_in(norm, stmts, h):
    """Do these statements call a list method on a name holding `h`?"""
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
        _run(norm, node, _store(h, v), [(v, value)])
        if h.bound is not None:
            h.bound += 1
        _pin_item(norm, h, value, node)
        return
    h.capacity = None           # grown at run time
    if h.bound is not None:
        h.bound += 1
    if h.ndim:
        # rows of the item's shape (written out where known); a buffer with rows already must
        # have that shape
        shape = f"(2 * {c} + 1, {', '.join(str(n) for n in h.row)})" if h.row is not None \
            else f"(2 * {c} + 1, {', '.join(f'{v}.shape[{a}]' for a in range(h.ndim))})"
        grow = (_row_check(h, v, guard=f"{b}.shape[0] > 0 and ") +
                f"if {c} == {b}.shape[0]:\n"
                f"    {g} = np.zeros({shape}, dtype={_dt(h)})\n"
                f"    if {c} > 0:\n"
                f"        {g}[:{c}] = {b}[:{c}]\n"
                f"    {b} = {g}\n")
    else:
        grow = (f"if {c} == {b}.shape[0]:\n"
                f"    {g} = np.zeros(2 * {c} + 1, dtype={_dt(h)})\n"
                f"    {g}[:{c}] = {b}\n"
                f"    {b} = {g}\n")
    _run(norm, node, grow + f"{b}[{c}] = {v}\n{c} = {c} + 1\n", [(v, value)])
    norm.frame.env.pop(g, None)
    _pin_item(norm, h, value, node)


def extend(norm, h, value, node):
    """lst.extend(seq) / lst += seq: the items of a list or tuple of known structure appended
    one by one; another list of run-time length (or an array of its items) joined in place."""
    _here(norm, h, node)
    if isinstance(value, Struct) and value.kind in ("list", "tuple"):
        for v in value.items:
            append(norm, h, v, node)
        return
    if isinstance(value, RunList):
        if value.ndim != h.ndim or not np.can_cast(value.dtype, h.dtype, "safe"):
            raise norm.error(node, f"extending the list {h.user!r} of "
                             f"{_describe((h.dtype, h.ndim))} items with items of another "
                             "kind", cls=TranspileError)
        more, n_more = as_array(norm, value, node), count(value)
    else:
        d = dtype_ndim(norm, value) if isinstance(value, (Var, Const)) else None
        if d is None or d[1] != h.ndim + 1 or not np.can_cast(d[0], h.dtype, "safe"):
            raise norm.error(node, f"extending the list {h.user!r} (its length known only when "
                             "the code runs) needs a list, or an array whose items are "
                             f"{_describe((h.dtype, h.ndim))}", cls=TranspileError)
        more = norm.to_arg(value, node)
        n_more = norm.b.emit(by_name("len"), {"x": more}, base=f"{h.user}_more")
    m, n = norm.namer.fresh(f"{h.user}_more"), norm.namer.fresh(f"{h.user}_nmore")
    b, c = h.items, h.count
    _run(norm, node, f"{b} = np.concatenate(({b}[:{c}], {m}.astype({_dt(h)})))\n"
                     f"{c} = {c} + {n}\n", [(m, more), (n, n_more)])
    _register(norm, h, norm.frame.env)
    h.capacity, h.bound, h.presized = None, None, False     # (a buffer of another length)


def _pin_item(norm, h, value, node):
    """An array appended: Python's list holds that object, so a later write into its memory
    would show in the list (the buffer holds a copy): refused (aliasing.MemoryModel.pin)."""
    if h.ndim and isinstance(value, Var):
        loc = norm.frame.loc(node)
        line = f" at line {loc[1]}" if loc and loc[1] else ""
        norm.mem.pin(value.name, "shared", f"an array appended{line} to the list {h.user!r} "
                     "(its length known only when the code runs): Python's list holds that "
                     "array itself and would see this write; the compiled list holds a copy",
                     "append a copy (lst.append(x.copy())) or write before appending")


def _pin_read(norm, h, item, node):
    """An item read back (a copy of a buffer row): writing into it is refused, as it would
    change the list in Python."""
    if h.ndim and isinstance(item, Var):
        norm.mem.pin(item.name, "through", f"an item of the list {h.user!r} (its length known "
                     "only when the code runs): Python would change the list's item; the "
                     "compiled list handed out a copy", "write into np.array(lst) instead, or "
                     "keep the items in a preallocated array")


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
    read = f"np.copy({h.items}[{k}])" if h.ndim else f"{h.items}[{k}]"
    _run(norm, node, f"{r} = {read}\n")
    out = norm.frame.env.pop(r)
    norm.frame.env.pop(k, None)
    _pin_read(norm, h, out, node)
    return _typed(norm, h, out)


def _typed(norm, h, item):
    """An item read from the list: an integer where the list holds integers."""
    if h.ndim:
        return item
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
    read = "np.copy({})" if h.ndim else "{}"        # (a row: a copy of it)
    if index is None:
        _run(norm, node, f"if {c} == 0:\n"
                         f"    raise IndexError('pop from empty list')\n"
                         f"{c} = {c} - 1\n"
                         f"{r} = {read.format(f'{b}[{c}]')}\n")
    else:
        k = _index(norm, h, index, node, "pop index out of range")
        j = norm.namer.fresh(f"{h.user}_shift")
        _run(norm, node, f"{r} = {read.format(f'{b}[{k}]')}\n"
                         f"for {j} in range({k}, {c} - 1):\n"
                         f"    {b}[{j}] = {b}[{j} + 1]\n"
                         f"{c} = {c} - 1\n")
        norm.frame.env.pop(k, None)
        norm.frame.env.pop(j, None)
    out = norm.frame.env.pop(r)
    _pin_read(norm, h, out, node)
    return _typed(norm, h, out)


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
    if h.ndim:
        raise norm.error(node, f"sorting the list {h.user!r} of arrays: Python compares arrays "
                         "item by item and fails on their truth value", cls=TranspileError)
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


def _fresh_list(norm, h_or_user, dtype, ndim, text, values, node, row=None):
    """A new RunList whose buffer and count the code `text` binds (`{b}` and `{c}` in it)."""
    user = h_or_user
    h = new_runlist(norm, user, dtype, norm.frame, ndim)
    h.row = row
    _run(norm, node, text.format(b=h.items, c=h.count), values)
    _register(norm, h, norm.frame.env)
    return h


def sliced(norm, h, bounds, node):
    """lst[a:b:s]: a new list of the items picked (a copy, as Python's slice)."""
    names = [norm.namer.fresh(f"{h.user}_{p}") for p in ("lo", "hi", "step")]
    values = [(n, v) for n, v in zip(names, bounds) if v is not None]
    picked = ":".join(n if v is not None else "" for n, v in zip(names, bounds))
    v = norm.namer.fresh(f"{h.user}_view")
    return _fresh_list(norm, h.user, h.dtype, h.ndim,
                       f"{{b}} = np.copy({v}[{picked}])\n{{c}} = {{b}}.shape[0]\n",
                       [(v, view(norm, h, node))] + values, node, h.row)


def _stacked(norm, value, node):
    """(array of the items, their count) of a RunList or a Struct list with items."""
    if isinstance(value, RunList):
        return as_array(norm, value, node), count(value)
    return norm.apply(by_name("array"), [value], {}, node, "items"), Const(len(value.items))


def concatenated(norm, left, right, node):
    """lst1 + lst2 of lists one of which has a run-time length: a new list of both's items."""
    user = next(v.user for v in (left, right) if isinstance(v, RunList))
    dtype, ndim = list_kind(norm, items_of_lists([left, right]), node, user)
    parts = [v for v in (left, right) if isinstance(v, RunList) or v.items]
    if len(parts) == 1:
        return sliced(norm, parts[0], (None, None, None), node)     # (a copy of the one list)
    for v in parts:
        if isinstance(v, RunList) and v.ndim != ndim:
            raise norm.error(node, f"joining lists of items with different numbers of axes "
                             "(np.array of the result would fail)", cls=TranspileError)
    (x, cx), (y, cy) = (_stacked(norm, v, node) for v in parts)
    names = [norm.namer.fresh(f"{user}_{p}") for p in ("head", "tail", "nhead", "ntail")]
    rows = [v.row for v in parts if isinstance(v, RunList) and v.row is not None]
    return _fresh_list(norm, user, dtype, ndim,
                       f"{{b}} = np.concatenate(({names[0]}, {names[1]}))\n"
                       f"{{c}} = {names[2]} + {names[3]}\n",
                       list(zip(names, (x, y, cx, cy))), node, rows[0] if rows else None)


def repeated(norm, h, times, node):
    """lst * k (k an int known when the code is generated, at most 8): the items k times."""
    k = times.value if isinstance(times, Const) else None
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k <= 8:
        raise norm.error(node, f"repeating the list {h.user!r} (its length known only when "
                         "the code runs) needs a small int known when the code is generated",
                         cls=TranspileError, hint="build the list with a loop")
    x = norm.namer.fresh(f"{h.user}_once")
    if k == 0:
        return _fresh_list(norm, h.user, h.dtype, h.ndim,
                           f"{{b}} = np.copy({x}[:0])\n{{c}} = 0\n",
                           [(x, as_array(norm, h, node))], node, h.row)
    parts = ", ".join([x] * k)
    return _fresh_list(norm, h.user, h.dtype, h.ndim,
                       f"{{b}} = np.concatenate(({parts},))\n{{c}} = {{b}}.shape[0]\n",
                       [(x, as_array(norm, h, node))], node, h.row)


def loop_view(norm, h, node):
    """items[:count] for a loop over the list: rows of a list of arrays are the list's items,
    which a write in the loop would change in Python (refused: the buffer holds copies)."""
    v = view(norm, h, node)
    if h.ndim and isinstance(v, Var):
        norm.mem.pin(v.name, "through", f"an item of the list {h.user!r} (its length known "
                     "only when the code runs), in a loop over the list: Python would change "
                     "the list's item", "loop over np.array(lst) and write into that")
    return v


JOINS = ("stack", "vstack", "hstack", "column_stack", "concatenate")


def join_name(prim):
    """Which of NumPy's functions joining a sequence of arrays `prim` is (None: another)."""
    return next((n for n in JOINS if by_name(n) is prim), None)


def joined(norm, name, h, axis, node):
    """np.stack/vstack/hstack/column_stack/concatenate (`name`, from join_name) of a list of
    arrays (`axis` a Const), as code over the stacked items (a new array; NumPy's error for an
    empty list)."""
    d = h.ndim
    a = axis.value if isinstance(axis, Const) else None
    if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
        raise norm.error(node, f"np.{name} of the list {h.user!r} (its length known only when "
                         "the code runs) needs an integer axis known when the code is generated",
                         cls=TranspileError)
    if name == "vstack":
        name, a = ("stack", 0) if d == 1 else ("concatenate", 0)
    elif name == "hstack":
        name, a = ("concatenate", 0 if d == 1 else 1)
    elif name == "column_stack":
        name, a = ("stack", 1) if d == 1 else ("concatenate", 1)
    n_out = d + 1 if name == "stack" else d
    if not -n_out <= a < n_out:
        raise norm.error(node, f"axis {a} is out of bounds for np.{name} of the list "
                         f"{h.user!r} ({d}-axis items)", cls=TranspileError)
    a %= n_out
    A, r = norm.namer.fresh(f"{h.user}_stacked"), norm.namer.fresh(f"{h.user}_joined")
    verb = "stack" if name == "stack" else "concatenate"
    text = (f"if {h.count} == 0:\n    raise ValueError('need at least one array to {verb}')\n")
    # (the item axis moved to `a`: a transpose, written out for the number of axes)
    moved = f"np.transpose({A}, {tuple(list(range(1, a + 1)) + [0] + list(range(a + 1, d + 1)))})"
    if name == "stack":
        text += f"{r} = {A}\n" if a == 0 else f"{r} = {moved}.copy()\n"
    elif d == 1:
        text += f"{r} = np.ravel({A})\n"
    else:
        src = A if a == 0 else f"{r}_moved"
        if a:
            text += f"{src} = {moved}.copy()\n"
        dims = [f"{src}.shape[{k}]" for k in range(d + 1)]
        if h.row is not None:       # the item shape known: the other lengths written out
            moved_shape = list(h.row[:a]) + [None] + list(h.row[a:])
            dims = [str(n) for n in moved_shape]
        dims[a:a + 2] = ["-1"]
        text += f"{r} = {src}.reshape(({', '.join(dims)},))\n"
    _run(norm, node, text, [(A, as_array(norm, h, node))])
    norm.frame.env.pop(f"{r}_moved", None)
    return norm.frame.env.pop(r)


def as_array(norm, h, node):
    """The list as NumPy converts it: a new array of its items."""
    return norm.b.emit(by_name("copy"), {"x": view(norm, h, node)}, base=h.user)


def truth(norm, h, node):
    c = count(h)
    if isinstance(c, Const):
        return Const(c.value > 0)
    return norm.b.emit(by_name("greater"), {"x": c, "y": Const(0)}, base=f"{h.user}_nonempty")
