"""Python builtins over lists and arrays inside transformed code: sum, min, max, sorted, zip,
enumerate, list, tuple, dict, reversed, isinstance.

A list or tuple has a structure known when the code is generated, so these expand into
primitives: `sum([a, b, c])` is `a + b + c`, `max(a, b)` is `np.maximum(a, b)`, `sorted` of a
list of scalars is a sorting network of minimum/maximum (differentiable like the values it
moves). Over an array they mean what Python means by iterating over its first axis:
`sum(x)` is `np.sum(x, axis=0)`, `max(x)` is `np.max(x, axis=0)`; zip/enumerate over arrays
unroll when the length is known (under jit); a `for` loop over them stays a loop.
"""
import gast
import builtins

import numpy as np

from transpile.errors import ShapesNeeded, TranspileError
from transpile.primitives import by_name
from transpile.core.ir import Const, IndexArg, SliceArg, Var
from transpile.frontend.normalize.values import Static, Struct, flatten_value

_HANDLED = ("sum", "min", "max", "sorted", "zip", "enumerate", "list", "tuple", "reversed",
            "isinstance", "any", "all", "divmod", "pow", "slice", "dict")
_BY_ID = {id(getattr(builtins, n)): n for n in _HANDLED}



def call_builtin(norm, obj, args, kwargs, node, base):
    name = _BY_ID.get(id(obj))
    if name is None or getattr(builtins, name) is not obj:
        return None
    return globals()["_" + name](norm, args, kwargs, node, base)


def _is_seq(v):
    return isinstance(v, Struct) and v.kind in ("tuple", "list")


def rows_known(norm, value):
    """The length of an array's first axis where it is known when the code is generated
    (under jit, from the arguments' shapes), or None."""
    avals = getattr(norm.b, "avals", None)
    if not isinstance(value, Var) or not avals:
        return None
    av = avals.get(value.name)
    return int(av.shape[0]) if av is not None and av.shape else None


def items_of(norm, value, node, what):
    """The elements of a list/tuple, or of an array whose length is known now; None when an
    array's length is known only at run time."""
    if _is_seq(value):
        return list(value.items)
    if isinstance(value, Struct) and value.kind == "dict":      # a dict's keys
        return [Const(k) for k in value.keys]
    if isinstance(value, Static) and isinstance(value.obj, (tuple, list, range)):
        return [norm.classify(v, None) for v in value.obj]
    if isinstance(value, Var):
        eqn = norm.mem.defs.get(value.name)
        if eqn is not None and eqn.prim is by_name("range") and \
                all(isinstance(a, Const) and isinstance(a.value, (int, np.integer))
                    for a in eqn.args.values() if a is not None):
            bounds = [int(a.value) for a in eqn.args.values()
                      if isinstance(a, Const) and a.value is not None]
            return [Const(i) for i in range(*bounds)]      # range(n) with n known now
    if isinstance(value, (Var, Const)):
        n = norm.b.emit(by_name("len"), {"x": norm.to_arg(value, node)}, base="n")
        if isinstance(n, Const):         # jit: the length is known from the argument's shape
            return [norm.b.emit(by_name("getitem"), {"x": value, "index": IndexArg((Const(i),))},
                                base="item") for i in range(n.value)]
        if norm.b.body and getattr(norm.b.body[-1], "out", None) == getattr(n, "name", None):
            norm.b.body.pop()
            norm.namer.taken.discard(n.name)
        return None
    raise norm.error(node, f"{what} needs a list, tuple or array")


def enumerate_call(norm, call):
    """`enumerate(seq)`, `enumerate(seq, k)` or `enumerate(seq, start=k)`: the node of the
    sequence and the start (an int atom, Const(0) by default)."""
    kw = {k.arg: k.value for k in call.keywords}
    bad = [k for k in kw if k != "start"]
    if bad or not 1 <= len(call.args) + len(kw) <= 2 or not call.args:
        raise norm.error(call, "enumerate takes an iterable and an optional start",
                         construct="enumerate(...)")
    start_node = call.args[1] if len(call.args) > 1 else kw.get("start")
    start = Const(0) if start_node is None else norm.atom(start_node, "start")
    return call.args[0], start


