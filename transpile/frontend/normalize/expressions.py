"""Expressions in the normalizer (calls and lambdas are in frontend/normalize/calls.py): names
(resolved by object identity to a primitive, a static value, or data read at every call),
attributes, operators and comparisons (one primitive each), `and`/`or`/`not` and
`a if c else b` (decided now when the condition is known), tuple/list/dict literals (tracked
as `Struct`s), subscripts (into a Struct now, into an array as `getitem`), and list
comprehensions over sequences of known length (unrolled into a Struct)."""
import operator

import gast
import numpy as np

from transpile.frontend.normalize import array_literals, runlists
from transpile.frontend.normalize.aliasing import Stale, stale_error
from transpile.core import ir
from transpile.errors import NoAttribute, ReadBeforeSet, ShapesNeeded, TranspileError
from transpile.core.ir import Const, IndexArg, SliceArg, Var
from transpile.frontend.normalize.bindings import emit_copy, sub_body, trip_test
from transpile.frontend.normalize.branches import chosen, dynamic_ifexp
from transpile.frontend.normalize.callables import instance_attribute, watched_namespace
from transpile.frontend.normalize.pytree import node_attribute
from transpile.frontend.normalize.random import (GENERATOR_IN_PLACE, GENERATOR_METHODS,
                                                 LEGACY_METHODS, GeneratorMethod,
                                                 RandomStateValue)
from transpile.frontend.normalize.values import (DICT_METHODS, PLACEHOLDER_MARK, BoundMethod,
                                                DictMethod, Placeholder, RunList, Static,
                                                Struct, iteration_items)
from transpile.primitives import METHODS, by_name
from transpile.frontend.normalize.builtins import (_plus, _zip_keywords, enumerate_call, items_of,
                                                  rows_known)
from transpile.primitives.numpy.nondiff import logical_not
from transpile.primitives.numpy.structure import getitem


_BINOPS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "divide",
           gast.Pow: "power", gast.MatMult: "matmul", gast.FloorDiv: "floor_divide",
           gast.Mod: "mod", gast.BitAnd: "bitwise_and", gast.BitOr: "bitwise_or",
           gast.BitXor: "bitwise_xor", gast.LShift: "left_shift", gast.RShift: "right_shift"}
_CMPOPS = {gast.Gt: "greater", gast.GtE: "greater_equal", gast.Lt: "less",
           gast.LtE: "less_equal", gast.Eq: "equal", gast.NotEq: "not_equal"}
_UNARY = {gast.USub: "negative", gast.UAdd: "positive", gast.Not: "logical_not",
          gast.Invert: "invert"}
_ATTRIBUTES = {"T": "transpose", "shape": "attr_shape", "ndim": "attr_ndim", "size": "attr_size",
               "dtype": "attr_dtype", "real": "real", "imag": "imag"}


def expr_Constant(norm, node, base):
    if node.value is PLACEHOLDER_MARK:
        return Placeholder()
    return Const(node.value)


def expr_Name(norm, node, base):
    name = node.id
    for frame in [norm.frame]:
        if name in frame.env:
            value = frame.env[name]
            if isinstance(value, Stale):
                raise stale_error(norm, node, value)
            if isinstance(value, Placeholder):
                raise norm.error(node, f"local variable {name!r} is read before it is set",
                                 cls=ReadBeforeSet)
            if isinstance(value, Var) and value.name in norm.mem.unbound_unless_run:
                _check_bound(norm, name, value, node)
            return value
    resolver = norm.frame.resolver
    if resolver is None:
        raise norm.error(node, f"unknown name {name!r} in a rule template")
    try:
        obj, where = resolver.lookup(name)
    except NameError:
        raise norm.error(node, f"name {name!r} is not defined", cls=TranspileError) from None
    return norm.classify(obj, where, name)


def _check_bound(norm, name, value, node):
    """The counter of a range loop that may have run zero times, read where no value was
    bound before the loop: UnboundLocalError where the loop did not run, as in Python."""
    checked = norm.mem.unbound_checked
    if (value.name, id(norm.b.body)) in checked:
        return
    start, stop, step = norm.mem.unbound_unless_run[value.name]
    no_trip = trip_test(norm, start, stop, step, runs=False)
    known, truth = norm.static_truth(no_trip)
    if known and not truth:
        return
    message = f"cannot access local variable {name!r} where it is not associated with a value"
    stmts, _ = sub_body(norm, lambda: norm.apply(
        by_name("raise_error"), [Const("UnboundLocalError"), Const(message)], {}, node,
        "check"))
    norm.b.body.append(ir.If(no_trip, stmts, [], norm.b.loc))
    checked.add((value.name, id(norm.b.body)))


