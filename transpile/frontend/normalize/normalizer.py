"""normalize: gast (user code or a rule template) -> core Python (transpile.core.ir).

A-normal form: one primitive per statement, every intermediate named after the user's
variable it helps compute (`y_1`, `y_2`, ..., then `y`). Names are resolved by object identity
(np.exp, numpy.exp and `from numpy import exp` are the same primitive). Tuples, lists and dicts
of known structure are tracked statically (`Struct`), so `params['W']` is just a variable.
Calls to the user's own functions are inlined; calls to transformed functions inline their
core form. Conditions known when the code is generated (static arguments, constants) pick a
branch here; data-dependent control flow becomes `If`/`ForRange`/`While` statements.

This module holds the `Normalizer` (its state and the methods its parts share) and
`build_core`, the entry point for a user function. The parts, each a module of plain
functions of the normalizer that does not import this one:

  frontend/normalize/statements.py   assignments, expression statements, return, if
  frontend/normalize/expressions.py  names, attributes, operators, literals, subscripts, comprehensions
  frontend/normalize/calls.py        calls (what is called, and how), inlining, nested defs, lambdas
  frontend/normalize/branches.py     `if` / `a if c else b` on array data
  frontend/normalize/loops.py        for / while loops, break / continue
  frontend/normalize/bindings.py     what branches and loops share (join names, copies)
  frontend/normalize/builder.py      Namer and Builder (where the equations go)
  frontend/normalize/values.py       Struct, Static, Frame, ... (the values the normalizer tracks)
  frontend/normalize/builtins.py, frontend/normalize/callables.py, frontend/normalize/pytree.py, frontend/normalize/returns.py,
  frontend/normalize/array_literals.py, frontend/normalize/aliasing.py
"""
import ast
import re
import sys
import types


import gast
import numpy as np

from transpile.core import ir
from transpile.core.codegen import GENERATED_NAMES
from transpile.errors import ShapesNeeded, TranspileError, UnsupportedSyntax
from transpile.core.ir import Const, IndexArg, TupleArg, Var
from transpile.frontend.normalize import (array_literals, calls, expressions, loops, runlists,
                                          statements)
from transpile.frontend.parse import (Resolver, container_structure, parse_function,
                                      unrolled_container)
from transpile.primitives import by_name
from transpile.primitives.numpy.nondiff import bool_, float_, int_, len_
from transpile.primitives.numpy.structure import array
from transpile.frontend.normalize.values import (  # noqa: F401  (normalize.Struct, ...: re-exported)
    BoundMethod, Frame, Raised, RunList, Static, Struct, flatten_value, unflatten_value)
from transpile.frontend.normalize.builder import (  # noqa: F401  (SPECIALIZE: re-exported)
    SPECIALIZE, Builder, Namer, identifier, names_in)
from transpile.frontend.normalize.bindings import aliased
from transpile.frontend.callables import is_data
from transpile.frontend.normalize.returns import fold_early_returns, with_final_return
from transpile.frontend.normalize.statements import UNSUPPORTED_STMTS
from transpile.frontend.normalize.aliasing_scalars import known_array
from transpile.frontend.normalize.aliasing import (MemoryModel, param_entry,
                                                   views_of_written_arguments,
                                                   write_back_arguments)


_STATEMENTS = {**statements.STATEMENTS, **loops.STATEMENTS, **calls.STATEMENTS}
_EXPRESSIONS = {**expressions.EXPRESSIONS, **calls.EXPRESSIONS}


