"""Statements in the normalizer (loops are in frontend/normalize/loops.py, nested defs in
frontend/normalize/calls.py): expression statements (calls that write into arrays, print), assignments
to names, tuples and subscripts (`y[i] = v` becomes `y = rt.setitem(y, i, v)` through the alias
model, transpile/frontend/normalize/aliasing.py), augmented assignments (in place on arrays, as NumPy), `return`,
and `if` (a condition known now picks a branch; one on array data becomes an `If`)."""
import ast
import importlib
import sys
import itertools
import types

import gast
import numpy as np

from transpile.frontend.normalize import array_literals, checks, runlists
from transpile.frontend.normalize.aliasing import Stale, stale_error
from transpile.errors import TranspileError, ShapesNeeded
from transpile.core.ir import Const, IndexArg, Var
from transpile.frontend.normalize.branches import dynamic_if
from transpile.frontend.normalize.builtins import effect_statement, items_of
from transpile.frontend.normalize.expressions import subscript_index
from transpile.frontend.normalize.out_keyword import numpy_out_call
from transpile.frontend.normalize.random import draw_statement
from transpile.frontend.normalize.values import LocalFunction, RunList, Static, Struct
from transpile.primitives import by_name, lookup
from transpile.frontend.parse import read_binding


UNSUPPORTED_STMTS = {
    gast.Try: ("try/except", "move error handling outside the transformed function"),
    gast.With: ("with", "move the context manager outside the transformed function"),
    gast.Global: ("global", "pass the value in as an argument and return the new value"),
    gast.Nonlocal: ("nonlocal", "pass the value in as an argument and return the new value"),
    gast.ClassDef: ("class definition", "define the class outside the function"),
    gast.AsyncFunctionDef: ("async def", "use a plain function"),
}


def stmt_Pass(norm, node):
    pass


def stmt_Expr(norm, node):
    if isinstance(node.value, gast.Constant) and isinstance(node.value.value, str):
        return  # docstring
    if isinstance(node.value, gast.Call) and writing_call(norm, node.value):
        norm.expr(node.value, "t")      # a function of the user's that writes into arrays
        return
    if numpy_out_call(norm, node.value) is not None:    # np.add(x, y, out=x): a write
        norm.expr(node.value, "t")
        return
    if effect_statement(norm, node):      # print(...), breakpoint()
        return
    if list_method(norm, node.value):     # parts.append(v), parts.extend(more)
        return
    if draw_statement(norm, node.value):  # rng.normal(size=3): numbers skipped, state advanced
        return
    if ufunc_at_statement(norm, node):    # np.add.at(a, idx, v): a loop of a[i] += v
        return
    if array_method_statement(norm, node):    # a.sort(), a.fill(v): writes of the whole array
        return
    if fill_diagonal_statement(norm, node):   # np.fill_diagonal(a, v): a loop of writes
        return
    if put_statement(norm, node):         # np.put(a, ind, v) / a.put(ind, v): a loop of writes
        return
    if copyto_statement(norm, node):      # np.copyto(dst, src): dst[...] = src
        return
    if isinstance(node.value, (gast.Yield, gast.YieldFrom)):
        raise norm.error(node, "unsupported: generator (yield)",
                         hint="return the values instead (a list or tuple)")
    raise norm.error(node, "an expression statement has no effect in a transformed function "
                     "(side effects such as print or in-place methods are not kept)",
                     hint="assign the result to a variable, or move the call outside")


# the write of one element: `a[i] += v` (add, subtract, multiply), or the ufunc of the two
_AT_OPS = {np.add: "{a} += {v}", np.subtract: "{a} -= {v}", np.multiply: "{a} *= {v}",
           np.maximum: "{a} = np.maximum({a}, {v})", np.minimum: "{a} = np.minimum({a}, {v})"}