def expr_Attribute(norm, node, base):
    value = norm.expr(node.value, base)
    attr = node.attr
    if isinstance(value, Static) and isinstance(value.obj, (np.random.Generator,
                                                             np.random.RandomState)):
        # a generator of the caller's (a global, a closure): its state lives outside the code
        raise norm.error(node, f"a draw from a {type(value.obj).__name__} that the function "
                         "reads from outside (a global or a closure)", cls=TranspileError,
                         construct=f".{attr}(...)",
                         hint="pass the np.random.Generator as an argument, or make "
                              "np.random.default_rng(seed) inside the function")
    if isinstance(value, Static):
        found = instance_attribute(norm, value.obj, attr, node)
        if found is not None:
            return found
        try:
            obj = getattr(value.obj, attr)
        except AttributeError:
            raise norm.error(node, f"{value.obj!r} has no attribute {attr!r}",
                             cls=TranspileError) from None
        where = ("attr", value.obj, attr) if watched_namespace(value.obj) else None
        return norm.classify(obj, where, attr)
    if isinstance(value, Const) and isinstance(value.value, (str, bytes, type(None))) and \
            not hasattr(value.value, attr):
        # a string or None where the code expects an array (`x.mean()` of jit(f)("oops"))
        raise norm.error(node, f"{type(value.value).__name__!r} object has no attribute "
                         f"{attr!r}", cls=NoAttribute)
    if isinstance(value, (Var, Const)):
        if attr in _ATTRIBUTES:
            return norm.b.emit(by_name(_ATTRIBUTES[attr]), {"x": value}, base=base)
        if attr == "at":
            raise norm.error(node, "x.at[...] (JAX's functional update) is not supported",
                             hint="write NumPy: y = x.copy(); y[i] = v  (or np.where)")
        if attr in METHODS:
            return BoundMethod(value, attr)
        if (attr in GENERATOR_METHODS or attr in GENERATOR_IN_PLACE) and isinstance(value, Var):
            # rng.normal(...) on a np.random.Generator
            return GeneratorMethod(value, attr)
    if isinstance(value, RandomStateValue):      # rs.randn of np.random.RandomState(seed)
        if attr not in LEGACY_METHODS and attr not in GENERATOR_IN_PLACE:
            raise norm.error(node, f"np.random.RandomState's .{attr}(...) is not supported in "
                             "transformed code", cls=TranspileError,
                             hint="use np.random.default_rng(seed) and its methods")
        return GeneratorMethod(value.var, attr, legacy=True)
    if isinstance(value, Struct) and value.kind == "dict" and attr in DICT_METHODS:
        return DictMethod(value, attr)
    if isinstance(value, Struct) and value.kind == "node":     # NamedTuple, dataclass, ...
        return node_attribute(norm, value, attr, node)
    raise norm.error(node, f"unsupported attribute access .{attr}")


def expr_BinOp(norm, node, base):
    op = _BINOPS.get(type(node.op))
    if op is None:
        raise norm.error(node, f"unsupported operator {type(node.op).__name__}")
    left = norm.expr(node.left, base)
    right = norm.expr(node.right, base)
    if isinstance(left, RunList) or isinstance(right, RunList):
        return _runlist_binop(norm, node, op, left, right)
    if isinstance(left, Struct) or isinstance(right, Struct):
        left, right = _as_struct(left, right), _as_struct(right, left)
        if op == "add" and isinstance(left, Struct) and isinstance(right, Struct) and \
                left.kind == right.kind:
            return Struct(left.kind, left.items + right.items)
        if op == "add" and all(isinstance(v, Var) or isinstance(v, Struct) and v.kind == "tuple"
                               for v in (left, right)):      # a shape known at run time
            return norm.b.emit(by_name("tuple_concat"), {"a": norm.to_arg(left, node),
                                                         "b": norm.to_arg(right, node)},
                               base=base)
        if op == "multiply":          # (1,) * k, [0.0] * n: repeated, k known here
            seq, k = (left, right) if isinstance(left, Struct) else (right, left)
            if isinstance(seq, Struct) and seq.kind in ("tuple", "list") and \
                    isinstance(k, Const) and isinstance(k.value, (int, np.integer)) and \
                    not isinstance(k.value, (bool, np.bool_)):
                return Struct(seq.kind, list(seq.items) * max(int(k.value), 0))
        array_op = _sequence_with_array(norm, node, op, left, right, base)
        if array_op is not None:          # x + [a, b]: NumPy's elementwise op
            left, right = array_op
            return norm.b.emit(by_name(op), {"x": norm.to_arg(left, node),
                                             "y": norm.to_arg(right, node)}, base=base)
        raise norm.error(node, "arithmetic on a tuple/list/dict is not supported",
                         hint="use np.array(...) or operate on the elements")
    return norm.b.emit(by_name(op), {"x": norm.to_arg(left, node), "y": norm.to_arg(right, node)},
                       base=base)


