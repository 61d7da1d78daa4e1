"""normalize: gast (user code or a rule template) -> core Python (transpile.ir).

A-normal form: one primitive per statement, every intermediate named after the user's
variable it helps compute (`y_1`, `y_2`, ..., then `y`). Names are resolved by object identity
(np.exp, numpy.exp and `from numpy import exp` are the same primitive). Tuples, lists and dicts
of known structure are tracked statically (`Struct`), so `params['W']` is just a variable.
Calls to the user's own functions are inlined; calls to transformed functions inline their
core form. Conditions known when the code is generated (static arguments, constants) pick a
branch here; data-dependent control flow becomes `If`/`ForRange`/`While` statements.
"""
import builtins
import operator
import sys
import types

import contextvars

import gast
import numpy as np

from transpile import ir, transform_registry
from transpile.errors import NoRuleError, TranspileError, UnsupportedSyntax
from transpile.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile import array_literals
from transpile.parse import Resolver, parse_function
from transpile.primitives import METHODS, by_name, lookup
from transpile.normalize_values import Frame, Static, Struct  # noqa: F401  (normalize.Struct, ...)
from transpile.pytree import TreeDef

# ---------------------------------------------------------------------------------------------
# values the normalizer tracks


def flatten_value(value):
    """Struct/atoms -> (flat atom list, TreeDef)."""
    if isinstance(value, Struct):
        leaves, children = [], []
        for item in value.items:
            l, t = flatten_value(item)
            leaves += l
            children.append(t)
        return leaves, TreeDef(value.kind, tuple(children), value.keys)
    if isinstance(value, Static):
        if value.obj is None:
            return [], TreeDef("none")
        if ir.is_literal(value.obj):
            return [Const(value.obj)], TreeDef("leaf")
        raise TypeError(f"cannot return the Python object {value.obj!r} from a transformed function")
    if isinstance(value, Const) and value.value is None:
        return [], TreeDef("none")
    return [value], TreeDef("leaf")


def unflatten_value(tree, atoms):
    it = iter(atoms)

    def build(t):
        if t.kind == "leaf":
            return next(it)
        if t.kind == "none":
            return Const(None)
        if t.kind == "static":
            return Const(t.keys[0])
        return Struct(t.kind, [build(c) for c in t.children], t.keys)
    return build(tree)


# ---------------------------------------------------------------------------------------------
# naming


class Namer:
    """Collision-safe names derived from the user's."""

    def __init__(self, reserved=()):
        self.taken = set(reserved)

    def reserve(self, names):
        self.taken |= set(names)

    def fresh(self, base):
        base = _identifier(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        return self.numbered(base, start=2)

    def numbered(self, base, start=1):
        base = _identifier(base)
        i = start
        while f"{base}_{i}" in self.taken:
            i += 1
        name = f"{base}_{i}"
        self.taken.add(name)
        return name


def _identifier(text):
    s = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(text))
    if not s or s[0].isdigit():
        s = "v" + s
    import keyword
    return s + "_" if keyword.iskeyword(s) else s


def names_in(node):
    out = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name):
            out.add(n.id)
    return out


# ---------------------------------------------------------------------------------------------
# the builder: emits equations with small algebraic simplifications


_FOLD = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
         "divide": operator.truediv, "power": operator.pow, "negative": operator.neg,
         "positive": operator.pos, "greater": operator.gt, "less": operator.lt,
         "greater_equal": operator.ge, "less_equal": operator.le, "equal": operator.eq,
         "not_equal": operator.ne, "floor_divide": operator.floordiv, "mod": operator.mod,
         "logical_not": operator.not_}


def _is_num(a, v):
    return isinstance(a, Const) and type(a.value) in (int, float) and a.value == v


class Builder:
    on_emit = None   # optional hook: Eqn -> replacement atom or None (set by jit)
    on_note = None   # optional hook: Eqn -> None, told of every equation (the alias model)
    fresh_results = False   # user code: an operation never returns its argument's buffer

    def __init__(self, namer):
        self.namer = namer
        self.body = []
        self.loc = None

    def emit(self, prim, args, base="t", out=None):
        """Append `out = prim(**args)` (simplified where exact) and return the result atom."""
        args = {k: v for k, v in args.items()}
        simple = self._simplify(prim, args)
        if simple is not None:
            return simple
        name = out or self.namer.numbered(base)
        self.body.append(Eqn(name, prim, args, self.loc))
        if self.on_note is not None:
            self.on_note(self.body[-1])
        if self.on_emit is not None:        # jit: shape queries on known shapes fold
            folded = self.on_emit(self.body[-1])
            if folded is not None:
                self.body.pop()
                return folded
        return Var(name)

    def _simplify(self, prim, args):
        simple = self._simplify_any(prim, args)
        if self.fresh_results and isinstance(simple, Var) and any(
                isinstance(a, Var) and a.name == simple.name for a in args.values()):
            return None     # user code: `y = x * 1.0` is a new array, not another name for x
        return simple

    def _simplify_any(self, prim, args):
        vals = list(args.values())
        name = prim.name
        if name in _FOLD and vals and all(isinstance(a, Const) and _foldable(a.value) for a in vals):
            try:
                result = _FOLD[name](*[a.value for a in vals])
            except Exception:
                return None
            if ir.is_literal(result):
                return Const(result)
        x, y = args.get("x"), args.get("y")
        if name == "multiply":
            if _is_num(y, 1) and isinstance(x, Var):
                return x
            if _is_num(x, 1) and isinstance(y, Var):
                return y
            if _is_num(y, -1) and isinstance(x, Var):
                return self.emit(by_name("negative"), {"x": x}, base=x.name)
            if _is_num(x, -1) and isinstance(y, Var):
                return self.emit(by_name("negative"), {"x": y}, base=y.name)
        if name == "add":
            if _is_num(y, 0) and isinstance(x, Var):
                return x
            if _is_num(x, 0) and isinstance(y, Var):
                return y
        if name == "subtract" and _is_num(y, 0) and isinstance(x, Var):
            return x
        if name == "divide" and _is_num(y, 1) and isinstance(x, Var):
            return x
        if name == "power" and _is_num(y, 1) and isinstance(x, Var):
            return x
        if name == "negative" and isinstance(x, Var) and self.body:
            last = self.body[-1]
            if not isinstance(last, Eqn):
                return None
            if last.out == x.name and last.prim.name == "negative" and isinstance(last.args["x"], Var):
                return last.args["x"]
        return None