class Normalizer:
    """Reads functions and templates into one Builder.

    The statements and expressions it meets go to the handlers in `_STATEMENTS` and
    `_EXPRESSIONS` (plain functions of the normalizer, in the normalize_*.py modules); the
    methods here are what those handlers, the templates and the alias model call back."""

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
        # the outermost function's array and number arguments as given (never None: a None
        # argument is a constant): `w is None` of one of them is decided when generating
        self.arguments = []
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
        stmts = fold_early_returns(stmts)
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

    # -- dispatch ------------------------------------------------------------------------------

    def stmt(self, node):
        handler = _STATEMENTS.get(type(node).__name__)
        if handler is None:
            label, hint = UNSUPPORTED_STMTS.get(type(node), (type(node).__name__, None))
            raise self.error(node, f"unsupported statement: {label}", hint=hint)
        handler(self, node)

    def expr(self, node, base="t"):
        handler = _EXPRESSIONS.get(type(node).__name__)
        if handler is None:
            raise self.error(node, f"unsupported expression: {type(node).__name__}")
        return handler(self, node, base)

    def assign(self, target, value, node):
        """Bind `target` (a name, a tuple/list of targets, a subscript) to `value`."""
        statements.assign(self, target, value, node)

    def call(self, func, args, kwargs, node, base):
        """Call a normalizer value (a function, method, transform...) on normalizer values."""
        return calls.call(self, func, args, kwargs, node, base)

    # -- values --------------------------------------------------------------------------------

    def atom(self, node, base="t"):
        return self.to_arg(self.expr(node, base), node)

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
            if where is not None and where[0] != "builtin":
                # the same object at every call (another one, even an equal one, is read
                # again: its attributes are watched on the object the code was made from)
                self.deps.append((("id", where), id(obj)))
            return Static(obj)
        if where is not None and unrolled_container(obj):
            return self._container(obj, where, name)
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

    def _container(self, obj, where, name):
        """A global (or closure) tuple, list or dict: a structure known now, its entries
        classified one by one (arrays read at every call, numbers and strings constants);
        the code is regenerated when the structure changes."""
        self.deps.append((("structure", where), container_structure(obj)))
        keys = sorted(obj) if type(obj) is dict else range(len(obj))
        items = [self.classify(obj[k], ("item", where, k), f"{name}_{_identifier(k)}")
                 for k in keys]
        if type(obj) is dict:
            return Struct("dict", items, list(keys))
        return Struct(type(obj).__name__, items)

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
            if obj in (bool, int, float, complex):
                # a Python type given to NumPy (dtype=bool, .astype(float)): NumPy's type for it
                return Const(np.dtype(obj).type)
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
        if isinstance(value, RunList):      # a list given to NumPy: a new array of its items
            return runlists.as_array(self, value, node)
        if isinstance(value, BoundMethod):
            raise self.error(node, f"method .{value.name} must be called")
        raise self.error(node, f"cannot use {value!r} here")

    def static_value(self, value, node, what="this value"):
        if isinstance(value, Const):
            return value.value
        if isinstance(value, Static):
            return value.obj
        if isinstance(value, Struct) and value.kind in ("tuple", "list"):   # in_axes=(None, 0)
            items = [self.static_value(v, node, what) for v in value.items]
            return tuple(items) if value.kind == "tuple" else items
        raise self.error(node, f"{what} must be known when the code is generated (a constant "
                         "or static argument)", cls=TranspileError)

    def condition(self, node, base="cond"):
        """The value of a test (if, while, x if c else y): a list whose length is known only
        when the code runs stands for its truth (not empty)."""
        value = self.expr(node, base)
        if isinstance(value, RunList):
            return runlists.truth(self, value, node)
        return value

    def _kept_dims(self, prim, args, kwargs, node, base):
        """np.any(x, axis, keepdims=True) (rows without keepdims): the reduction, then the
        reduced axes put back with length 1."""
        kwargs = dict(kwargs)
        keep = self.static_value(kwargs.pop("keepdims"), node, "keepdims")
        out = self.apply(prim, args, kwargs, node, base)
        if not keep:
            return out
        axis = kwargs.get("axis", args[1] if len(args) > 1 else Const(None))
        axis = self.static_value(axis, node, "the axis of a reduction with keepdims")
        if axis is None:
            x = args[0] if args else kwargs.get("x")
            av = self.b.avals.get(x.name) if isinstance(x, Var) and self.b.avals else None
            if av is None:
                raise self.error(node, f"{prim.path}(..., axis=None, keepdims=True) needs the "
                                 "array's rank when the code is generated", cls=ShapesNeeded)
            axis = tuple(range(len(av.shape)))
        return self.apply(by_name("expand_dims"), [out], {"axis": Const(axis)}, node, base)

    def _reduced_where(self, prim, args, kwargs, node, base):
        """np.sum/prod/max/min(x, ..., where=m, initial=c) (rows without them): the entries m
        leaves out replaced by the reduction's identity (0, 1; c for max and min, which NumPy
        requires then), the plain reduction, then c combined with it (c + sum, c * prod,
        np.maximum / np.minimum with c): the same numbers, and m and c as data."""
        kwargs = dict(kwargs)
        mask, init = kwargs.pop("where", None), kwargs.pop("initial", None)
        combine, identity = _WHERE_REDUCTIONS[prim]
        if mask is not None:
            if identity is None and init is None:
                raise self.error(node, f"{prim.path}(..., where=...) needs initial= (as in "
                                 "NumPy: the value of a slice with no entry)",
                                 cls=TranspileError)
            args = list(args)
            if args:
                x = args.pop(0)
            elif "x" in kwargs:
                x = kwargs.pop("x")
            else:
                x = kwargs.pop("a")
            fill = Const(identity) if identity is not None else init
            x = self.apply(by_name("where"), [mask, x, fill], {}, node, base)
            args = [x] + args
        out = self.apply(prim, args, kwargs, node, base)
        if init is None:
            return out
        return self.apply(by_name(combine), [out, init], {}, node, base)

    def _padded_with(self, args, kwargs, node, base):
        """np.pad(x, w, constant_values=c) (a number c): the zero-padded x where x lies, c
        around it (np.where over the padded mask of ones: exact, and c differentiable)."""
        kwargs = dict(kwargs)
        c = kwargs.pop("constant_values")
        if isinstance(c, Struct):
            raise self.error(node, "np.pad(..., constant_values=...) with one value per axis "
                             "or side is not supported", hint="pad with one number c")
        mode = kwargs.get("mode", args[2] if len(args) > 2 else Const("constant"))
        if self.static_value(mode, node, "np.pad's mode") != "constant":
            raise self.error(node, "np.pad's constant_values goes with mode='constant'",
                             cls=TranspileError)
        padded = self.apply(_PAD, args, kwargs, node, base)
        x = args[0] if args else kwargs["x"]
        ones = self.apply(by_name("ones_like"), [x], {"dtype": Const(np.bool_)}, node, "inside")
        inside = self.apply(_PAD, [ones] + list(args[1:]), {k: v for k, v in kwargs.items()
                                                            if k != "x"}, node, "inside")
        return self.apply(by_name("where"), [inside, padded, c], {}, node, base)

    def static_truth(self, value):
        if isinstance(value, Const):
            return True, bool(value.value)
        if isinstance(value, Static):
            return True, bool(value.obj)
        if isinstance(value, Struct):
            return True, bool(value.items)
        return False, None

    def apply(self, prim, args, kwargs, node, base):
        if prim.canonical_args is not None:   # np.einsum's sublist form
            args, kwargs = prim.canonical_args(args, kwargs)
        if "keepdims" in kwargs and prim in _KEEPDIMS_BY_EXPANDING:
            return self._kept_dims(prim, args, kwargs, node, base)
        if "constant_values" in kwargs and prim is _PAD:
            return self._padded_with(args, kwargs, node, base)
        if ("where" in kwargs or "initial" in kwargs) and prim in _WHERE_REDUCTIONS:
            return self._reduced_where(prim, args, kwargs, node, base)
        try:
            bound = prim.bind(args, kwargs)
        except TypeError as e:
            raise self.error(node, str(e), cls=TranspileError) from None
        if prim is array and "dtype" in bound and isinstance(bound["x"], Struct):
            stacked = array_literals.stack_struct(self, bound["x"], node, base)
            if isinstance(stacked, Var):
                return self.apply(by_name("astype"), [stacked, bound["dtype"]], {}, node, base)
        dtype = bound.get("dtype")
        if (prim.reduction or prim.batch == "cumulative" or prim is by_name("cumprod")) and \
                "x" in bound and \
                dtype is not None and not (isinstance(dtype, Const) and dtype.value is None):
            # np.sum(x, dtype=d), np.cumsum(x, dtype=d): x in dtype d first (NumPy accumulates
            # in d: the same numbers), so every backend needs only the plain reduction
            rest = {k: v for k, v in bound.items() if k not in ("x", "dtype")}
            x = self.apply(by_name("astype"), [bound["x"], dtype], {}, node, base)
            out = self.apply(prim, [x], rest, node, base)
            if _integer_dtype(dtype):
                # the integer type kept (a sum of int32 is int64 in NumPy): sums and products
                # wrap the same modulo 2**bits, so the cast gives NumPy's numbers
                out = self.apply(by_name("astype"), [out, dtype], {}, node, base)
            return out
        if prim is len_ and isinstance(bound["x"], Struct):
            return Const(len(bound["x"]))     # a tuple's length, before it becomes an array
        if prim is len_ and isinstance(bound["x"], RunList):
            return runlists.count(bound["x"])
        if isinstance(bound.get("arrays"), RunList) and bound["arrays"].ndim and \
                runlists.join_name(prim) is not None:
            # a list of arrays of run-time length given to np.stack & co: joined over its
            # stacked items
            return runlists.joined(self, runlists.join_name(prim), bound["arrays"],
                                   bound.get("axis", Const(0)), node)
        if prim is array and isinstance(bound.get("x"), RunList):
            out = runlists.as_array(self, bound["x"], node)     # np.array(out): a new array
            dtype = bound.get("dtype")
            if dtype is None or (isinstance(dtype, Const) and dtype.value is None):
                return out
            return self.apply(by_name("astype"), [out, dtype], {}, node, base)
        bound = array_literals.array_arguments(self, prim, bound, node, base)
        if prim.multi is not None:
            return array_literals.multi_output(self, prim, bound, node, base)
        if prim in (float_, int_, bool_) and isinstance(bound["x"], Const):
            return Const(prim.impl(bound["x"].value))
        out = {}
        for name, value in bound.items():
            p = prim.param(name)
            if name == "dtype" and isinstance(value, Static) and \
                    value.obj in (bool, int, float, complex):
                # dtype=bool / float: NumPy's type for it, a constant (as dtype=np.float64)
                value = Const(np.dtype(value.obj).type)
            if p.kind == "var":
                out[name] = TupleArg(tuple(self.to_arg(v, node) for v in value))
            else:
                out[name] = self.to_arg(value, node)
        return self.b.emit(prim, out, base=base)

    # -- names ---------------------------------------------------------------------------------

    def bind_name(self, name, value):
        frame = self.frame
        if isinstance(value, Var) and self.b.body and getattr(self.b.body[-1], "out", None) == value.name \
                and _is_temp(value.name, name):
            # Give the last temporary the user's name: `y = np.exp(x)`, not `y_1 = ...; y = y_1`.
            core = self.core_name(name)
            if self.mem.referenced(value.name) or self.mem.referenced(core, (frame.env, name)) \
                    or aliased(frame.env, core, name) \
                    or any(a.name == core for a in self.arguments) \
                    or core in getattr(self, "pending_reads", ()) \
                    or (getattr(self, "sub_depth", 0) and self.mem.view(value.name) is not None
                        and known_array(self.mem, value.name)):
                # (`row = A[i]` / `cur = cur[1:]` in a branch or loop: the view keeps its own
                # name, so where the paths meet the name joins, with what each path's value
                # may share: frontend/normalize/aliasing.py)
                # (an argument's own name stays the caller's array: what it wrote is written
                # back into it at the end, `x[0] = 4.0; x = x * 2.0` included)
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
        core = name if frame.owned and name.isidentifier() and name not in GENERATED_NAMES \
            else self.namer.fresh(name)
        if frame.owned:
            self.namer.taken.add(name)
        frame.core_names[name] = core
        return core

    def rename_last(self, new):
        last = self.b.body[-1]
        self.namer.taken.discard(last.out)
        self.mem.renamed(last.out, new)
        avals = self.b.avals        # (shapes known while normalizing: under the new name)
        if avals is not None and last.out in avals:
            av = avals[last.out]
            if avals.setdefault(new, av) != av:
                del avals[new]      # bound before with another shape: not known
        elif avals is not None:
            avals.pop(new, None)    # now a value of unknown shape (seg = x[lo:hi] in a loop)
        last.out = new