def _runlist_binop(norm, node, op, left, right):
    """An operator on a list of run-time length: Python's meaning (lst1 + lst2 joins them,
    lst * k repeats it); with an array the list is an array (NumPy's elementwise meaning);
    anything else is Python's TypeError, refused when the code is generated."""
    def is_list(v):
        return isinstance(v, RunList) or isinstance(v, Struct) and v.kind == "list"
    if is_list(left) and is_list(right):
        if op == "add":
            return runlists.concatenated(norm, left, right, node)
    elif op == "multiply" and isinstance(left, RunList) and isinstance(right, Const):
        return runlists.repeated(norm, left, right, node)
    elif op == "multiply" and isinstance(right, RunList) and isinstance(left, Const):
        return runlists.repeated(norm, right, left, node)
    else:
        other = right if isinstance(left, RunList) else left
        d = runlists.dtype_ndim(norm, other) if isinstance(other, (Var, Const)) else None
        if d is not None and d[1] > 0:          # list op array: NumPy's elementwise op
            return norm.b.emit(by_name(op), {"x": norm.to_arg(left, node),
                                             "y": norm.to_arg(right, node)}, base="list_op")
    user = (left if isinstance(left, RunList) else right).user
    raise norm.error(node, f"this operator on the list {user!r} is not supported (Python "
                     "joins lists with +, repeats one with * int, and refuses other "
                     "operators)", cls=TranspileError,
                     hint="use np.array(lst) for elementwise arithmetic")


def _sequence_with_array(norm, node, op, left, right, base):
    """`x + [a, b]`, `(c, s) * v`: a list or tuple meeting an array (a value not known to be
    a number: Python refuses float + list) is the array NumPy makes of it; (left, right) with
    that array in its place, or None. With `*` the other must be known to be an array
    (`[0.0] * n` repeats the list)."""
    def is_seq(v):
        return isinstance(v, Struct) and v.kind in ("list", "tuple")
    if is_seq(left) == is_seq(right):
        return None
    seq, other = (left, right) if is_seq(left) else (right, left)
    if not isinstance(other, (Var, Const)):
        return None
    d = runlists.dtype_ndim(norm, other)
    if d is not None and d[1] == 0 or d is None and (isinstance(other, Const) or
                                                     op == "multiply"):
        return None
    arr = array_literals.sequence_array(norm, seq, node, base)
    return (arr, other) if seq is left else (other, arr)


def _as_struct(value, other):
    """A constant tuple/list (a shape known when the code is generated) as the Struct it
    meets in `(n,) + x.shape`."""
    if isinstance(value, Const) and isinstance(value.value, (tuple, list)) and \
            isinstance(other, Struct):
        return Struct("list" if isinstance(value.value, list) else "tuple",
                      [Const(v) for v in value.value])
    return value


def expr_UnaryOp(norm, node, base):
    prim = by_name(_UNARY[type(node.op)]) if type(node.op) in _UNARY else None
    if prim is None:
        raise norm.error(node, f"unsupported operator {type(node.op).__name__}")
    x = norm.expr(node.operand, base)
    if prim is logical_not and isinstance(x, RunList):
        x = runlists.truth(norm, x, node)
    if prim is logical_not:
        known, truth = norm.static_truth(x)
        if known:
            return Const(not truth)
    return norm.b.emit(prim, {"x": norm.to_arg(x, node)}, base=base)


def expr_Compare(norm, node, base):
    left = norm.expr(node.left, base)
    result = None
    for op, comp in zip(node.ops, node.comparators):
        right = norm.expr(comp, base)
        if isinstance(op, (gast.Is, gast.IsNot, gast.In, gast.NotIn)):
            value = static_compare(norm, op, left, right, node)
        elif _sequence(norm, left) is not None and _sequence(norm, right) is not None:
            value = _compare_sequences(norm, op, left, right, node, base)
        elif _known_objects(left, right):       # treedefs, dtypes, strings: Python compares
            value = Const(bool(_PYCMP[type(op)](_obj(left), _obj(right))))
        else:
            name = _CMPOPS[type(op)]
            value = norm.b.emit(by_name(name), {"x": norm.to_arg(left, node),
                                                "y": norm.to_arg(right, node)}, base=base)
        result = value if result is None else norm.b.emit(
            by_name("logical_and"), {"x": result, "y": value}, base=base)
        left = right
    return result


def _sequence(norm, v):
    """The items of a tuple or list known when the code is generated (None: not one)."""
    if isinstance(v, Struct) and v.kind in ("tuple", "list"):
        return list(v.items)
    if isinstance(v, Static) and isinstance(v.obj, (tuple, list)):
        return [norm.classify(o, None) for o in v.obj]
    return None


def _kind(v):
    return v.kind if isinstance(v, Struct) else type(v.obj).__name__


def _compare_sequences(norm, op, left, right, node, base):
    """`(i, j) != (0, 0)`, `x.shape == (3, 4)`: Python's comparison of two tuples (or lists),
    one truth value; equality item by item (False for a tuple against a list or another
    length), an ordering lexicographic over items known when the code is generated."""
    a, b = _sequence(norm, left), _sequence(norm, right)
    eq = isinstance(op, (gast.Eq, gast.NotEq))
    if eq and (_kind(left) != _kind(right) or len(a) != len(b)):
        return Const(isinstance(op, gast.NotEq))
    if not eq:
        values = [norm.static_value(v, node, "an ordering comparison of tuples")
                  for v in a + b]
        return Const(bool(_PYCMP[type(op)](tuple(values[:len(a)]), tuple(values[len(a):]))))
    result = Const(True)
    for x, y in zip(a, b):
        if _sequence(norm, x) is not None and _sequence(norm, y) is not None:
            same = _compare_sequences(norm, gast.Eq(), x, y, node, base)
        elif isinstance(x, (Const, Static)) and isinstance(y, (Const, Static)) and \
                not any(isinstance(_obj(v), np.ndarray) for v in (x, y)):
            same = Const(bool(_obj(x) == _obj(y)))
        else:
            same = norm.b.emit(by_name("equal"), {"x": norm.to_arg(x, node),
                                                  "y": norm.to_arg(y, node)}, base=base)
        if isinstance(same, Const) and not same.value:
            result = same
            break
        if not isinstance(same, Const):
            result = same if isinstance(result, Const) else norm.b.emit(
                by_name("logical_and"), {"x": result, "y": same}, base=base)
    if isinstance(op, gast.NotEq):
        return Const(not result.value) if isinstance(result, Const) else \
            norm.b.emit(by_name("logical_not"), {"x": result}, base=base)
    return result