def _zip_keywords(norm, call):
    if call.keywords:
        raise norm.error(call, f"zip(..., {call.keywords[0].arg}=...) is not supported in "
                         "transformed code", construct="zip(...)")


def _plus(norm, start, i, node):
    """start + i for the enumerate counter (start a Const or an int Var)."""
    if isinstance(start, Const):
        return Const(start.value + i)
    if i == 0:
        return start
    return norm.b.emit(by_name("add"), {"x": start, "y": Const(i)}, base="i")


def _no_kwargs(norm, kwargs, node, fname, allowed=()):
    bad = [k for k in kwargs if k not in allowed]
    if bad:
        raise norm.error(node, f"{fname}(..., {bad[0]}=...) is not supported in transformed code",
                         hint="compute it outside the transformed function, or write the loop")


def _fold(norm, prim, values, node, base):
    acc = values[0]
    for v in values[1:]:
        acc = norm.b.emit(by_name(prim), {"x": norm.to_arg(acc, node), "y": norm.to_arg(v, node)},
                          base=base)
    return acc


def _sum(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "sum", ("start",))
    if not 1 <= len(args) <= 2:
        raise norm.error(node, "sum takes an iterable and an optional start")
    start = args[1] if len(args) > 1 else kwargs.get("start", Const(0))
    seq = args[0]
    if _is_seq(seq) or isinstance(seq, Static):
        values = items_of(norm, seq, node, "sum")
        return _fold(norm, "add", [start] + values, node, base)
    kw = {"axis": Const(0)}
    narrow = _narrow_int(norm, seq)
    if narrow is not None and isinstance(start, Const) and type(start.value) is int:
        # Python adds the elements one by one to an int start: a weak int, so the sum stays
        # in (and wraps around in) the array's own integer type, where np.sum widens to int64
        kw["dtype"] = Const(narrow)
    total = norm.apply(by_name("sum"), [seq], kw, node, base)
    return _fold(norm, "add", [start, total], node, base)


def _narrow_int(norm, value):
    """The dtype of an integer array narrower than 64 bits, where known now; else None."""
    avals = getattr(norm.b, "avals", None)
    av = avals.get(value.name) if isinstance(value, Var) and avals else None
    if av is None or not av.shape:
        return None
    dt = np.dtype(av.dtype)
    return dt.type if dt.kind in "iu" and dt.itemsize < 8 else None


def _extreme(kind):
    def handle(norm, args, kwargs, node, base):
        _no_kwargs(norm, kwargs, node, kind)
        if not args:
            raise norm.error(node, f"{kind} expects at least one argument")
        if len(args) > 1:
            return _python_extreme(norm, kind, list(args), node, base)
        seq = args[0]
        if _is_seq(seq) or isinstance(seq, Static):
            values = items_of(norm, seq, node, kind)
            if not values:
                raise norm.error(node, f"{kind}() of an empty sequence")
            return _python_extreme(norm, kind, values, node, base)
        return norm.apply(by_name(kind), [seq], {"axis": Const(0)}, node, base)
    return handle


def _python_extreme(norm, kind, values, node, base):
    """min(a, b, ...) / max(a, b, ...) as Python computes them: the first value, replaced by
    each later one that compares less (greater). A NaN after the first is passed over, as in
    Python (np.minimum would return it); ties keep the earlier value."""
    acc = norm.to_arg(values[0], node)
    for v in values[1:]:
        v = norm.to_arg(v, node)
        if isinstance(acc, Const) and isinstance(v, Const):     # max(2, n) of constants
            acc = Const((min if kind == "min" else max)(acc.value, v.value))
            continue
        better = norm.b.emit(by_name("less" if kind == "min" else "greater"), {"x": v, "y": acc},
                             base="cond")
        acc = norm.b.emit(by_name("where"), {"condition": norm.to_arg(better, node), "x": v,
                                             "y": acc}, base=base)
    if isinstance(acc, Var):
        # a number (Python's comparisons of arrays of several elements raise), which
        # `m = max(a, b); k = m; k += 1` rebinds: never written in place, as a NumPy where's
        # 0-d array would be
        norm.mem.scalar_vars.add(acc.name)
    return acc