def ufunc_at_statement(norm, node):
    """`np.add.at(a, idx, v)` (also subtract, multiply, maximum, minimum) with idx a vector of
    integers, or a tuple of such vectors (one per leading axis of a: `np.add.at(A, (rows,
    cols), v)`): written as the unbuffered loop NumPy runs, `for k in range(len(idx)):
    a[idx[k]] += v[k]` (v broadcast to a[idx]'s shape first, as zeros of that shape plus v),
    so every transform sees plain subscript writes and repeated indices accumulate. Other index
    kinds are refused by name."""
    call = node.value
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Attribute) or \
            call.func.attr != "at":
        return False
    try:
        ufunc = norm.expr(call.func.value, "f")
    except TranspileError:
        return False
    if not isinstance(ufunc, Static) or not isinstance(ufunc.obj, np.ufunc):
        return False
    op = _AT_OPS.get(ufunc.obj)
    name = f"np.{ufunc.obj.__name__}.at"
    if op is None:
        raise norm.error(node, f"{name} is not supported (np.add.at, np.subtract.at, "
                         "np.multiply.at, np.maximum.at and np.minimum.at are)",
                         construct=f"{name}(...)")
    if len(call.args) != 3 or call.keywords or not isinstance(call.args[0], gast.Name):
        raise norm.error(node, f"{name} is supported as {name}(name, indices, values) on an "
                         "array held by a name", construct=f"{name}(...)")
    a = call.args[0].id
    idx, val, k = f"{a}_at_index", f"{a}_at_value", f"{a}_at_k"
    src = [ast.unparse(gast.gast_to_ast(e)) for e in call.args[1:]]
    where = call.args[1]
    if isinstance(where, gast.Tuple):       # (rows, cols): one vector per leading axis
        names = [f"{idx}{j}" for j in range(len(where.elts))]
        parts = [ast.unparse(gast.gast_to_ast(e)) for e in where.elts]
        text = "".join(f"{n} = np.asarray({p})\n"
                       f"assert {n}.ndim == 1 and {n}.shape[0] == {names[0]}.shape[0], "
                       f"'{name}: only a tuple of integer vectors of one length is supported "
                       "here'\n" for n, p in zip(names, parts))
        at = ", ".join(f"{n}[{k}]" for n in names)
        text += (f"{val} = np.zeros(({names[0]}.shape[0],) + {a}.shape[{len(names)}:], "
                 f"{a}.dtype) + {src[1]}\n"
                 f"for {k} in range({names[0]}.shape[0]):\n"
                 f"    " + op.format(a=f"{a}[{at}]", v=f"{val}[{k}]") + "\n")
        return _statements_for(norm, node, text)
    text = (f"{idx} = np.asarray({src[0]})\n"
            f"assert {idx}.ndim == 1, '{name}: only a vector of integer indices is supported "
            "here'\n"
            f"{val} = np.zeros_like({a}[{idx}]) + {src[1]}\n"
            f"for {k} in range({idx}.shape[0]):\n"
            f"    " + op.format(a=f"{a}[{idx}[{k}]]", v=f"{val}[{k}]") + "\n")
    return _statements_for(norm, node, text)


def array_method_statement(norm, node):
    """The array methods that write into their array, `a.sort(axis=-1)` and `a.fill(v)`
    (a a name or a subscript of one: `x[i].sort()` sorts a row of x), written as a write of
    the whole array, `a[...] = np.sort(a, axis)` and `a[...] = v`, so the alias model sees
    a write into a (and into the base of a view). Other arguments (order=) are refused."""
    call = node.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr in ("sort", "fill")):
        return False
    target = call.func.value
    root = target
    while isinstance(root, gast.Subscript):
        root = root.value
    if not (isinstance(root, gast.Name) and isinstance(norm.frame.env.get(root.id), Var)):
        return False
    method = call.func.attr
    what = f"{ast.unparse(gast.gast_to_ast(target))}.{method}"
    kwargs = {kw.arg: kw.value for kw in call.keywords}
    names = ("axis", "kind") if method == "sort" else ("value",)
    if len(call.args) > len(names) or set(kwargs) - set(names) or \
            any(n in kwargs for n in names[:len(call.args)]):
        allowed = "axis= and kind=" if method == "sort" else "one value"
        raise norm.error(node, f"{what}(...) is supported with {allowed}",
                         construct=f"{what}(...)")
    kwargs.update(zip(names, call.args))
    src = {k: ast.unparse(gast.gast_to_ast(v)) for k, v in kwargs.items()}
    if method == "fill" and "value" not in src:
        raise norm.error(node, f"{what}() takes one value", construct=f"{what}(...)")
    a = root.id
    text = ""
    if target is not root:             # a view of the array, written through
        view = f"{a}_{method}_view"
        text += f"{view} = {ast.unparse(gast.gast_to_ast(target))}\n"
        a = view
    if method == "fill":
        text += f"{a}[...] = {src['value']}\n"
    else:
        text += f"{a}[...] = np.sort({a}, axis={src.get('axis', '-1')})\n"
    return _statements_for(norm, node, text)


def _statements_for(norm, node, text):
    """Normalize `text` (Python statements) in place of the statement `node`, at its line."""
    for st in gast.parse(text).body:
        for sub in gast.walk(st):
            if "lineno" in sub._attributes:
                gast.copy_location(sub, node)
                sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
        norm.stmt(st)
    return True


def _statement_call_of(norm, node, fn):
    """The call of `fn` (np.fill_diagonal, np.copyto) that the expression statement `node`
    is, or None."""
    call = node.value
    if not isinstance(call, gast.Call) or not isinstance(call.func, (gast.Name, gast.Attribute)):
        return None
    try:
        func = norm.expr(call.func, "f")
    except TranspileError:
        return None
    return call if isinstance(func, Static) and func.obj is fn else None