_PYCMP = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
          gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge}


def _obj(v):
    return v.obj if isinstance(v, Static) else v.value


def _known_objects(left, right):
    """Two objects known now, one of them not a number: compared in Python (a TreeDef with a
    TreeDef, a dtype with a dtype), not as arrays."""
    return isinstance(left, (Static, Const)) and isinstance(right, (Static, Const)) and \
        (isinstance(left, Static) or isinstance(right, Static)) and \
        not any(isinstance(_obj(v), np.ndarray) for v in (left, right))


def static_compare(norm, op, left, right, node):
    if isinstance(op, (gast.Is, gast.IsNot)) and _none_and_argument(norm, left, right):
        # `w is None` of an argument given as an array or a number, not rebound since (the
        # optional argument pattern): never None, as Numba decides it from the type
        return Const(isinstance(op, gast.IsNot))

    if isinstance(op, (gast.Is, gast.IsNot)) and (_is_none(left) or _is_none(right)):
        other = right if _is_none(left) else left
        if isinstance(other, Struct) and not _is_none(other):
            # `opts is None` of a dict, tuple or list (an optional settings argument given)
            return Const(isinstance(op, gast.IsNot))
        if isinstance(other, ir.Var) and other.name in norm.mem.defs:
            # the result of an operation (`f(x[:4])` reading `if x is None` inside f): an
            # array or a number, never None
            return Const(isinstance(op, gast.IsNot))
        if isinstance(other, ir.Var):
            raise norm.error(node, "`is None` of a variable that may be None on one path and "
                             "a value on another, or a value computed in the function: compiled "
                             "code decides `is None` when it is generated, from the arguments "
                             "as passed (an argument given as an array, or left as None)",
                             hint="keep a flag next to the value (found = False ... found = "
                             "True), start the variable as a value, or pass the optional "
                             "argument from the caller's arguments")

    def py(v):
        if isinstance(v, Const):
            return v.value
        if isinstance(v, Static):
            return v.obj
        if isinstance(v, Struct) and isinstance(op, (gast.In, gast.NotIn)) and v.kind == "dict":
            return v.keys
        if isinstance(v, Struct) and isinstance(op, (gast.In, gast.NotIn)) and \
                v.kind in ("tuple", "list") and all(isinstance(i, (Const, Static))
                                                   for i in v.items):
            return [py(i) for i in v.items]     # mode in ("same", "valid")
        raise norm.error(node, "`is` / `in` need values known when the code is generated",
                         hint="compare arrays with == or np.isin")
    a, b = py(left), py(right)
    result = {gast.Is: operator.is_, gast.IsNot: operator.is_not,
              gast.In: lambda x, y: x in y, gast.NotIn: lambda x, y: x not in y}[type(op)](a, b)
    return Const(bool(result))


def _is_none(v):
    return isinstance(v, Const) and v.value is None or isinstance(v, Static) and v.obj is None


def _none_and_argument(norm, left, right):
    """One side None, the other an argument of the function as the caller gave it (the very
    value bound at entry: a name rebound since, possibly to None, is another value)."""
    def argument(v):
        return any(v is a for a in norm.arguments)
    return _is_none(left) and argument(right) or _is_none(right) and argument(left)


def expr_BoolOp(norm, node, base):
    """`a and b` / `a or b`: Python's value, one of the operands (`k = n or default`), not
    their truth; operands known when the code is generated decide it or drop out then."""
    is_and = isinstance(node.op, gast.And)
    values = []
    for k, v in enumerate(node.values):
        last = k == len(node.values) - 1
        if values:
            body, value = sub_body(norm, lambda v=v: norm.expr(v, base))
            if _may_raise(body) and not norm.static_truth(value)[0]:
                left = _operand_value(norm, node, base, is_and, values)
                values = [short_circuit(norm, node, base, is_and, left, body, value)]
                continue
            norm.b.body += body
        else:
            value = norm.expr(v, base)
        if isinstance(value, RunList):          # `while out and ...`: its truth, not its items
            value = runlists.truth(norm, value, node)
        known, truth = norm.static_truth(value)
        if known and not last:
            if truth != is_and:                 # decides it: Python stops at this operand
                values.append(value)
                break
            continue                            # passed over: Python goes on to the next
        values.append(value)
    return _operand_value(norm, node, base, is_and, values)