_max = _extreme("max")
_min = _extreme("min")


def _truth_fold(kind):
    """any(seq) / all(seq): Python's truth of each item, or-ed / and-ed (a bool). Over an array
    whose length is known at run time only: bool(np.any(x, axis=0)) (NumPy raises, as Python
    does, where an item is an array of several elements)."""
    def handle(norm, args, kwargs, node, base):
        _no_kwargs(norm, kwargs, node, kind)
        if len(args) != 1:
            raise norm.error(node, f"{kind}() takes exactly one argument")
        seq = args[0]
        items = items_of(norm, seq, node, kind)
        if items is None:
            red = norm.apply(by_name(kind), [seq], {"axis": Const(0)}, node, base)
            return norm.apply(by_name("bool"), [red], {}, node, base)
        if not items:
            return Const(kind == "all")
        truths = [v if isinstance(v, Const) and isinstance(v.value, bool) else
                  norm.apply(by_name("bool"), [v], {}, node, base) for v in items]
        return _fold(norm, "logical_or" if kind == "any" else "logical_and", truths, node,
                     base)
    return handle


_any = _truth_fold("any")
_all = _truth_fold("all")


def _divmod(norm, args, kwargs, node, base):
    """divmod(a, b): (a // b, a % b), Python's floor division and its remainder."""
    _no_kwargs(norm, kwargs, node, "divmod")
    if len(args) != 2:
        raise norm.error(node, "divmod takes two arguments")
    q = norm.apply(by_name("floor_divide"), list(args), {}, node, base)
    r = norm.apply(by_name("mod"), list(args), {}, node, base)
    return Struct("tuple", [q, r])


def _pow(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "pow")
    if len(args) != 2:
        raise norm.error(node, "pow(base, exp, mod) is not supported in transformed code",
                         hint="write (base ** exp) % mod")
    return norm.apply(by_name("power"), list(args), {}, node, base)


SORT_KEY_LIMIT = 16     # sorted(..., key=f) is a network of n * (n - 1) / 2 exchanges (Numba takes
                        # ~1 s to compile 16 items, minutes for 30)


def _sorted(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "sorted", ("reverse", "key"))
    if len(args) != 1:
        raise norm.error(node, "sorted takes one sequence")
    reverse = norm.static_value(kwargs.get("reverse", Const(False)), node,
                                "sorted's reverse flag")
    values = items_of(norm, args[0], node, "sorted")
    if values is None:
        raise norm.error(node, "sorted over an array whose length is known only at run time is "
                         "not supported", hint="call it under jit (shapes known) or pass a list",
                         cls=ShapesNeeded)
    key = kwargs.get("key")
    if key is not None and not (isinstance(key, Static) and key.obj is None):
        return _sorted_by_key(norm, values, key, bool(reverse), node, base)
    if all(isinstance(v, Const) for v in values):
        out = [Const(v) for v in sorted((v.value for v in values), reverse=bool(reverse))]
        return Struct("list", out)
    heads = [v.items[0].value if _is_seq(v) and v.items and isinstance(v.items[0], Const)
             else None for v in values]
    if None not in heads and len(set(heads)) == len(heads):
        # sorted(d.items()), sorted(zip(names, arrays)): distinct constant first entries
        # decide the order when the code is generated
        try:
            order = sorted(range(len(values)), key=lambda i: heads[i], reverse=bool(reverse))
        except TypeError:       # ("a" < 1: Python raises too)
            raise norm.error(node, "sorted(...) of items whose first entries do not compare",
                             cls=TranspileError) from None
        return Struct("list", [values[i] for i in order])
    # a sorting network: every compare-exchange is a minimum/maximum pair
    vals = list(values)
    n = len(vals)
    for i in range(n):
        for j in range(n - 1 - i):
            a, b = norm.to_arg(vals[j], node), norm.to_arg(vals[j + 1], node)
            vals[j] = norm.b.emit(by_name("minimum"), {"x": a, "y": b}, base="lo")
            vals[j + 1] = norm.b.emit(by_name("maximum"), {"x": a, "y": b}, base="hi")
    if reverse:
        vals.reverse()
    return Struct("list", vals)