def fill_diagonal_statement(norm, node):
    """`np.fill_diagonal(a, v)` on a 2-D array: written as the loop NumPy runs,
    `for k in range(min(a.shape[0], a.shape[1])): a[k, k] = v` (v computed once), so every
    transform sees plain subscript writes. wrap=True and arrays that are not 2-D are refused."""
    call = _statement_call_of(norm, node, np.fill_diagonal)
    if call is None:
        return False
    args = list(call.args)
    wrap = [kw.value for kw in call.keywords if kw.arg == "wrap"]
    if len(args) == 3:
        wrap.append(args.pop())
    if len(args) != 2 or any(kw.arg not in ("a", "val", "wrap") for kw in call.keywords) or \
            not isinstance(args[0], gast.Name):
        raise norm.error(node, "np.fill_diagonal is supported as np.fill_diagonal(name, value) "
                         "on an array held by a name")
    if wrap and not (isinstance(wrap[0], gast.Constant) and wrap[0].value is False):
        raise norm.error(node, "np.fill_diagonal(..., wrap=True) is not supported",
                         hint="write the diagonal with a loop of a[i, j] = value")
    a = args[0].id
    k, value = f"{a}_diag_k", f"{a}_diag_value"
    text = (f"{value} = {ast.unparse(gast.gast_to_ast(args[1]))}\n"
            f"assert {a}.ndim == 2, 'np.fill_diagonal: only a 2-D array is supported here'\n"
            f"for {k} in range(min({a}.shape[0], {a}.shape[1])):\n"
            f"    {a}[{k}, {k}] = {value}\n")
    return _statements_for(norm, node, text)


def copyto_statement(norm, node):
    """`np.copyto(dst, src)` / `np.copyto(dst, src, where=mask)`: a write of the whole array,
    `dst[...] = src` (dst keeps its dtype; `where=`: `np.where(mask, src, dst)` written)."""
    call = _statement_call_of(norm, node, np.copyto)
    if call is None:
        return False
    kwargs = {kw.arg: kw.value for kw in call.keywords}
    args = list(call.args) + [kwargs.pop(k) for k in ("dst", "src") if k in kwargs]
    if len(args) != 2 or set(kwargs) - {"where", "casting"}:
        raise norm.error(node, "np.copyto is supported as np.copyto(dst, src) with where=",
                         construct="np.copyto(...)")
    casting = kwargs.get("casting")
    if casting is not None and not (isinstance(casting, gast.Constant) and
                                    casting.value == "same_kind"):
        raise norm.error(node, "np.copyto(..., casting=...) other than 'same_kind' is not "
                         "supported", construct="np.copyto(...)")
    dst, src = (ast.unparse(gast.gast_to_ast(a)) for a in args)
    if "where" in kwargs:
        mask = ast.unparse(gast.gast_to_ast(kwargs["where"]))
        src = f"np.where({mask}, {src}, {dst})"
    return _statements_for(norm, node, f"{dst}[...] = {src}\n")


_PUT_MODES = ("raise", "wrap", "clip")