def _operand_value(norm, node, base, is_and, values):
    """The operand Python's and/or stops at, of `values` (the operands left to run time):
    np.logical_and/or of truth values, else the first falsy (and) / truthy (or) one."""
    if len(values) == 1:
        return values[0]
    if all(_is_truth_value(norm, v) for v in values):
        result = values[0]
        for v in values[1:]:
            result = norm.b.emit(by_name("logical_and" if is_and else "logical_or"),
                                 {"x": norm.to_arg(result, node), "y": norm.to_arg(v, node)},
                                 base=base)
        return result
    result = norm.to_arg(values[-1], node)
    for v in reversed(values[:-1]):
        v = norm.to_arg(v, node)
        picked = [result, v] if is_and else [v, result]     # (truthy, falsy)
        result = chosen(norm, _truth(norm, v, base), [[], []], picked, base, norm.b.loc)
    return result


def _truth(norm, value, base):
    if _is_truth_value(norm, value):
        return value
    return norm.b.emit(by_name("not_equal"), {"x": value, "y": Const(0)}, base=f"{base}_truth")


def _is_truth_value(norm, value):
    if isinstance(value, Const):
        return isinstance(value.value, (bool, np.bool_))
    known = runlists.dtype_ndim(norm, value) if isinstance(value, Var) else None
    return known is not None and known[0] == np.dtype(bool)


def _may_raise(body):
    """Must this code run only where Python would evaluate it? It indexes with a value computed
    at run time (x[i] past the end raises), divides numbers by a value known at run time,
    draws random numbers or has another effect (the generator would advance where Python's
    `or` skipped the draw), checks, converts or writes."""
    for st in ir.walk_eqns(body):
        prim = st.prim
        if not prim.pure or prim.keep or prim.check or prim.unsafe_in_select or \
                prim.writes_arg:
            return True
        if prim is getitem and any(
                isinstance(a, Var) for a in ir.iter_atoms([st.args["index"]])):
            return True
        if prim.lower_py is not None and any(isinstance(a, Var) for a in st.args.values()):
            return True     # `k > 0 and t % k == 0`: Python's % / // ** raise on numbers
    return any(isinstance(st, (ir.ForRange, ir.While)) for st in body)


def short_circuit(norm, node, base, is_and, left, right_body, right):
    """`left and right` where right's code may raise (`i < n and x[i] > 0`): right runs only
    where Python would evaluate it (`out = left and right` as an if)."""
    left = norm.to_arg(left, node)
    cond = _truth(norm, left, base)
    out = norm.namer.fresh(base)
    saved = norm.b.body
    norm.b.body = right_body
    emit_copy(norm, out, norm.to_arg(right, node))
    norm.b.body = decided = []
    emit_copy(norm, out, Const(not is_and) if _is_truth_value(norm, left) else left)
    norm.b.body = saved
    then, orelse = (right_body, decided) if is_and else (decided, right_body)
    norm.b.body.append(ir.If(cond, then, orelse, norm.b.loc))
    return Var(out)


def expr_IfExp(norm, node, base):
    cond = norm.condition(node.test, base)
    known, truth = norm.static_truth(cond)
    if known:
        return norm.expr(node.body if truth else node.orelse, base)
    return dynamic_ifexp(norm, node, cond, base)


def expr_Tuple(norm, node, base):
    return Struct("tuple", elements(norm, node.elts, base))


def expr_List(norm, node, base):
    return Struct("list", elements(norm, node.elts, base))


def elements(norm, elts, base):
    out = []
    for e in elts:
        if isinstance(e, gast.Starred):
            out += starred_items(norm, e, base, "*expansion")
        else:
            out.append(norm.expr(e, base))
    return out


def starred_items(norm, node, base, what):
    """The items of `*value` (in a call or a tuple/list display): a value of known length."""
    v = norm.expr(node.value, base)
    if isinstance(v, Struct):
        return list(v.items)
    if isinstance(v, Static) and isinstance(v.obj, (tuple, list)):
        return [norm.classify(x, None) for x in v.obj]
    if isinstance(v, Const) and isinstance(v.value, (tuple, list)):
        return [norm.classify(x, None) for x in v.value]   # a captured tuple of numbers
    if isinstance(v, (Var, Const)):      # x.shape, an array: known when shapes are
        items = items_of(norm, v, node, what)
        if items is not None:
            return items
        raise norm.error(node, f"{what} needs a tuple/list of known length (a shape or an "
                         "array's length known when the code is generated)", cls=ShapesNeeded)
    raise norm.error(node, f"{what} needs a tuple/list of known length")


def expr_Dict(norm, node, base):
    entries = {}
    for k, v in zip(node.keys, node.values):
        if k is None:           # {**params, "w": w}: the entries of a dict, later keys win
            inner = norm.expr(v, base)
            if not (isinstance(inner, Struct) and inner.kind == "dict"):
                raise norm.error(node, "** in a dict literal needs a dict")
            entries.update(zip(inner.keys, inner.items))
            continue
        key = norm.expr(k, base)
        if not isinstance(key, Const):
            raise norm.error(k, "dict keys must be constants")
        entries[key.value] = norm.expr(v, f"{base}_{key.value}")
    keys = sorted(entries)
    return Struct("dict", [entries[k] for k in keys], keys)