def _sorted_by_key(norm, values, key, reverse, node, base):
    """sorted(items, key=f): f of each item, then a stable exchange network on the keys (an
    exchange only where a key is strictly greater, so equal keys keep their order, as Python's
    sort), each exchange a select of both items (every leaf of a tuple item). reverse=True
    keeps equal keys in order too (Python reverses the comparison, not the result)."""
    from transpile.frontend.normalize.bindings import emit_copy, sub_body, rebuild_value, \
        value_leaves, tree_eq
    from transpile.core import ir
    n = len(values)
    if n > SORT_KEY_LIMIT:
        raise norm.error(node, f"sorted(..., key=...) of {n} items: supported up to "
                         f"{SORT_KEY_LIMIT} items in transformed code", cls=TranspileError,
                         hint="sort an array of keys: order = np.argsort(keys, kind='stable')")
    keys = [norm.call(key, [v], {}, node, "key") for v in values]
    items = list(values)
    trees = [value_leaves(v, node)[1] for v in items]
    if not all(tree_eq(trees[0], t) for t in trees[1:]):
        raise norm.error(node, "sorted(..., key=...) of items of different structures",
                         cls=TranspileError)

    def select(cond, a, b, what):
        la, tree = value_leaves(a, node)
        lb, _ = value_leaves(b, node)
        out = []
        for x, y in zip(la, lb):
            if x == y:
                out.append(x)
                continue
            name = norm.namer.fresh(what)
            b1, _ = sub_body(norm, lambda x=x: emit_copy(norm, name, x))
            b2, _ = sub_body(norm, lambda y=y: emit_copy(norm, name, y))
            norm.b.body.append(ir.If(cond, b1, b2, norm.b.loc))
            if norm.mem.is_int(x) and norm.mem.is_int(y):
                norm.mem.int_vars.add(name)
            out.append(Var(name))
        return rebuild_value(tree, iter(out))

    for i in range(n):
        for j in range(n - 1 - i):
            ka, kb = norm.to_arg(keys[j], node), norm.to_arg(keys[j + 1], node)
            swap = norm.b.emit(by_name("less" if reverse else "greater"),
                               {"x": ka, "y": kb}, base="swap")
            if isinstance(swap, Const):
                if swap.value:
                    keys[j], keys[j + 1] = keys[j + 1], keys[j]
                    items[j], items[j + 1] = items[j + 1], items[j]
                continue
            swap = norm.to_arg(swap, node)
            keys[j], keys[j + 1] = (select(swap, keys[j + 1], keys[j], "key"),
                                    select(swap, keys[j], keys[j + 1], "key"))
            items[j], items[j + 1] = (select(swap, items[j + 1], items[j], base),
                                      select(swap, items[j], items[j + 1], base))
    return Struct("list", items)


def _sequences(norm, args, node, fname):
    seqs = []
    for a in args:
        items = items_of(norm, a, node, fname)
        if items is None:
            raise norm.error(node, f"{fname} over an array whose length is known only at run "
                             "time is only supported as the iterable of a for loop",
                             hint="use it in `for ... in " + fname + "(...)`, or call under jit",
                             cls=ShapesNeeded)
        seqs.append(items)
    return seqs


def _zip(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "zip")
    seqs = _sequences(norm, args, node, "zip")
    return Struct("list", [Struct("tuple", list(t)) for t in zip(*seqs)])


def _enumerate(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "enumerate", ("start",))
    if not 1 <= len(args) <= 2:
        raise norm.error(node, "enumerate takes an iterable and an optional start")
    start = args[1] if len(args) > 1 else kwargs.get("start", Const(0))
    start = norm.static_value(start, node, "enumerate's start")
    (items,) = _sequences(norm, args[:1], node, "enumerate")
    return Struct("list", [Struct("tuple", [Const(start + i), v])
                             for i, v in enumerate(items)])


def _container(kind):
    def handle(norm, args, kwargs, node, base):
        _no_kwargs(norm, kwargs, node, kind)
        if not args:
            return Struct(kind, [])
        (items,) = _sequences(norm, args[:1], node, kind)
        return Struct(kind, items)
    return handle