def _foldable(v):
    return isinstance(v, (bool, int, float, str)) or v is None


# ---------------------------------------------------------------------------------------------
# frames: one per function being read (the user's function, an inlined callee, a template);
# the Frame class is in normalize_values.py


_BINOPS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "divide",
           gast.Pow: "power", gast.MatMult: "matmul", gast.FloorDiv: "floor_divide",
           gast.Mod: "mod"}
_CMPOPS = {gast.Gt: "greater", gast.GtE: "greater_equal", gast.Lt: "less",
           gast.LtE: "less_equal", gast.Eq: "equal", gast.NotEq: "not_equal"}
_UNARY = {gast.USub: "negative", gast.UAdd: "positive", gast.Not: "logical_not"}
_ATTRIBUTES = {"T": "transpose", "shape": "attr_shape", "ndim": "attr_ndim", "size": "attr_size",
               "dtype": "attr_dtype"}
_UNSUPPORTED_STMTS = {
    gast.Try: ("try/except", "move error handling outside the transformed function"),
    gast.With: ("with", "move the context manager outside the transformed function"),
    gast.Global: ("global", "pass the value in as an argument and return the new value"),
    gast.Nonlocal: ("nonlocal", "pass the value in as an argument and return the new value"),
    gast.ClassDef: ("class definition", "define the class outside the function"),
    gast.Delete: ("del", "just stop using the variable"),
    gast.Raise: ("raise", "validate inputs before calling the transformed function"),
    gast.Import: ("import", "import at module level"),
    gast.ImportFrom: ("import", "import at module level"),
    gast.AsyncFunctionDef: ("async def", "use a plain function"),
}


from transpile.normalize_control import ControlFlowMixin, LocalFunction  # noqa: E402
from transpile.callables import is_data  # noqa: E402
from transpile.normalize_returns import NestedLoopReturn, fold_early_returns  # noqa: E402
from transpile.normalize_pytree import call_tree_util, construct_node, node_attribute  # noqa: E402
from transpile.normalize_builtins import call_builtin, effect_statement  # noqa: E402
from transpile.normalize_callables import call_bound, instance_attribute  # noqa: E402
from transpile import normalize_builtins, normalize_callables, normalize_pytree  # noqa: E402
for _m in (normalize_builtins, normalize_callables, normalize_pytree):
    _m.use_normalizer_names(sys.modules[__name__])
from transpile.aliasing import (MemoryModel, Stale, param_entry, stale_error,  # noqa: E402
                                write_back_arguments)