def expr_Subscript(norm, node, base):
    value = norm.expr(node.value, base)
    if isinstance(value, RunList):
        if isinstance(node.slice, gast.Slice):      # a new list of the items picked
            bounds = [None if e is None else norm.atom(e, base)
                      for e in (node.slice.lower, node.slice.upper, node.slice.step)]
            return runlists.sliced(norm, value, bounds, node)
        if isinstance(node.slice, gast.Tuple):
            raise norm.error(node, f"indexing the list {value.user!r} with a tuple: Python "
                             "refuses it", cls=TranspileError,
                             hint="np.array(lst)[i, j] indexes its items")
        return runlists.getitem(norm, value, norm.atom(node.slice, base), node)
    if isinstance(value, Static) and array_literals.is_concatenator(value.obj):
        return array_literals.index_concat(norm, value.obj, node, base)
    if isinstance(value, Static) and value.obj is np.mgrid:
        return array_literals.index_mgrid(norm, node, base)
    if isinstance(value, (Struct, Static)):
        key = norm.expr(node.slice, base) if not isinstance(node.slice, gast.Slice) else None
        if isinstance(node.slice, gast.Slice):
            lo, hi, st = [None if e is None else norm.static_value(norm.expr(e, base), e)
                          for e in (node.slice.lower, node.slice.upper, node.slice.step)]
            if isinstance(value, Struct):
                return Struct(value.kind, value.items[slice(lo, hi, st)])
            return norm.classify(value.obj[slice(lo, hi, st)], None)
        k = norm.static_value(key, node.slice, "an index into a tuple/list/dict")
        try:
            if isinstance(value, Struct):
                return value.get(k)
            return norm.classify(value.obj[k], None)
        except (KeyError, IndexError):
            raise norm.error(node, f"index {k!r} not found", cls=TranspileError) from None
    x = norm.to_arg(value, node)
    index = subscript_index(norm, node.slice, base)
    if any(isinstance(i, Const) and isinstance(i.value, str) for i in index.items):
        raise norm.error(node, "indexing with a string key needs a dict whose structure is "
                         "known, but this value is an array leaf", cls=TranspileError,
                         hint="call the function with the dict (or pass example arguments "
                              "to show / `transpile show --args ...`)")
    return norm.b.emit(by_name("getitem"), {"x": x, "index": index}, base=base)


def subscript_index(norm, node, base):
    elts = node.elts if isinstance(node, gast.Tuple) else [node]
    items = []
    for e in elts:
        if isinstance(e, gast.Slice):
            items.append(SliceArg(*[None if p is None else norm.atom(p, base)
                                    for p in (e.lower, e.upper, e.step)]))
        elif isinstance(e, gast.Constant) and e.value is None:
            items.append(None)
        elif isinstance(e, gast.Constant) and e.value is Ellipsis:
            items.append(Ellipsis)
        else:
            v = norm.expr(e, base)
            if len(elts) == 1 and not isinstance(node, gast.Tuple) and \
                    _index_tuple(norm, v) is not None:
                # x[t] of a tuple t = (i, j): x[i, j], as Python passes it (not x[[i, j]])
                for item in _index_tuple(norm, v):
                    items += _index_items(norm, item, e, base)
            else:
                items += _index_items(norm, v, e, base)
    return IndexArg(tuple(items))


def _index_tuple(norm, v):
    """The items of a tuple used as a whole index, None where v is not a tuple."""
    if isinstance(v, Struct) and v.kind == "tuple":
        return list(v.items)
    if isinstance(v, Static) and isinstance(v.obj, tuple):
        return [norm.classify(o, None) for o in v.obj]
    return None


def _index_items(norm, v, e, base):
    """The index items of one value in a subscript: None (np.newaxis), a slice(...) or an
    Ellipsis known now, or an array/number. A list (or tuple) holding values known only at run
    time, x[[i, j]], is the integer array NumPy makes of it (np.asarray): stacked here, so the
    transforms see one index array (vmap batches it; a literal list of traced names would be
    taken for an unbatched constant)."""
    if isinstance(v, Struct) and v.kind in ("list", "tuple"):
        v = array_literals.stack_struct(norm, v, e, base)
    if isinstance(v, Const) and v.value is None or isinstance(v, Static) and v.obj is None:
        return [None]
    if isinstance(v, Const) and v.value is Ellipsis or isinstance(v, Static) and \
            v.obj is Ellipsis:
        return [Ellipsis]
    if isinstance(v, IndexArg):
        return list(v.items)
    if isinstance(v, Static) and isinstance(v.obj, slice):
        return [SliceArg(*[None if p is None else norm.to_arg(norm.classify(p, None), e)
                           for p in (v.obj.start, v.obj.stop, v.obj.step)])]
    return [norm.to_arg(v, e)]


def expr_GeneratorExp(norm, node, base):
    return expr_ListComp(norm, node, base)     # consumed at once: sum(x * x for x in xs)