def _integer_dtype(dtype):
    """Is this dtype= argument (a constant or a static type) an integer or bool type?"""
    obj = dtype.value if isinstance(dtype, Const) else dtype.obj if isinstance(dtype, Static) \
        else None
    try:
        return obj is not None and np.dtype(obj).kind in "biu"
    except TypeError:
        return False


_KEEPDIMS_BY_EXPANDING = tuple(by_name(n) for n in ("any", "all", "count_nonzero"))
_PAD = by_name("pad")
# reductions given where= / initial=: (how initial combines with the result, the entry that
# where= leaves out is read as: None for max and min, which take initial)
_WHERE_REDUCTIONS = {by_name("sum"): ("add", 0), by_name("prod"): ("multiply", 1),
                     by_name("max"): ("maximum", None), by_name("min"): ("minimum", None)}


def _leaves_of(value):
    """The atoms of an argument's value (none for a function or another Python object)."""
    if isinstance(value, Struct):
        return [leaf for item in value.items for leaf in _leaves_of(item)]
    return [value] if isinstance(value, (Var, Const)) else []


def _identifier(key):
    return re.sub(r"\W", "_", str(key))


def _same_where(a, b):
    if a[0] != b[0]:
        return False
    if a[0] in ("item", "structure"):
        return _same_where(a[1], b[1]) and a[2:] == b[2:]
    if a[0] == "closure":
        return a[1] is b[1]
    if a[0] == "global":
        return a[1] is b[1] and a[2] == b[2]
    if a[0] == "attr":
        return a[1] is b[1] and a[2] == b[2]
    return a == b