def put_statement(norm, node):
    """`np.put(a, ind, v, mode)` (or `a.put(ind, v, mode)`): written as the loop NumPy runs
    over the flattened indices, `a[unravelled ind[k]] = v[k % len(v)]` (ind and v flattened,
    a negative index counted from the end; mode 'raise' raises IndexError past either end,
    'wrap' wraps, 'clip' clips), so every transform sees plain subscript writes into a (views
    of a and its base included) and a repeated index keeps the last value, as NumPy's. The
    multi-index needs a's rank when the code is generated."""
    call = node.value
    if not isinstance(call, gast.Call) or not isinstance(call.func, (gast.Name, gast.Attribute)):
        return False
    args, kwargs = list(call.args), {kw.arg: kw.value for kw in call.keywords}
    if isinstance(call.func, gast.Attribute) and call.func.attr == "put" and \
            isinstance(call.func.value, gast.Name) and \
            isinstance(norm.frame.env.get(call.func.value.id), Var):
        target, what = call.func.value, f"{call.func.value.id}.put"       # a.put(ind, v)
    else:
        try:
            func = norm.expr(call.func, "f")
        except TranspileError:
            return False
        if not (isinstance(func, Static) and func.obj is np.put):
            return False
        what = "np.put"
        target = args.pop(0) if args else kwargs.pop("a", None)
    names = ["ind", "v", "mode"]
    for name, value in zip(names, args):
        if name in kwargs:
            raise norm.error(node, f"{what}() got multiple values for argument {name!r}")
        kwargs[name] = value
    if len(args) > 3 or set(kwargs) - set(names) or not {"ind", "v"} <= set(kwargs) or \
            not isinstance(target, gast.Name):
        raise norm.error(node, f"{what} is supported as np.put(name, indices, values, mode) "
                         "on an array held by a name", construct=f"{what}(...)")
    mode = "raise"
    if "mode" in kwargs:
        m = kwargs["mode"]
        if not (isinstance(m, gast.Constant) and m.value in _PUT_MODES):
            raise norm.error(node, f"{what}(..., mode=...) takes 'raise', 'wrap' or 'clip', "
                             "written as a constant", construct=f"{what}(...)")
        mode = m.value
    a = target.id
    arr = norm.expr(target, a)
    nd = norm.b.emit(by_name("ndim"), {"x": norm.to_arg(arr, node)}, base="nd")
    if not isinstance(nd, Const):      # (an array a loop carries: the rank it entered with)
        known = runlists.dtype_ndim(norm, arr)
        nd = Const(known[1]) if known is not None else nd
    if not isinstance(nd, Const):
        raise norm.error(node, f"{what} needs the array's rank when the code is generated",
                         hint="call the function under jit (shapes known), or write the "
                         "loop of a[i, j] = v", cls=ShapesNeeded)
    if nd.value == 0:
        raise norm.error(node, f"{what} into a 0-d array is not supported",
                         construct=f"{what}(...)")
    p = f"{a}_put"
    # ind and v evaluated once, in order, under names of their own; a scalar is written as it is
    scalar, counts = {}, {}
    for k in ("ind", "v"):
        value = norm.expr(kwargs[k], f"{p}_{k}")
        scalar[k] = _rank(norm, value, node) == 0
        counts[k] = value
        norm.bind_name(f"{p}_{k}", value)
    # the multi-index of flat position `at` (C order), with lengths read from a's shape; each
    # position taken modulo its axis length, so optimize/no_raise.py sees writes that cannot
    # raise (the index was checked or wrapped before)
    items = []
    for d in range(nd.value):
        stride = " * ".join(f"{a}.shape[{e}]" for e in range(d + 1, nd.value))
        pos = f"({p}_at // ({stride}))" if stride else f"{p}_at"
        items.append(f"{pos} % {a}.shape[{d}]")
    if mode == "clip":
        fix = [f"{p}_at = min(max({p}_at, 0), {p}_size - 1)"]
    else:
        fix = [f"{p}_at = {p}_at % {p}_size"]
    # mode 'raise': every index checked before the first write (a call that raises leaves the
    # array as it was; NumPy's own loop may have written the indices before the bad one)
    check = [f"if {p}_at + {p}_size < 0 or {p}_at >= {p}_size:",
             f"    raise IndexError('{what}: an index is out of bounds')"] \
        if mode == "raise" else []

    def body(k):
        value = f"{p}_v" if scalar["v"] else f"{p}_value[{k} % {p}_value.shape[0]]"
        return fix + [f"{a}[{', '.join(items)}] = {value}"]
    lines = [f"{p}_size = {a}.size"]
    count = 1 if scalar["ind"] else _count(norm, counts["ind"], node)
    if scalar["ind"]:
        lines += [f"{p}_at = {p}_ind"] + check + body(0)
    elif count is not None and count <= _PUT_UNROLL:
        # indices counted now: one write each (a loop of one trip over a computed index of a
        # matrix is refused by the loop specialization)
        lines.append(f"{p}_index = np.ravel(np.asarray({p}_ind))")
        for k in range(count if check else 0):
            lines += [f"{p}_at = {p}_index[{k}]"] + check
        for k in range(count):
            lines += [f"{p}_at = {p}_index[{k}]"] + body(k)
    else:
        lines.append(f"{p}_index = np.ravel(np.asarray({p}_ind))")
        if check:
            lines += [f"for {p}_k in range({p}_index.shape[0]):",
                      f"    {p}_at = {p}_index[{p}_k]"] + ["    " + line for line in check]
        lines += [f"for {p}_k in range({p}_index.shape[0]):",
                  f"    {p}_at = {p}_index[{p}_k]"] + ["    " + line for line in body(f"{p}_k")]
    if not scalar["v"]:             # (no values: NumPy writes nothing)
        lines = [f"{p}_value = np.ravel(np.asarray({p}_v))", f"if {p}_value.shape[0] > 0:"] + \
            ["    " + line for line in lines]
    text = "\n".join(lines) + "\n"
    return _statements_for(norm, node, text)


_PUT_UNROLL = 16     # np.put with at most this many indices known now: written out


def _count(norm, value, node):
    """The number of elements of a value when the code is generated (a flat list of
    scalars, a constant, an array of known shape), or None."""
    if isinstance(value, Const):
        return int(np.size(value.value))
    if isinstance(value, Struct):
        if value.kind in ("list", "tuple") and all(_rank(norm, v, node) == 0
                                                    for v in value.items):
            return len(value.items)
        return None
    if isinstance(value, Var):
        n = norm.b.emit(by_name("size"), {"x": value}, base="n")
        return int(n.value) if isinstance(n, Const) else None
    return None


def _rank(norm, value, node):
    """The rank of a value when the code is generated (a list counts as an array), or None."""
    if isinstance(value, Const):
        return np.ndim(value.value)
    if isinstance(value, Struct):
        return 1
    if isinstance(value, Var):
        nd = norm.b.emit(by_name("ndim"), {"x": value}, base="nd")
        return nd.value if isinstance(nd, Const) else None
    return None