def expr_Starred(norm, node, base):
    raise norm.error(node, "*expansion is only supported in calls and literals")


def expr_JoinedStr(norm, node, base):
    raise norm.error(node, "f-strings are not supported in transformed functions")


# -- comprehensions ------------------------------------------------------------------------


def expr_DictComp(norm, node, base):
    """{k: v for ...}: the keys must be known when the code is generated (strings, ints)."""
    pairs = expr_ListComp(norm, node, base, pair=True).items
    keys, values = [], []
    for k, v in pairs:
        key = norm.static_value(k, node, "a key of a dict comprehension")
        if key in keys:
            values[keys.index(key)] = v
        else:
            keys.append(key)
            values.append(v)
    return Struct("dict", values, keys)


def expr_ListComp(norm, node, base, pair=False):
    if not pair and isinstance(node, gast.ListComp) and _long_range(norm, node):
        return _looped_comp(norm, node)
    try:
        return _list_comp(norm, node, base, pair)
    except _DataFilter:
        return _filtered_comp(norm, node, base)


COMP_UNROLL = 64    # a list comprehension over a longer range() is a loop, not written out


def _long_range(norm, node):
    """[elt for i in range(...)] with one clause over more than COMP_UNROLL numbers known when
    the code is generated (range(n) of n = len(x) under jit): written out item by item, code
    and compile time grew with n (1,000 items: 4,000 lines, 200 s of compiling)."""
    if len(node.generators) != 1 or node.generators[0].is_async:
        return False
    it = node.generators[0].iter
    if isinstance(it, gast.Name):      # [f(row) for row in X]: X's rows, when there are many
        return _rows_known(norm, norm.frame.env.get(it.id)) > COMP_UNROLL
    if not (isinstance(it, gast.Call) and it.args and not it.keywords):
        return _rows_of(norm, it) > COMP_UNROLL
    try:
        func = norm.expr(it.func, "f")
    except TranspileError:
        return False
    if isinstance(func, Static) and func.obj in (zip, enumerate):
        return min(_rows_of(norm, a) for a in it.args) > COMP_UNROLL
    if not (isinstance(func, Static) and func.obj is range):
        return False
    bounds = [norm.expr(a, "n") for a in it.args]
    if not all(isinstance(b, Const) and isinstance(b.value, (int, np.integer)) and
               not isinstance(b.value, bool) for b in bounds) or len(bounds) > 3:
        return False
    return len(range(*[int(b.value) for b in bounds])) > COMP_UNROLL


def _rows_of(norm, node):
    """_rows_known of an expression (its equations, read again by the loop, are dead code)."""
    if isinstance(node, gast.Name):
        return _rows_known(norm, norm.frame.env.get(node.id))
    if isinstance(node, (gast.Subscript, gast.Attribute, gast.Call)):
        try:
            return _rows_known(norm, norm.expr(node, "seq"))
        except TranspileError:
            return 0
    return 0


def _rows_known(norm, value):
    """rows_known, 0 where unknown, and more than COMP_UNROLL for a list of run-time length
    (never written out)."""
    if isinstance(value, RunList):
        return COMP_UNROLL + 1
    return rows_known(norm, value) or 0


def _looped_comp(norm, node):
    """[elt for t in range(...) if cond] as the loop `for t in range(...): if cond:
    _comp.append(elt)` (a list of run-time length in compiled code: runlists.py)."""
    g = node.generators[0]
    frame, saved_env = norm.frame, dict(norm.frame.env)
    hidden = norm.namer.fresh("_comp")
    frame.env[hidden] = Struct("list", [])
    loop = _located(gast.For(target=g.target, iter=g.iter, body=_appends(node, g, hidden),
                             orelse=[], type_comment=None), node)
    try:
        norm.stmt(loop)
        return frame.env[hidden]
    finally:
        _leave_comp(frame, saved_env, hidden, g)


class _DataFilter(Exception):
    """A comprehension's filter depends on array data (read again as appends under ifs)."""


def _filtered_comp(norm, node, base):
    """[elt for t in items if cond] with cond on array data: `if cond: _comp.append(elt)` for
    each item (the list a RunList where the items kept differ by path: runlists.py)."""
    if len(node.generators) != 1 or isinstance(node, gast.DictComp):
        raise norm.error(node, "a filter on array data in a comprehension is supported with one "
                         "`for` clause only", hint="use a for loop appending to a list")
    g = node.generators[0]
    frame, saved_env = norm.frame, dict(norm.frame.env)
    hidden = norm.namer.fresh("_comp")
    frame.env[hidden] = Struct("list", [])
    stmts = [_located(st, node) for st in _appends(node, g, hidden)]
    try:
        for item in static_items(norm, g.iter, node):
            norm.assign(g.target, item, node)
            for st in stmts:
                norm.stmt(st)
        return frame.env[hidden]
    finally:
        _leave_comp(frame, saved_env, hidden, g)