def _is_temp(core_name, user_name):
    return True


def _unparse(node):
    return ast.unparse(gast.gast_to_ast(node))


# ---------------------------------------------------------------------------------------------
# building a CoreFn for a user function




# A long expression (a sum of 300 terms) nests as deeply in the syntax tree; parsing and
# normalizing it recurse once per level (a few frames each)
_DEEP_RECURSION = 20000


def build_core(fn, in_trees, static_args=None, name_suffix=""):
    """Normalize `fn` for arguments whose pytree structures are `in_trees` (one per parameter
    after binding). `static_args` maps parameter names to values fixed at generation time."""
    limit = sys.getrecursionlimit()
    if limit >= _DEEP_RECURSION:
        return _build_core(fn, in_trees, static_args, name_suffix)
    sys.setrecursionlimit(_DEEP_RECURSION)
    try:
        return _build_core(fn, in_trees, static_args, name_suffix)
    finally:
        sys.setrecursionlimit(limit)


def _build_core(fn, in_trees, static_args, name_suffix):
    static_args = static_args or {}
    parsed = parse_function(fn)
    node = parsed.node
    namer = Namer(names_in(node) | GENERATED_NAMES)
    norm = Normalizer(namer)
    norm.b.fresh_results = True
    frame = Frame(parsed, Resolver(fn), owned=True)
    a = node.args
    params = []
    for pname, tree, star in _param_slots(a, in_trees):
        if pname in static_args:
            frame.env[pname] = norm.classify(static_args[pname], None, pname) \
                if not ir.is_literal(static_args[pname]) else Const(static_args[pname])
            continue
        if star is not None:     # *args: a tuple of the extra positional arguments
            items = []
            for i, t in enumerate(tree):
                leaves = _leaf_names(pname, t, namer, f"{pname}_{i}")
                params += leaves
                items.append(unflatten_value(t, [Var(n) for n in leaves]))
                for leaf in leaves:
                    frame.env[param_entry(leaf)] = Var(leaf)
            frame.env[pname] = Struct("tuple", items)
            norm.arguments += [item for item in items if isinstance(item, Var)]
            continue
        leaves = _leaf_names(pname, tree, namer, pname)
        params += leaves
        frame.env[pname] = unflatten_value(tree, [Var(n) for n in leaves])
        # (the leaves of a list/dict argument too: `b is None` of one is known, a None entry
        # being part of the structure)
        norm.arguments += [v for v in _leaves_of(frame.env[pname]) if isinstance(v, Var)]
        frame.core_names[pname] = pname
        for leaf in leaves:     # the caller's buffers: see transpile/frontend/normalize/aliasing.py
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
        norm.run_body(with_final_return(node.body))
        result = frame.returned if frame.returned is not None and \
                not isinstance(frame.returned, Raised) else Const(None)
    try:
        outs, out_tree = flatten_value(result, lists=hook is not None)
    except TypeError as e:
        raise norm.error(node, str(e), cls=TranspileError) from None
    outs = [norm.to_arg(o, node) for o in outs]
    write_back_arguments(norm, frame, params)
    if hook is not None:
        outs = views_of_written_arguments(norm, frame, params, outs)
    core = ir.CoreFn(
        name=identifier(parsed.name) + name_suffix,
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


def _param_slots(a, in_trees):
    """(parameter name, tree, star) per parameter. A function with *args is called with one
    tree per positional argument of the call (as the transforms bind them: argnums count the
    call's positional arguments, as in JAX): the extra ones form the *args tuple (star='*');
    **kwargs comes last, one dict tree."""
    pos = [p.id for p in a.posonlyargs + a.args]
    kwonly = [p.id for p in a.kwonlyargs]
    if a.vararg is None:
        slots = [(n, t, None) for n, t in zip(pos + kwonly, in_trees)]
        rest = list(in_trees[len(slots):])
    else:
        n_extra = max(0, len(in_trees) - len(pos) - len(kwonly) - (a.kwarg is not None))
        trees = list(in_trees)
        slots = [(n, t, None) for n, t in zip(pos, trees)]
        slots.append((a.vararg.id, trees[len(pos):len(pos) + n_extra], "*"))
        slots += [(n, t, None) for n, t in zip(kwonly, trees[len(pos) + n_extra:])]
        rest = trees[len(pos) + n_extra + len(kwonly):]
    if a.kwarg is not None and rest:
        slots.append((a.kwarg.id, rest[0], None))
    return slots


def _leaf_names(pname, tree, namer, prefix):
    if tree.kind in ("static", "none"):
        return []
    if tree.kind == "leaf":
        return [namer.fresh(prefix) if prefix != pname or pname in GENERATED_NAMES
                else _take(namer, pname)]
    names = []
    for i, child in enumerate(tree.children):
        key = tree.keys[i] if tree.kind == "dict" else i
        names += _leaf_names(pname, child, namer, f"{prefix}_{key}")
    return names


def _take(namer, name):
    namer.taken.add(name)
    return name