_list = _container("list")
_tuple = _container("tuple")


def _dict(norm, args, kwargs, node, base):
    """dict(), dict(d) (a shallow copy: the same arrays under new keys), dict(a=x, ...),
    dict(pairs) with keys known when the code is generated, and dict(d, k=v)."""
    if len(args) > 1:
        raise norm.error(node, f"dict expected at most 1 argument, got {len(args)}",
                         cls=TranspileError)
    entries = {}
    if args:
        (src,) = args
        if isinstance(src, Struct) and src.kind == "dict":
            entries.update(zip(src.keys, src.items))
        else:
            for pair in _sequences(norm, [src], node, "dict")[0]:
                kv = items_of(norm, pair, node, "dict")
                if kv is None or len(kv) != 2:
                    raise norm.error(node, "dict(...) of a sequence needs (key, value) pairs",
                                     cls=TranspileError)
                entries[norm.static_value(kv[0], node, "a dict key")] = kv[1]
    entries.update(kwargs)
    keys = sorted(entries)
    return Struct("dict", [entries[k] for k in keys], keys)


def _reversed(norm, args, kwargs, node, base):
    _no_kwargs(norm, kwargs, node, "reversed")
    if len(args) != 1:
        raise norm.error(node, "reversed takes one sequence")
    if isinstance(args[0], (Var, Const)):
        # an array: its reversed view (zip(reversed(x), y) loops over it; list(...) of it
        # unrolls where its length is known)
        return norm.b.emit(by_name("getitem"), {"x": norm.to_arg(args[0], node), "index": IndexArg(
            (SliceArg(None, None, Const(-1)),))}, base=base)
    (items,) = _sequences(norm, args[:1], node, "reversed")
    return Struct("list", items[::-1])


# the Python types an array value may have at run time (a NumPy array, a NumPy or Python scalar)
_DATA_TYPES = (np.ndarray, np.generic, float, int, bool, complex)


def _slice(norm, args, kwargs, node, base):
    """slice(stop) / slice(start, stop[, step]): a Python slice where its bounds are known now
    (kept in tuples of indices: `y[tuple(slice(1, None) if i == k else slice(None) ...)]`),
    else an index of that slice."""
    _no_kwargs(norm, kwargs, node, "slice")
    if not 1 <= len(args) <= 3:
        raise norm.error(node, f"slice expected 1 to 3 arguments, got {len(args)}")
    parts = [Const(None)] + list(args) if len(args) == 1 else list(args)
    parts += [Const(None)] * (3 - len(parts))
    if all(isinstance(p, (Const, Static)) for p in parts):
        return Static(slice(*[p.value if isinstance(p, Const) else p.obj for p in parts]))
    return IndexArg((SliceArg(*[None if isinstance(p, Const) and p.value is None else
                                norm.to_arg(p, node) for p in parts]),))


def _isinstance(norm, args, kwargs, node, base):
    """Decided when the code is generated: from the value for constants and Python objects,
    from the structure for tuples/lists/dicts/NamedTuples; for array data only when the answer
    does not depend on whether the argument is a NumPy array or a Python scalar."""
    _no_kwargs(norm, kwargs, node, "isinstance")
    if len(args) != 2:
        raise norm.error(node, "isinstance takes a value and a class (or tuple of classes)")
    value = args[0]
    cls = norm.static_value(args[1], node, "the class of isinstance")
    if isinstance(value, Const):
        return Const(isinstance(value.value, cls))
    if isinstance(value, Static):
        return Const(isinstance(value.obj, cls))
    if isinstance(value, Struct):
        if value.kind == "node":
            return Const(issubclass(value.keys[0], cls))
        return Const(issubclass({"tuple": tuple, "list": list, "dict": dict}[value.kind], cls))
    classes = cls if isinstance(cls, tuple) else (cls,)
    hits = {issubclass(t, classes) for t in _DATA_TYPES}
    if hits == {False}:
        return Const(False)
    if hits == {True} or all(issubclass(t, classes) for t in (np.ndarray, np.generic, float)):
        return Const(True)
    raise norm.error(node, "isinstance of array data against "
                     f"{getattr(cls, '__name__', cls)} depends on whether the value is a NumPy "
                     "array or a Python scalar, which the transformed code does not fix",
                     hint="test the structure instead (np.ndim(x) == 0), or make it a static "
                     "argument")