def _appends(node, g, hidden):
    """`hidden.append(elt)`, under `if cond:` when the clause has filters."""
    body = [gast.Expr(value=gast.Call(
        func=gast.Attribute(value=gast.Name(id=hidden, ctx=gast.Load(), annotation=None,
                                            type_comment=None), attr="append", ctx=gast.Load()),
        args=[node.elt], keywords=[]))]
    if not g.ifs:
        return body
    test = g.ifs[0] if len(g.ifs) == 1 else gast.BoolOp(op=gast.And(), values=list(g.ifs))
    return [gast.If(test=test, body=body, orelse=[])]


def _located(stmt, node):
    for sub in gast.walk(stmt):
        if "lineno" in sub._attributes and not hasattr(sub, "lineno"):
            gast.copy_location(sub, node)
    return stmt


def _leave_comp(frame, saved_env, hidden, g):
    """The names the comprehension's target bound go; the list's run-time variables (and
    names bound under its ifs) stay."""
    kept = {k: v for k, v in frame.env.items() if k not in saved_env and k != hidden
            and not _target_name(g.target, k)}
    _restore_env(frame, saved_env)
    frame.env.update(kept)


def _restore_env(frame, saved_env):
    """frame.env back to saved_env, in place: an enclosing loop holds this very dict to read
    the names its body rebinds (loops.py carried_finish); a new dict would hide them."""
    frame.env.clear()
    frame.env.update(saved_env)


def _target_name(target, name):
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(target))


def _list_comp(norm, node, base, pair=False):
    frame = norm.frame
    saved_env = dict(frame.env)
    out = []

    def gen(k):
        if k == len(node.generators):
            if pair:
                out.append((norm.expr(node.key, "key"), norm.expr(node.value, base)))
            else:
                out.append(norm.expr(node.elt, base))
            return
        g = node.generators[k]
        if g.is_async:
            raise norm.error(node, "async comprehensions are not supported")
        items = static_items(norm, g.iter, node)
        for item in items:
            norm.assign(g.target, item, node)
            ok = True
            for cond in g.ifs:
                known, truth = norm.static_truth(norm.expr(cond, "cond"))
                if not known:
                    raise _DataFilter()
                ok = ok and truth
            if ok:
                gen(k + 1)
    try:
        gen(0)
    finally:
        _restore_env(frame, saved_env)
    return Struct("list", out)


def static_items(norm, it, node):
    if isinstance(it, gast.Call) and not (isinstance(it.func, gast.Attribute) and
                                          it.func.attr == "tolist"):
        func = norm.expr(it.func, "f")
        obj = func.obj if isinstance(func, Static) else None
        if obj in (range, np.arange):
            bounds = [norm.expr(a, "n") for a in it.args]
            if any(isinstance(b, Var) for b in bounds):     # x.shape[0]: known with shapes
                raise norm.error(it, "the length of a list comprehension must be known when "
                                 "the code is generated", cls=ShapesNeeded,
                                 hint="write a loop filling an array: y = np.empty(n); "
                                 "for i in range(n): y[i] = ...")
            args = [norm.static_value(b, a, "the length of a list comprehension")
                    for b, a in zip(bounds, it.args)]
            return [Const(i) for i in range(*args)]
        if obj is zip:
            _zip_keywords(norm, it)
            parts = [static_items(norm, a, node) for a in it.args]
            return [Struct("tuple", list(t)) for t in zip(*parts)]
        if obj is enumerate:
            seq, start = enumerate_call(norm, it)
            return [Struct("tuple", [_plus(norm, start, i, it), v])
                    for i, v in enumerate(static_items(norm, seq, node))]
    value = norm.expr(it, "seq")
    if isinstance(value, Struct):
        return iteration_items(value)       # (a dict's keys, as Python iterates it)
    if isinstance(value, Static) and isinstance(value.obj, (tuple, list, range, dict)):
        return [norm.classify(v, None) for v in value.obj]
    if isinstance(value, (Var, Const)):       # an array: its length is known under jit
        items = items_of(norm, value, it, "a list comprehension")
        if items is not None:
            return items
    if isinstance(value, RunList):
        raise norm.error(it, f"a comprehension over the list {value.user!r}, whose length is "
                         "known only when the code runs, is not supported", cls=ShapesNeeded,
                         hint="use a for loop (or sum/any/all of a generator: a loop)")
    raise norm.error(it, "a list comprehension needs a sequence whose length is known when "
                     "the code is generated (a tuple/list, or range(n) with a static n)",
                     cls=ShapesNeeded,
                     construct="[... for ... in <array>]",
                     hint="pass the length as a static int argument, or use a for loop "
                     "writing into an array: y = np.zeros(n); for i in range(n): y[i] = ...")


EXPRESSIONS = {
    "Constant": expr_Constant, "Name": expr_Name, "Attribute": expr_Attribute,
    "BinOp": expr_BinOp, "UnaryOp": expr_UnaryOp, "Compare": expr_Compare,
    "BoolOp": expr_BoolOp, "IfExp": expr_IfExp, "Tuple": expr_Tuple, "List": expr_List,
    "Dict": expr_Dict, "Subscript": expr_Subscript, "GeneratorExp": expr_GeneratorExp,
    "Starred": expr_Starred, "JoinedStr": expr_JoinedStr, "ListComp": expr_ListComp,
    "DictComp": expr_DictComp,
}