def list_method(norm, call):
    """`name.append(v)` / `name.extend(seq)` on a list the function built: the name is bound
    to the longer list (refused when another name holds the same list: it would not see it)."""
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            isinstance(call.func.value, gast.Name) and \
            isinstance(norm.frame.env.get(call.func.value.id), RunList):
        runlist_method(norm, norm.frame.env[call.func.value.id], call)
        return True
    if struct_pop(norm, call) is not None:
        return True
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr in ("append", "extend") and isinstance(call.func.value, gast.Name)):
        return False
    name = call.func.value.id
    lst = norm.frame.env.get(name)
    if not (isinstance(lst, Struct) and lst.kind == "list"):
        return False
    if call.keywords or len(call.args) != 1:
        raise norm.error(call, f"list.{call.func.attr} takes one argument")
    if any(_holds(v, lst) for k, v in norm.frame.env.items() if k != name):
        raise norm.error(call, f"{name}.{call.func.attr}(...) on a list another name (or a "
                         "list holding it) also holds is not supported",
                         hint="build the list under one name, e.g. rows = [[...] for ...] "
                         "from the finished parts")
    value = norm.expr(call.args[0], name)
    if call.func.attr == "extend" and isinstance(value, RunList):
        # a list of known structure extended by one of run-time length: a new such list
        norm.bind_name(name, runlists.concatenated(norm, lst, value, call))
        return True
    if call.func.attr == "append":
        new = lst.items + [value]
    else:
        more = items_of(norm, value, call, "list.extend")
        if more is None:
            raise norm.error(call, "list.extend of an array needs its length when the code is "
                             "generated", cls=ShapesNeeded)
        new = lst.items + list(more)
    norm.bind_name(name, Struct("list", new))
    return True