class Normalizer(ControlFlowMixin):
    """Reads functions and templates into one Builder."""

    MAX_INLINE_DEPTH = 32

    def __init__(self, namer, builder=None):
        self.namer = namer
        self.b = builder or Builder(namer)
        self.frames = []
        self.free = []          # [(param name, where, description)]
        self.statics = {}       # name -> object
        self.deps = []          # [(where, value)] read when generating; checked at call time
        self.source_lines = {}
        self.inline_stack = []
        self.mem = MemoryModel(self)
        if self.b.on_note is None:
            self.b.on_note = self.mem.note

    # -- entry points --------------------------------------------------------------------------

    @property
    def frame(self):
        return self.frames[-1]

    def error(self, node, message, construct=None, hint=None, cls=UnsupportedSyntax):
        frame = self.frames[-1] if self.frames else None
        filename, lineno = (frame.loc(node) if frame and node is not None else (None, None)) or (None, None)
        if construct is None and node is not None:
            try:
                construct = gast.unparse(node).strip().splitlines()[0] if hasattr(gast, "unparse") \
                    else _unparse(node)
            except Exception:
                construct = type(node).__name__
        return cls(message, filename=filename, lineno=lineno, construct=construct, hint=hint)

    def run_body(self, stmts):
        try:
            stmts = fold_early_returns(stmts)
        except NestedLoopReturn as e:
            raise self.error(e.node, "return inside a loop nested in another loop is not "
                             "supported", construct="return (inside nested loops)",
                             hint="store the value, break, and return after the loops") from None
        for st in stmts:
            if self.frame.returned is not None:
                break
            self.set_loc(st)
            self.stmt(st)

    def set_loc(self, node):
        loc = self.frame.loc(node)
        if loc is not None and loc[1] is not None:
            self.b.loc = loc
            if loc not in self.source_lines and self.frame.parsed is not None:
                self.source_lines[loc] = self.frame.parsed.source_line(loc[1]).strip()

    # -- statements ----------------------------------------------------------------------------

    def stmt(self, node):
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            label, hint = _UNSUPPORTED_STMTS.get(type(node), (type(node).__name__, None))
            raise self.error(node, f"unsupported statement: {label}", hint=hint)
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, gast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        if isinstance(node.value, gast.Call) and self.writing_call(node.value):
            self.expr(node.value, "t")      # a function of the user's that writes into arrays
            return
        if effect_statement(self, node):      # print(...), breakpoint()
            return
        if isinstance(node.value, (gast.Yield, gast.YieldFrom)):
            raise self.error(node, "unsupported: generator (yield)",
                             hint="return the values instead (a list or tuple)")
        raise self.error(node, "an expression statement has no effect in a transformed function "
                         "(side effects such as print or in-place methods are not kept)",
                         hint="assign the result to a variable, or move the call outside")

    def writing_call(self, call):
        """Is this call (an expression statement) to a user function or local def?"""
        try:
            func = self.expr(call.func, "f") if isinstance(call.func, gast.Name) else None
        except TranspileError:
            return False
        return isinstance(func, LocalFunction) or (
            isinstance(func, Static) and isinstance(func.obj, types.FunctionType)
            and lookup(func.obj) is None)

    def stmt_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = ...) is not supported",
                             hint="write one assignment per line")
        target = node.targets[0]
        base = _target_base(target)
        value = self.expr(node.value, base)
        self.assign(target, value, node)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            return
        value = self.expr(node.value, _target_base(node.target))
        self.assign(node.target, value, node)

    def stmt_AugAssign(self, node):
        binop = gast.BinOp(left=_as_load(node.target), op=node.op, right=node.value)
        gast.copy_location(binop, node)
        if isinstance(node.target, gast.Name):
            current = self.expr(node.target, node.target.id)
        value = self.expr(binop, _target_base(node.target))
        if isinstance(node.target, gast.Name) and self.mem.in_place(current) \
                and isinstance(value, (Var, Const)):
            # an array: NumPy writes in place (every alias sees it; the dtype is kept)
            self.mem.write(current, None, value, node, node.target.id)
            return
        self.assign(node.target, value, node)

    def stmt_Return(self, node):
        value = Const(None) if node.value is None else self.expr(node.value, "out")
        if self.frame.owned and isinstance(value, Var) and self.b.body \
                and getattr(self.b.body[-1], "out", None) == value.name and value.name.startswith("out_"):
            self.rename_last(self.namer.fresh("out"))
            value = Var(self.b.body[-1].out)
        self.frame.returned = value

    def stmt_If(self, node):
        cond = self.expr(node.test, "cond")
        known, truth = self.static_truth(cond)
        if known:
            self.run_body(node.body if truth else node.orelse)
            return
        self.dynamic_if(node, cond)

    def stmt_Assert(self, node):
        raise self.error(node, "assert is not supported inside a transformed function",
                         hint="check inputs before calling the transformed function")

    def assign(self, target, value, node):
        if isinstance(target, gast.Name):
            self.bind_name(target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            n = len(target.elts)
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise self.error(node, "starred assignment targets are not supported")
            if isinstance(value, Struct):
                if len(value) != n:
                    raise self.error(node, f"cannot unpack {len(value)} values into {n} names")
                parts = value.items
            elif isinstance(value, Static) and isinstance(value.obj, (tuple, list)):
                parts = [self.classify(v, None) for v in value.obj]
            elif isinstance(value, (Var, Const)):
                parts = []
                for i, elt in enumerate(target.elts):
                    idx = IndexArg((Const(i),))
                    parts.append(self.b.emit(by_name("getitem"), {"x": value, "index": idx},
                                             base=_target_base(elt)))
            else:
                raise self.error(node, "cannot unpack this value")
            for elt, part in zip(target.elts, parts):
                self.assign(elt, part, node)
        elif isinstance(target, gast.Subscript):
            self.assign_subscript(target, value, node)
        else:
            raise self.error(node, f"unsupported assignment target: {type(target).__name__}")

    def bind_name(self, name, value):
        frame = self.frame
        if isinstance(value, Var) and self.b.body and getattr(self.b.body[-1], "out", None) == value.name \
                and _is_temp(value.name, name):
            # Give the last temporary the user's name: `y = np.exp(x)`, not `y_1 = ...; y = y_1`.
            core = self.core_name(name)
            if self.mem.referenced(value.name) or self.mem.referenced(core, (frame.env, name)) \
                    or self.aliased(frame.env, core, name):
                frame.env[name] = value    # another name still holds the old value of `core`
                return
            self.rename_last(core)
            frame.env[name] = Var(core)
            return
        frame.env[name] = value

    def core_name(self, name):
        frame = self.frame
        if name in frame.core_names:
            return frame.core_names[name]
        core = name if frame.owned and name.isidentifier() else self.namer.fresh(name)
        if frame.owned:
            self.namer.taken.add(name)
        frame.core_names[name] = core
        return core

    def rename_last(self, new):
        last = self.b.body[-1]
        self.namer.taken.discard(last.out)
        self.mem.renamed(last.out, new)
        last.out = new

    # -- expressions ---------------------------------------------------------------------------

    def expr(self, node, base="t"):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported expression: {type(node).__name__}")
        return method(node, base)

    def atom(self, node, base="t"):
        return self.to_arg(self.expr(node, base), node)

    def expr_Constant(self, node, base):
        return Const(node.value)

    def expr_Name(self, node, base):
        name = node.id
        for frame in [self.frame]:
            if name in frame.env:
                value = frame.env[name]
                if isinstance(value, Stale):
                    raise stale_error(self, node, value)
                return value
        resolver = self.frame.resolver
        if resolver is None:
            raise self.error(node, f"unknown name {name!r} in a rule template")
        try:
            obj, where = resolver.lookup(name)
        except NameError:
            raise self.error(node, f"name {name!r} is not defined", cls=TranspileError) from None
        return self.classify(obj, where, name)

    def classify(self, obj, where, name="value"):
        """Decide how a free variable's value enters generated code."""
        if array_literals.is_concatenator(obj):
            return Static(obj)
        if isinstance(obj, (types.ModuleType, type)) or callable(obj):
            if where is not None and where[0] != "builtin":
                self.deps.append((where, obj))
            return Static(obj)
        if ir.is_literal(obj) and not isinstance(obj, np.generic):
            if where is not None and where[0] != "builtin":
                self.deps.append((where, obj))
            return Const(obj)
        if isinstance(obj, (tuple, list, dict)) and where is None:
            return Static(obj)
        if not is_data(obj) and obj is not None:       # a model object, a config instance...
            return Static(obj)
        # Data (arrays, NumPy scalars, containers of arrays): a parameter read at every call.
        if where is None:
            pname = self.namer.fresh(name)
            self.statics[pname] = obj
            self.mem.outside.add(pname)
            return Var(pname)
        for pname, w, _ in self.free:
            if _same_where(w, where):
                return Var(pname)
        pname = self.namer.fresh(name)
        self.free.append((pname, where, name))
        self.mem.outside.add(pname)
        return Var(pname)

    def expr_Attribute(self, node, base):
        value = self.expr(node.value, base)
        attr = node.attr
        if isinstance(value, Static):
            found = instance_attribute(self, value.obj, attr, node)
            if found is not None:
                return found
            try:
                obj = getattr(value.obj, attr)
            except AttributeError:
                raise self.error(node, f"{value.obj!r} has no attribute {attr!r}",
                                 cls=TranspileError) from None
            return self.classify(obj, None, attr) if not isinstance(obj, (np.ndarray,)) \
                else self.classify(obj, None, attr)
        if isinstance(value, (Var, Const)):
            if attr in _ATTRIBUTES:
                return self.b.emit(by_name(_ATTRIBUTES[attr]), {"x": value}, base=base)
            if attr == "at":
                raise self.error(node, "x.at[...] (JAX's functional update) is not supported",
                                 hint="write NumPy: y = x.copy(); y[i] = v  (or np.where)")
            if attr in METHODS:
                return _BoundMethod(value, attr)
        if isinstance(value, Struct) and value.kind == "node":     # NamedTuple, dataclass, ...
            return node_attribute(self, value, attr, node)
        raise self.error(node, f"unsupported attribute access .{attr}")

    def expr_BinOp(self, node, base):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        left = self.expr(node.left, base)
        right = self.expr(node.right, base)
        if isinstance(left, Struct) or isinstance(right, Struct):
            if op == "add" and isinstance(left, Struct) and isinstance(right, Struct):
                return Struct(left.kind, left.items + right.items)
            raise self.error(node, "arithmetic on a tuple/list/dict is not supported",
                             hint="use np.array(...) or operate on the elements")
        return self.b.emit(by_name(op), {"x": self.to_arg(left, node), "y": self.to_arg(right, node)},
                           base=base)

    def expr_UnaryOp(self, node, base):
        prim = by_name(_UNARY[type(node.op)]) if type(node.op) in _UNARY else None
        if prim is None:
            raise self.error(node, f"unsupported operator {type(node.op).__name__}")
        x = self.expr(node.operand, base)
        if prim.name == "logical_not":
            known, truth = self.static_truth(x)
            if known:
                return Const(not truth)
        return self.b.emit(prim, {"x": self.to_arg(x, node)}, base=base)

    def expr_Compare(self, node, base):
        left = self.expr(node.left, base)
        result = None
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp, base)
            if isinstance(op, (gast.Is, gast.IsNot, gast.In, gast.NotIn)):
                value = self.static_compare(op, left, right, node)
            else:
                name = _CMPOPS[type(op)]
                value = self.b.emit(by_name(name), {"x": self.to_arg(left, node),
                                                    "y": self.to_arg(right, node)}, base=base)
            result = value if result is None else self.b.emit(
                by_name("logical_and"), {"x": result, "y": value}, base=base)
            left = right
        return result

    def static_compare(self, op, left, right, node):
        def py(v):
            if isinstance(v, Const):
                return v.value
            if isinstance(v, Static):
                return v.obj
            if isinstance(v, Struct) and isinstance(op, (gast.In, gast.NotIn)) and v.kind == "dict":
                return v.keys
            raise self.error(node, "`is` / `in` need values known when the code is generated",
                             hint="compare arrays with == or np.isin")
        a, b = py(left), py(right)
        result = {gast.Is: operator.is_, gast.IsNot: operator.is_not,
                  gast.In: lambda x, y: x in y, gast.NotIn: lambda x, y: x not in y}[type(op)](a, b)
        return Const(bool(result))

    def expr_BoolOp(self, node, base):
        is_and = isinstance(node.op, gast.And)
        values = []
        for v in node.values:
            value = self.expr(v, base)
            known, truth = self.static_truth(value)
            if known:
                if is_and and not truth:
                    return value
                if not is_and and truth:
                    return value
                continue
            values.append(value)
        if not values:
            return Const(is_and)
        result = values[0]
        for v in values[1:]:
            result = self.b.emit(by_name("logical_and" if is_and else "logical_or"),
                                 {"x": self.to_arg(result, node), "y": self.to_arg(v, node)}, base=base)
        return result

    def expr_IfExp(self, node, base):
        cond = self.expr(node.test, base)
        known, truth = self.static_truth(cond)
        if known:
            return self.expr(node.body if truth else node.orelse, base)
        return self.dynamic_ifexp(node, cond, base)

    def expr_Tuple(self, node, base):
        return Struct("tuple", self.elements(node.elts, base))

    def expr_List(self, node, base):
        return Struct("list", self.elements(node.elts, base))

    def elements(self, elts, base):
        out = []
        for e in elts:
            if isinstance(e, gast.Starred):
                v = self.expr(e.value, base)
                if not isinstance(v, Struct):
                    raise self.error(e, "*expansion needs a tuple/list of known length")
                out += v.items
            else:
                out.append(self.expr(e, base))
        return out

    def expr_Dict(self, node, base):
        keys, items = [], []
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.error(node, "**expansion in a dict literal is not supported")
            key = self.expr(k, base)
            if not isinstance(key, Const):
                raise self.error(k, "dict keys must be constants")
            keys.append(key.value)
            items.append(self.expr(v, f"{base}_{key.value}"))
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        return Struct("dict", [items[i] for i in order], [keys[i] for i in order])

    def expr_Subscript(self, node, base):
        value = self.expr(node.value, base)
        if isinstance(value, Static) and array_literals.is_concatenator(value.obj):
            return array_literals.index_concat(self, value.obj, node, base)
        if isinstance(value, (Struct, Static)):
            key = self.expr(node.slice, base) if not isinstance(node.slice, gast.Slice) else None
            if isinstance(node.slice, gast.Slice):
                lo, hi, st = [None if e is None else self.static_value(self.expr(e, base), e)
                              for e in (node.slice.lower, node.slice.upper, node.slice.step)]
                if isinstance(value, Struct):
                    return Struct(value.kind, value.items[slice(lo, hi, st)])
                return self.classify(value.obj[slice(lo, hi, st)], None)
            k = self.static_value(key, node.slice, "an index into a tuple/list/dict")
            try:
                if isinstance(value, Struct):
                    return value.get(k)
                return self.classify(value.obj[k], None)
            except (KeyError, IndexError):
                raise self.error(node, f"index {k!r} not found", cls=TranspileError) from None
        x = self.to_arg(value, node)
        index = self.index(node.slice, base)
        if any(isinstance(i, Const) and isinstance(i.value, str) for i in index.items):
            raise self.error(node, "indexing with a string key needs a dict whose structure is "
                             "known, but this value is an array leaf", cls=TranspileError,
                             hint="call the function with the dict (or pass example arguments "
                                  "to show / `transpile show --args ...`)")
        return self.b.emit(by_name("getitem"), {"x": x, "index": index}, base=base)

    def index(self, node, base):
        elts = node.elts if isinstance(node, gast.Tuple) else [node]
        items = []
        for e in elts:
            if isinstance(e, gast.Slice):
                items.append(SliceArg(*[None if p is None else self.atom(p, base)
                                        for p in (e.lower, e.upper, e.step)]))
            elif isinstance(e, gast.Constant) and e.value is None:
                items.append(None)
            elif isinstance(e, gast.Constant) and e.value is Ellipsis:
                items.append(Ellipsis)
            else:
                v = self.expr(e, base)
                if isinstance(v, Const) and v.value is None:
                    items.append(None)
                elif isinstance(v, Static) and v.obj is None:
                    items.append(None)
                elif isinstance(v, IndexArg):
                    items += list(v.items)
                else:
                    items.append(self.to_arg(v, e))
        return IndexArg(tuple(items))

    def expr_GeneratorExp(self, node, base):
        return self.expr_ListComp(node, base)     # consumed at once: sum(x * x for x in xs)

    def expr_Starred(self, node, base):
        raise self.error(node, "*expansion is only supported in calls and literals")

    def expr_JoinedStr(self, node, base):
        raise self.error(node, "f-strings are not supported in transformed functions")

    # -- calls ---------------------------------------------------------------------------------

    def expr_Call(self, node, base):
        func = self.expr(node.func, base)
        args = []
        for a in node.args:
            if isinstance(a, gast.Starred):
                v = self.expr(a.value, base)
                if isinstance(v, Struct):
                    args += v.items
                elif isinstance(v, Static) and isinstance(v.obj, (tuple, list)):
                    args += [self.classify(x, None) for x in v.obj]
                else:
                    raise self.error(a, "*args needs a tuple/list of known length")
            else:
                args.append(self.expr(a, base))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                v = self.expr(k.value, base)
                if not isinstance(v, Struct) or v.kind != "dict":
                    raise self.error(node, "**kwargs needs a dict of known keys")
                kwargs.update(zip(v.keys, v.items))
            else:
                kwargs[k.arg] = self.expr(k.value, base)
        return self.call(func, args, kwargs, node, base)

    def call(self, func, args, kwargs, node, base):
        if isinstance(func, LocalFunction):
            return self.call_local(func, args, kwargs, node)
        if isinstance(func, _BoundMethod):
            prim, receiver = METHODS[func.name]
            if func.name in ("reshape", "transpose") and len(args) > 1:
                args = [Struct("tuple", args)]
            if func.name == "transpose" and not args and not kwargs:
                pass
            result = self.apply(prim, [func.receiver] + args, kwargs, node, base)
            if func.name == "flatten":
                self.mem.mark_fresh(result)     # a copy, unlike ravel
            return result
        bound = call_bound(self, func, args, kwargs, node, base)
        if bound is not None:              # functools.partial, bound method, classmethod
            return bound
        if not isinstance(func, Static):
            raise self.error(node, "calling a value that is not a known function",
                             hint="functions passed in as arguments must be static arguments")
        obj = func.obj
        expanded = call_tree_util(self, obj, args, kwargs, node, base)
        if expanded is None:
            expanded = construct_node(self, obj, args, kwargs, node)
        if expanded is None:
            expanded = call_builtin(self, obj, args, kwargs, node, base)
        if expanded is not None:         # tree_map(...), Params(w, b), sum(list_of_arrays)...
            return expanded
        if getattr(obj, "__transpile_static__", False):
            # A transform constructor (grad(f), vmap(f, ...)): evaluated while generating code.
            try:
                values = [self.static_value(a, node, "an argument of a transform") for a in args]
                kw = {k: self.static_value(v, node, "an argument of a transform")
                      for k, v in kwargs.items()}
            except TranspileError:
                raise
            return Static(obj(*values, **kw))
        prim = lookup(obj)
        if prim is not None:
            result = self.apply(prim, args, kwargs, node, base)
            if obj is np.array:
                self.mem.mark_fresh(result)     # np.array copies; np.asarray does not
            return result
        if isinstance(obj, type) and issubclass(obj, np.generic):
            if len(args) != 1:
                raise self.error(node, f"{obj.__name__}(...) takes one argument")
            return self.apply(by_name("astype"), [args[0]], {"dtype": Const(obj)}, node, base)
        if _is_transform_factory(obj) and all(isinstance(a, (Static, Const)) for a in
                                              list(args) + list(kwargs.values())):
            # grad(f) written inside a transformed function: build the transform now
            vals = [a.obj if isinstance(a, Static) else a.value for a in args]
            kw = {k: v.obj if isinstance(v, Static) else v.value for k, v in kwargs.items()}
            return Static(obj(*vals, **kw))
        if hasattr(obj, "__transpile_core__"):
            return self.inline_transformed(obj, args, kwargs, node, base)
        if isinstance(obj, types.FunctionType):
            return self.inline_function(obj, args, kwargs, node)
        if isinstance(obj, (types.BuiltinFunctionType, np.ufunc, types.MethodType, type)) \
                or callable(obj):
            name = getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))
            module = getattr(obj, "__module__", None)
            full = f"{module}.{name}" if module and module != "builtins" else name
            raise self.error(node, f"no rule for {full}: it has no Python source and no "
                             "registered derivative", cls=NoRuleError,
                             hint="register one with transpile.defrule(...) or compute it "
                             "outside the transformed function")
        raise self.error(node, f"{obj!r} is not callable", cls=TranspileError)

    def apply(self, prim, args, kwargs, node, base):
        try:
            bound = prim.bind(args, kwargs)
        except TypeError as e:
            raise self.error(node, str(e), cls=TranspileError) from None
        if prim.name == "array" and "dtype" in bound and isinstance(bound["x"], Struct):
            stacked = array_literals.stack_struct(self, bound["x"], node, base)
            if isinstance(stacked, Var):
                return self.apply(by_name("astype"), [stacked, bound["dtype"]], {}, node, base)
        bound = array_literals.array_arguments(self, prim, bound, node, base)
        if getattr(prim, "multi", None) is not None:
            return array_literals.multi_output(self, prim, bound, node, base)
        if prim.name in ("len",) and isinstance(bound["x"], Struct):
            return Const(len(bound["x"]))
        if prim.name in ("float", "int", "bool") and isinstance(bound["x"], Const):
            return Const(prim.impl(bound["x"].value))
        out = {}
        for name, value in bound.items():
            p = prim.param(name)
            if p.kind == "var":
                out[name] = TupleArg(tuple(self.to_arg(v, node) for v in value))
            else:
                out[name] = self.to_arg(value, node)
        return self.b.emit(prim, out, base=base)

    def to_arg(self, value, node):
        """A normalizer value -> something an Eqn can hold."""
        if isinstance(value, (Var, Const, IndexArg, TupleArg)):
            return value
        if isinstance(value, Struct):
            if value.kind == "dict":
                raise self.error(node, "a dict cannot be passed to a NumPy function")
            items = tuple(self.to_arg(v, node) for v in value.items)
            if all(isinstance(i, Const) for i in items):
                return Const(tuple(i.value for i in items))
            return TupleArg(items, value.kind)
        if isinstance(value, Static):
            obj = value.obj
            if ir.is_literal(obj):
                return Const(obj)
            if isinstance(obj, (tuple, list)) and all(ir.is_literal(o) for o in obj):
                return Const(tuple(obj))
            if isinstance(obj, str):
                return Const(obj)
            for name, o in self.statics.items():
                if o is obj:
                    return Var(name)
            name = self.namer.fresh(getattr(obj, "__name__", "static"))
            self.statics[name] = obj
            return Var(name)
        if isinstance(value, _BoundMethod):
            raise self.error(node, f"method .{value.name} must be called")
        raise self.error(node, f"cannot use {value!r} here")

    def static_value(self, value, node, what="this value"):
        if isinstance(value, Const):
            return value.value
        if isinstance(value, Static):
            return value.obj
        raise self.error(node, f"{what} must be known when the code is generated (a constant "
                         "or static argument)", cls=TranspileError)

    def static_truth(self, value):
        if isinstance(value, Const):
            return True, bool(value.value)
        if isinstance(value, Static):
            return True, bool(value.obj)
        if isinstance(value, Struct):
            return True, bool(value.items)
        return False, None

    # -- inlining ------------------------------------------------------------------------------

    def inline_function(self, fn, args, kwargs, node):
        if fn.__code__ in self.inline_stack:
            raise self.error(node, f"recursive call to {fn.__name__} is not supported",
                             construct=f"{fn.__name__}(...)",
                             hint="rewrite the recursion as a loop")
        if len(self.inline_stack) > self.MAX_INLINE_DEPTH:
            raise self.error(node, "calls nested too deeply")
        parsed = parse_function(fn)
        frame = Frame(parsed, Resolver(fn))
        try:
            self.bind_params(frame, parsed, fn, args, kwargs)
        except TypeError as e:
            raise self.error(node, f"{fn.__name__}(): {e}", cls=TranspileError) from None
        self.frames.append(frame)
        self.inline_stack.append(fn.__code__)
        saved_loc = self.b.loc
        try:
            if isinstance(parsed.node, gast.Lambda):
                self.set_loc(parsed.node)
                result = self.expr(parsed.node.body, fn.__name__.strip("<>"))
            else:
                self.run_body(parsed.node.body)
                result = frame.returned if frame.returned is not None else Const(None)
        finally:
            self.frames.pop()
            self.inline_stack.pop()
            self.b.loc = saved_loc
        return result

    def bind_params(self, frame, parsed, fn, args, kwargs):
        a = parsed.node.args
        if a.vararg is not None or a.kwarg is not None:
            raise TypeError("*args/**kwargs parameters are not supported")
        names = [p.id for p in a.posonlyargs + a.args]
        kwonly = [p.id for p in a.kwonlyargs]
        defaults = dict(zip(names[len(names) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
        defaults.update(fn.__kwdefaults__ or {})
        if len(args) > len(names):
            raise TypeError(f"takes {len(names)} positional arguments but {len(args)} were given")
        values = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names + kwonly:
                raise TypeError(f"unexpected keyword argument {k!r}")
            if k in values:
                raise TypeError(f"multiple values for argument {k!r}")
            values[k] = v
        for n in names + kwonly:
            if n not in values:
                if n not in defaults:
                    raise TypeError(f"missing argument {n!r}")
                values[n] = self.classify(defaults[n], None, n)
            frame.env[n] = values[n]

    def inline_transformed(self, obj, args, kwargs, node, base):
        if kwargs:
            raise self.error(node, "keyword arguments to a transformed function called inside "
                             "another transform are not supported")
        trees, atoms = [], []
        for a in args:
            leaves, tree = flatten_value(a)
            trees.append(tree)
            atoms += [self.to_arg(l, node) for l in leaves]
        core = obj.__transpile_core__(tuple(trees))
        outs = self.inline_core(core, atoms)
        return unflatten_value(core.out_tree, outs)

    def inline_core(self, core, atoms):
        """Copy a CoreFn's body into the builder with fresh names; returns its output atoms."""
        from transpile.transforms.rename import rename_body
        mapping = {}
        n_args = len(core.params) - len(core.free)
        for p, a in zip(core.params[:n_args], atoms):
            mapping[p] = a
        for (pname, where, desc) in core.free:
            mapping[pname] = self.classify(read_where(where), where, desc)
        for sname, obj in core.statics.items():
            mapping[sname] = self.to_arg(Static(obj), None)
        body = rename_body(core.body, mapping, self.namer)
        self.b.body += body
        self.source_lines.update(core.source_lines)

        def sub(a):
            return mapping.get(a.name, a) if isinstance(a, Var) else a
        return [sub(o) for o in core.outs]


class _BoundMethod:
    def __init__(self, receiver, name):
        self.receiver, self.name = receiver, name


def _is_transform_factory(obj):
    """transpile.grad / value_and_grad and the Transform classes (applied to static values);
    api.py registers them in transform_registry (the normalizer does not import the API)."""
    return transform_registry.is_transform_factory(obj)


def read_where(where):
    from transpile.parse import read_binding
    return read_binding(where)


def _same_where(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "closure":
        return a[1] is b[1]
    if a[0] == "global":
        return a[1] is b[1] and a[2] == b[2]
    if a[0] == "attr":
        return a[1] is b[1] and a[2] == b[2]
    return a == b


def _target_base(target):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Subscript):
        return _target_base(target.value)
    if isinstance(target, gast.Attribute):
        return target.attr
    return "t"


def _is_temp(core_name, user_name):
    return True


def _as_load(target):
    if isinstance(target, gast.Name):
        return gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None)
    if isinstance(target, gast.Subscript):
        return gast.Subscript(value=_as_load(target.value), slice=target.slice, ctx=gast.Load())
    return target


def _unparse(node):
    import ast
    return ast.unparse(gast.gast_to_ast(node))


# ---------------------------------------------------------------------------------------------
# building a CoreFn for a user function


SPECIALIZE = contextvars.ContextVar("transpile_specialize", default=None)


def build_core(fn, in_trees, static_args=None, name_suffix=""):
    """Normalize `fn` for arguments whose pytree structures are `in_trees` (one per parameter
    after binding). `static_args` maps parameter names to values fixed at generation time."""
    static_args = static_args or {}
    parsed = parse_function(fn)
    node = parsed.node
    namer = Namer(names_in(node) | {"np", "rt"})
    norm = Normalizer(namer)
    norm.b.fresh_results = True
    frame = Frame(parsed, Resolver(fn), owned=True)
    a = node.args
    if a.vararg is not None or a.kwarg is not None:
        raise norm.error(node, "*args/**kwargs parameters are not supported in transformed functions",
                         construct=f"def {fn.__name__}(...)", hint="name each parameter")
    pnames = [p.id for p in a.posonlyargs + a.args + a.kwonlyargs]
    params = []
    for pname, tree in zip(pnames, in_trees):
        if pname in static_args:
            frame.env[pname] = norm.classify(static_args[pname], None, pname) \
                if not ir.is_literal(static_args[pname]) else Const(static_args[pname])
            continue
        leaves = _leaf_names(pname, tree, namer, pname)
        params += leaves
        frame.env[pname] = unflatten_value(tree, [Var(n) for n in leaves])
        frame.core_names[pname] = pname
        for leaf in leaves:     # the caller's buffers: see transpile/aliasing.py
            frame.env[param_entry(leaf)] = Var(leaf)
    hook = SPECIALIZE.get()
    if hook is not None:      # jit: the outermost function's parameters have known shapes
        SPECIALIZE.set(None)
        hook(in_trees, params, norm.b)
    norm.frames.append(frame)
    if isinstance(node, gast.Lambda):
        norm.set_loc(node)
        result = norm.expr(node.body, "out")
    else:
        norm.run_body(node.body)
        result = frame.returned if frame.returned is not None else Const(None)
    try:
        outs, out_tree = flatten_value(result)
    except TypeError as e:
        raise norm.error(node, str(e), cls=TranspileError) from None
    outs = [norm.to_arg(o, node) for o in outs]
    write_back_arguments(norm, frame, params)
    core = ir.CoreFn(
        name=_identifier(parsed.name) + name_suffix,
        params=params + [p for p, _, _ in norm.free],
        body=norm.b.body,
        outs=outs,
        out_tree=out_tree,
        free=list(norm.free),
        statics=dict(norm.statics),
        filename=parsed.filename,
        source_lines=norm.source_lines,
    )
    core.deps = norm.deps
    core.param_trees = in_trees
    return core


def _leaf_names(pname, tree, namer, prefix):
    if tree.kind in ("static", "none"):
        return []
    if tree.kind == "leaf":
        return [namer.fresh(prefix) if prefix != pname else _take(namer, pname)]
    names = []
    for i, child in enumerate(tree.children):
        key = tree.keys[i] if tree.kind == "dict" else i
        names += _leaf_names(pname, child, namer, f"{prefix}_{key}")
    return names


def _take(namer, name):
    namer.taken.add(name)
    return name