# ---- effects: print(...) and breakpoint() as statements ---------------------------------------

def effect_statement(norm, node):
    """`print(...)` / `breakpoint()` as an expression statement: emitted as a debugging effect
    that runs with the values of each call. False for other statements."""
    call = node.value
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Name):
        return False
    try:
        func = norm.expr(call.func, "f")
    except Exception:
        return False
    if not isinstance(func, Static) or func.obj not in (builtins.print, builtins.breakpoint):
        return False
    if func.obj is builtins.breakpoint:
        if call.args or call.keywords:
            raise norm.error(node, "breakpoint() with arguments is not supported in transformed "
                             "code")
        names, values = [], []
        for name, v in norm.frame.env.items():      # the user's variables at this line
            if isinstance(v, (Var, Const)) and not (isinstance(v, Const) and
                                                       v.value is None):
                names.append(name)
                values.append(v)
        norm.apply(by_name("debug_breakpoint"), [Const(tuple(names))] + values, {}, node,
                   "breakpoint")
        return True
    opts = {"sep": " ", "end": "\n"}
    for kw in call.keywords:
        if kw.arg not in opts:
            raise norm.error(node, f"print(..., {kw.arg}=...) is not supported in transformed "
                             "code", hint="print to standard output with sep= and end= only")
        opts[kw.arg] = norm.static_value(norm.expr(kw.value, "t"), node, f"print's {kw.arg}")
    if any(isinstance(a, gast.JoinedStr) for a in call.args):
        return _print_formatted(norm, node, call.args, opts)
    values = []
    for a in call.args:
        if isinstance(a, gast.Starred):
            raise norm.error(node, "print(*values) is not supported in transformed code")
        v = norm.expr(a, "t")
        if isinstance(v, Static):
            v = Const(str(v.obj))
        if isinstance(v, Struct):
            leaves, _ = flatten_value(v)      # a tuple/list/dict of arrays: its leaves
            values += leaves
        else:
            values.append(v)
    norm.apply(by_name("debug_print"), [Const(opts["sep"]), Const(opts["end"])] + values, {},
               node, "printed")
    return True


_CONVERSIONS = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


def _print_formatted(norm, node, args, opts):
    """print(f"x0={x[0]:.3f}", y): one format template ("x0={:.3f} {}") and its values, printed
    with str.format at run time (rt.debug_printf)."""
    parts, values = [], []

    def literal(text):
        parts.append(str(text).replace("{", "{{").replace("}", "}}"))

    def field(expr, conversion=-1, spec=""):
        v = norm.expr(expr, "t")
        if isinstance(v, Static):
            v = Const(v.obj if isinstance(v.obj, str) else str(v.obj))
        if isinstance(v, Struct):
            raise norm.error(node, "a tuple/list/dict inside an f-string in print is not "
                             "supported", hint="print its elements")
        parts.append("{" + _CONVERSIONS.get(conversion, "") + (":" + spec if spec else "") + "}")
        values.append(v)

    for k, a in enumerate(args):
        if k:
            literal(opts["sep"])
        if isinstance(a, gast.Starred):
            raise norm.error(node, "print(*values) is not supported in transformed code")
        if not isinstance(a, gast.JoinedStr):
            field(a)
            continue
        for piece in a.values:
            if isinstance(piece, gast.Constant):
                literal(piece.value)
                continue
            spec = ""
            if piece.format_spec is not None:
                if not all(isinstance(p, gast.Constant) for p in piece.format_spec.values):
                    raise norm.error(node, "a computed format spec in an f-string is not "
                                     "supported in transformed code")
                spec = "".join(str(p.value) for p in piece.format_spec.values)
            field(piece.value, piece.conversion, spec)
    norm.apply(by_name("debug_printf"), [Const("".join(parts)), Const(opts["end"])] + values,
               {}, node, "printed")
    return True