def struct_pop(norm, call):
    """`name.pop()` / `name.pop(i)` on a list of known structure: the item (None: not such a
    call); the name is bound to the shorter list."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr == "pop" and isinstance(call.func.value, gast.Name)):
        return None
    name = call.func.value.id
    lst = norm.frame.env.get(name)
    if not (isinstance(lst, Struct) and lst.kind == "list"):
        return None
    if call.keywords or len(call.args) > 1:
        raise norm.error(call, "list.pop takes at most one argument")
    if any(_holds(v, lst) for k, v in norm.frame.env.items() if k != name):
        raise norm.error(call, f"{name}.pop(...) on a list another name (or a list holding it) "
                         "also holds is not supported")
    k = norm.static_value(norm.expr(call.args[0], name), call, "the index of list.pop") \
        if call.args else -1
    items = list(lst.items)
    try:
        item = items.pop(k)
    except IndexError:
        raise norm.error(call, "pop from an empty list (or an index out of range)",
                         cls=TranspileError) from None
    norm.bind_name(name, Struct("list", items))
    return item


def _is_list(value):
    return isinstance(value, RunList) or isinstance(value, Struct) and value.kind == "list"


def runlist_method(norm, h, call):
    """A method of a list whose length is known only when the code runs (runlists.py)."""
    name = call.func.attr
    if call.keywords:
        raise norm.error(call, f"list.{name} with keyword arguments is not supported")
    args = [norm.expr(a, h.user) for a in call.args]
    if name == "append" and len(args) == 1:
        runlists.append(norm, h, args[0], call)
        return None
    if name == "pop" and len(args) <= 1:
        return runlists.pop(norm, h, args[0] if args else None, call)
    if name == "extend" and len(args) == 1:
        runlists.extend(norm, h, args[0], call)
        return None
    if name in ("reverse", "sort", "clear") and not args:
        runlists.in_place(norm, h, name, call)
        return None
    raise norm.error(call, f"list.{name}(...) on the list {h.user!r}, whose length is known "
                     "only when the code runs, is not supported (append, extend, pop, len, indexing, "
                     "slicing, iteration, + and np.array are)", cls=TranspileError)


def _holds(value, lst, depth=0):
    """Is list `lst` this value or inside it (a list of lists)?"""
    if value is lst:
        return True
    if isinstance(value, Struct) and depth < 16:
        return any(_holds(v, lst, depth + 1) for v in value.items)
    return False


def writing_call(norm, call):
    """Is this call (an expression statement) to a user function or local def, by its name
    or through a module (`step(u)`, `solvers.step(u)`)?"""
    try:
        func = norm.expr(call.func, "f") if isinstance(call.func, gast.Name) or \
            _module_attribute(norm, call.func) else None
    except TranspileError:
        return False
    return isinstance(func, LocalFunction) or (
        isinstance(func, Static) and isinstance(func.obj, types.FunctionType)
        and lookup(func.obj) is None)


def _module_attribute(norm, node):
    """Is `node` an attribute of a module, `mod.f` or `pkg.mod.f` (read without effects)?"""
    root = node
    while isinstance(root, gast.Attribute):
        root = root.value
    if root is node or not isinstance(root, gast.Name):
        return False
    try:
        value = norm.expr(root, "f")
    except TranspileError:
        return False
    return isinstance(value, Static) and isinstance(value.obj, types.ModuleType)


def stmt_Assign(norm, node):
    # `a = b = value`: the value is computed once and bound to each target from left to right,
    # so every name holds the same object (one buffer for an array, as in Python)
    value = norm.expr(node.value, _target_base(node.targets[0]))
    for k, target in enumerate(node.targets):
        assign(norm, target, value, node)
        if k == 0 and isinstance(target, gast.Name):
            value = norm.frame.env[target.id]      # (the value may have taken its name)


def stmt_AnnAssign(norm, node):
    if node.value is None:
        return
    value = norm.expr(node.value, _target_base(node.target))
    assign(norm, node.target, value, node)


def stmt_AugAssign(norm, node):
    if isinstance(node.target, gast.Name) and isinstance(node.op, gast.Add) and \
            _is_list(norm.frame.env.get(node.target.id)):
        # `lst += seq` extends the list in place (every name holding it sees the items)
        call = gast.Call(func=gast.Attribute(value=_as_load(node.target), attr="extend",
                                             ctx=gast.Load()), args=[node.value], keywords=[])
        gast.copy_location(call, node)
        gast.fix_missing_locations(call)
        list_method(norm, call)
        return
    binop = gast.BinOp(left=_as_load(node.target), op=node.op, right=node.value)
    gast.copy_location(binop, node)
    held = isinstance(node.target, gast.Subscript) and \
        isinstance(node.target.value, gast.Name) and \
        isinstance(norm.frame.env.get(node.target.value.id), Struct)
    if isinstance(node.target, gast.Name) or held:
        # (`bufs[0] += 1.0`, `params[k] -= lr * grads[k]`: the array the list or dict holds)
        current = norm.expr(node.target, _target_base(node.target))
        if held:
            known = runlists.dtype_ndim(norm, current) if isinstance(current, Var) else None
            if known is None and isinstance(current, Var) and norm.b.avals is None:
                raise norm.error(node, f"whether {node.target.value.id}[...] holds an array "
                                 "(written in place) or a number (rebound) is not known when "
                                 "the code is generated", cls=ShapesNeeded,
                                 construct=f"{node.target.value.id}[...] op= ...")
            # a number (np.float64 is immutable) or a value of unknown rank: the entry is
            # rebound
            held = known is not None and known[1] > 0
    value = norm.expr(binop, _target_base(node.target))
    if (isinstance(node.target, gast.Name) or held) and norm.mem.in_place(current) \
            and isinstance(value, (Var, Const)):
        # an array: NumPy writes in place (every alias sees it; the dtype is kept)
        user = node.target.id if isinstance(node.target, gast.Name) else \
            f"{node.target.value.id}[...]"
        norm.mem.write(current, None, value, node, user)
        return
    assign(norm, node.target, value, node)


def stmt_Return(norm, node):
    value = Const(None) if node.value is None else norm.expr(node.value, "out")
    if norm.frame.owned and isinstance(value, Var) and norm.b.body \
            and getattr(norm.b.body[-1], "out", None) == value.name and value.name.startswith("out_"):
        norm.rename_last(norm.namer.fresh("out"))
        value = Var(norm.b.body[-1].out)
    norm.frame.returned = value


def stmt_If(norm, node):
    cond = norm.condition(node.test, "cond")
    known, truth = norm.static_truth(cond)
    if known:
        norm.run_body(node.body if truth else node.orelse)
        return
    dynamic_if(norm, node, cond)


_PENDING = itertools.count()


def assign(norm, target, value, node):
    if isinstance(target, gast.Name):
        norm.bind_name(target.id, value)
    elif isinstance(target, (gast.Tuple, gast.List)):
        n = len(target.elts)
        if any(isinstance(e, gast.Starred) for e in target.elts):
            return assign_starred(norm, target, value, node)
        if isinstance(value, Struct):
            if len(value) != n:
                raise norm.error(node, f"cannot unpack {len(value)} values into {n} names")
            parts = value.items
        elif isinstance(value, Static) and isinstance(value.obj, (tuple, list)):
            parts = [norm.classify(v, None) for v in value.obj]
        elif isinstance(value, (Var, Const)):
            parts = []
            for i, elt in enumerate(target.elts):
                idx = IndexArg((Const(i),))
                parts.append(norm.b.emit(by_name("getitem"), {"x": value, "index": idx},
                                         base=_target_base(elt)))
        else:
            raise norm.error(node, "cannot unpack this value")
        # `a, b, c = b * k, c, a` binds in parallel: while `a` is bound, the parts still to
        # be bound read the old `a`, so its name may not be given to the new value. A part
        # that is a view (`A[0], A[1] = A[1], A[0]`) sees the writes of the targets before it,
        # as in NumPy: the parts wait under hidden names, which the writes rebind
        held = getattr(norm, "pending_reads", frozenset())
        env = norm.frame.env
        keys = [f".pending.{next(_PENDING)}" for _ in range(n)]   # (nested targets nest)
        env.update(zip(keys, parts))
        try:
            for k, elt in enumerate(target.elts):
                part = env.pop(keys[k])
                if isinstance(part, Stale):
                    raise stale_error(norm, node, part)
                norm.pending_reads = held | _vars_in([env[key] for key in keys[k + 1:]])
                assign(norm, elt, part, node)
        finally:
            for key in keys:
                env.pop(key, None)
            norm.pending_reads = held
    elif isinstance(target, gast.Subscript):
        assign_subscript(norm, target, value, node)
    else:
        raise norm.error(node, f"unsupported assignment target: {type(target).__name__}")


def assign_starred(norm, target, value, node):
    """`a, *rest = x`: rest is the list of the middle elements (x's length must be known when
    the code is generated: a tuple/list, or an array under jit or a shape-specializing
    transform)."""
    elts = target.elts
    star = [i for i, e in enumerate(elts) if isinstance(e, gast.Starred)]
    if len(star) != 1:
        raise norm.error(node, "multiple starred expressions in assignment")
    items = items_of(norm, value, node, "a starred assignment")
    if items is None:
        raise norm.error(node, "a starred assignment from an array needs its length when the "
                         "code is generated", cls=ShapesNeeded,
                         hint="index it instead: a, rest = x[0], x[1:]")
    i, after = star[0], len(elts) - star[0] - 1
    if len(items) < len(elts) - 1:
        raise norm.error(node, f"not enough values to unpack (expected at least "
                         f"{len(elts) - 1}, got {len(items)})", cls=TranspileError)
    for elt, part in zip(elts[:i], items[:i]):
        assign(norm, elt, part, node)
    assign(norm, elts[i].value, Struct("list", items[i:len(items) - after]), node)
    for elt, part in zip(elts[i + 1:], items[len(items) - after:]):
        assign(norm, elt, part, node)


def assign_subscript(norm, target, value, node):
    base = target.value
    if not isinstance(base, gast.Name):
        return _assign_through(norm, target, value, node)
    name = base.id
    if name not in norm.frame.env:
        kind = _global_container(norm, base)
        if kind is not None:          # a dict or list of the module: not an array to copy
            raise norm.error(node, f"assignment into {name!r}, a global (or closure) {kind}: "
                             "transformed code cannot change global state",
                             construct=f"{name}[...] = ...",
                             hint="return the value and store it outside the transformed "
                             f"function ({name}[key] = f(...)), or build a local {kind} and "
                             "return it")
        raise norm.error(node, f"assignment into {name!r}, which is a global (or closure) "
                         "array: mutating global state is not supported",
                         construct=f"{name}[...] = ...",
                         hint="copy it first (y = np.copy(" + name + ")) or pass it in as an "
                         "argument and return the new value")
    current = norm.frame.env[name]
    if isinstance(current, Stale):
        raise stale_error(norm, node, current)
    if isinstance(current, Struct):
        if isinstance(target.slice, gast.Slice):
            raise norm.error(node, "slice assignment into a list is not supported")
        key = norm.static_value(norm.expr(target.slice, name), target.slice,
                                "an index into a list/dict")
        items = list(current.items)
        if current.kind == "dict":
            keys = list(current.keys)
            if key in keys:
                items[keys.index(key)] = value
            else:
                keys.append(key)
                items.append(value)
            order = sorted(range(len(keys)), key=lambda i: keys[i])
            norm.frame.env[name] = Struct("dict", [items[i] for i in order],
                                          [keys[i] for i in order])
        else:
            items[key] = value
            norm.frame.env[name] = Struct(current.kind, items)
        return
    x = norm.to_arg(current, node)
    index = subscript_index(norm, target.slice, name)
    # traj[k] = (x, y, z): the numbers stacked into one array first (as NumPy reads them)
    v = norm.to_arg(array_literals.stack_struct(norm, value, node, name), node)
    norm.mem.write(x, index, v, node, name)


def _assign_through(norm, target, value, node):
    """`A[i][j] = v`, `A.T[0] = v`, `A.reshape(-1)[k] = v`, `params[0][1] = v`: a write into
    the array the inner expression reads. A view of A (a row, a transpose, a reshape): NumPy
    changes A and so does the alias model; a copy (an integer-array index): the write is
    lost, as in NumPy."""
    root = target.value
    while isinstance(root, (gast.Subscript, gast.Attribute)) or \
            isinstance(root, gast.Call) and isinstance(root.func, gast.Attribute):
        root = root.func.value if isinstance(root, gast.Call) else root.value
    if not (isinstance(root, gast.Name) and root.id in norm.frame.env):
        raise norm.error(node, "assignment into a nested subscript or attribute of a global, "
                         "a call's result or a name not bound yet is not supported",
                         hint="write into a named array: y = ...; y[i, j] = v")
    what = ast.unparse(gast.gast_to_ast(target.value))
    inner = norm.expr(target.value, _target_base(root))
    if isinstance(inner, Stale):
        raise stale_error(norm, node, inner)
    if not isinstance(inner, Var):
        raise norm.error(node, f"assignment into {what}[...]: {what} is not an array (a "
                         "list or dict inside a list or dict is not written in place)",
                         construct=f"{what}[...] = ...",
                         hint="write into a named array: y = ...; y[i, j] = v")
    index = subscript_index(norm, target.slice, what)
    v = norm.to_arg(array_literals.stack_struct(norm, value, node, what), node)
    norm.mem.write(inner, index, v, node, what)


def _global_container(norm, name_node):
    """'dict' / 'list' when a global name holds one, else None."""
    try:
        value = norm.expr(name_node, "t")
    except Exception:       # noqa: BLE001  (only for the message)
        return None
    obj = value.obj if isinstance(value, Static) else None
    if isinstance(value, Var):          # data read from a global at every call
        for pname, where, _ in norm.free:
            if pname == value.name:
                try:
                    obj = read_binding(where)
                except Exception:       # noqa: BLE001
                    return None
    if isinstance(value, Struct):
        return "dict" if value.kind == "dict" else "list" if value.kind == "list" else None
    return type(obj).__name__ if isinstance(obj, (dict, list, set)) else None


def _vars_in(values):
    names = set()
    for v in values:
        if isinstance(v, Var):
            names.add(v.name)
        elif isinstance(v, Struct):
            names |= _vars_in(v.items)
    return frozenset(names)


def _target_base(target):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Subscript):
        return _target_base(target.value)
    if isinstance(target, gast.Attribute):
        return target.attr
    return "t"


def _as_load(target):
    if isinstance(target, gast.Name):
        return gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None)
    if isinstance(target, gast.Subscript):
        return gast.Subscript(value=_as_load(target.value), slice=target.slice, ctx=gast.Load())
    return target


def stmt_Import(norm, node):
    """`import numpy as np` / `import scipy.special` in the body: the name is bound to the
    module (the same object a module-level import gives), so calls through it resolve to the
    same rows."""
    for alias in node.names:
        module = _import(norm, node, alias.name)
        if alias.asname:
            norm.frame.env[alias.asname] = norm.classify(module, None, alias.asname)
        else:
            top = alias.name.split(".")[0]
            norm.frame.env[top] = norm.classify(sys.modules[top], None, top)


def stmt_ImportFrom(norm, node):
    """`from scipy.special import logsumexp` in the body."""
    if node.level:
        raise norm.error(node, "a relative import inside a transformed function is not "
                         "supported", hint="import at module level")
    module = _import(norm, node, node.module)
    for alias in node.names:
        if alias.name == "*":
            raise norm.error(node, "`from ... import *` inside a function is not valid Python")
        try:
            obj = getattr(module, alias.name)
        except AttributeError:
            obj = _import(norm, node, f"{node.module}.{alias.name}")
        name = alias.asname or alias.name
        norm.frame.env[name] = norm.classify(obj, None, name)


def _import(norm, node, name):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise norm.error(node, f"import of {name!r} failed: {e}", cls=TranspileError) from None


def stmt_Delete(norm, node):
    """`del name`: the name is unbound (the value lives on in other names that hold it)."""
    for target in node.targets:
        if not isinstance(target, gast.Name):
            raise norm.error(node, "del of a subscript or attribute is not supported",
                             hint="write a new array instead (np.delete returns one)")
        if target.id not in norm.frame.env:
            raise norm.error(node, f"name {target.id!r} is not defined", cls=TranspileError)
        del norm.frame.env[target.id]


# np.errstate modes that change no value: compiled code never warns on floating-point errors
# (inf and nan result, as in NumPy), so `ignore` and `warn` blocks are their bodies
_QUIET_ERRSTATE = ("ignore", "warn")


def stmt_With(norm, node):
    """`with np.errstate(divide="ignore", ...):` runs its body (the modes that change no
    value); any other context manager is refused."""
    for item in node.items:
        ctx = item.context_expr
        func = norm.expr(ctx.func, "f") if isinstance(ctx, gast.Call) else None
        if not (isinstance(func, Static) and func.obj is np.errstate) or ctx.args or \
                item.optional_vars is not None:
            label, hint = UNSUPPORTED_STMTS[gast.With]
            raise norm.error(node, f"unsupported statement: {label} (only np.errstate)",
                             hint=hint)
        for kw in ctx.keywords:
            mode = norm.static_value(norm.expr(kw.value, "mode"), kw.value,
                                     "an np.errstate mode")
            if mode not in _QUIET_ERRSTATE:
                raise norm.error(node, f"np.errstate({kw.arg}={mode!r}) is not supported: "
                                 "compiled code gives inf/nan without raising or calling",
                                 construct="with np.errstate(...)",
                                 hint="check the result (np.isfinite) and raise yourself")
    norm.run_body(node.body)


STATEMENTS = {
    "With": stmt_With,
    "Import": stmt_Import, "ImportFrom": stmt_ImportFrom, "Delete": stmt_Delete,
    "Pass": stmt_Pass, "Expr": stmt_Expr, "Assign": stmt_Assign, "AnnAssign": stmt_AnnAssign,
    "AugAssign": stmt_AugAssign, "Return": stmt_Return, "If": stmt_If,
    **checks.STATEMENTS,     # assert, raise
}
