"""Calls in the normalizer, and the inlining they lead to.

`f(*args, **kwargs)` has its arguments expanded, then is dispatched on what `f` is: a nested
def or lambda, an array method, a partial or bound method, a pytree helper or constructor, a
Python builtin, a transform constructor (run now), a NumPy function with a rule (one
primitive), a transformed function (its core form is copied in with fresh names) or one of the
user's functions (its body is read in a new frame, parameters bound to the argument values).
Anything else has no rule. A nested `def` or lambda bound to a name is read where it is called
(closures read the enclosing variables' values at the call).
"""
import math
import types

import copy

import gast
import numpy as np

from transpile.frontend import library_calls, numpy_sources, transform_registry
from transpile.errors import NoRuleError, ShapesNeeded, TranspileError
from transpile.core.ir import Const, IndexArg, SliceArg, Var
from transpile.frontend.normalize.builtins import call_builtin
from transpile.frontend.normalize.callables import call_bound
from transpile.frontend.normalize.pytree import call_tree_util, construct_node
from transpile.frontend.normalize.lift import (LiftedTransform, call_jvp, call_lifted, refuse_api_call,
                                      transform_local)
from transpile.frontend.normalize.values import (BoundMethod, DictMethod, Frame, LocalFunction, Raised, RunList,
                                        Static, Struct, flatten_value, unflatten_value)
from transpile.frontend.normalize import random as random_streams
from transpile.frontend.normalize import runlists
from transpile.frontend.normalize.returns import with_final_return
from transpile.frontend.normalize.loops import UNROLL_LIMIT
from transpile.frontend.normalize.expressions import starred_items
from transpile.frontend.normalize.out_keyword import call_into_out, numpy_out_call
from transpile.frontend.parse import Resolver, parse_function, read_binding
from transpile.primitives import METHODS, by_name, lookup
from transpile.primitives.numpy.ufunc_methods import rewrite as rewrite_call
from transpile.frontend.normalize.builder import SPECIALIZE
from transpile.core.avals import aval_of
from transpile.core.rename import rename_body


def expr_Call(norm, node, base):
    out_kw = numpy_out_call(norm, node)
    if out_kw is not None:
        return call_into_out(norm, node, out_kw, base)
    if isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name) and \
            isinstance(norm.frame.env.get(node.func.value.id), RunList):
        # out.pop() on a list whose length is known only when the code runs
        from transpile.frontend.normalize.statements import runlist_method
        value = runlist_method(norm, norm.frame.env[node.func.value.id], node)
        return Const(None) if value is None else value
    if isinstance(node.func, gast.Name) and len(node.args) in (1, 2) and not node.keywords \
            and isinstance(node.args[0], gast.GeneratorExp):
        out = reduce_generator(norm, node, base)      # sum(v * v for v in x): a loop
        if out is not None:
            return out
    if isinstance(node.func, gast.Attribute) and node.func.attr == "tolist" and \
            not node.args and not node.keywords:
        items = _tolist(norm, node, base)
        if items is not None:
            return items
    if isinstance(node.func, gast.Attribute) and node.func.attr == "pop":
        from transpile.frontend.normalize.statements import struct_pop
        item = struct_pop(norm, node)          # out.pop() on a list of known structure
        if item is not None:
            return item
    func = norm.expr(node.func, base)
    args = []
    for a in node.args:
        if isinstance(a, gast.Starred):
            args += starred_items(norm, a, base, "*args")
        else:
            args.append(norm.expr(a, base))
    kwargs = {}
    for k in node.keywords:
        if k.arg is None:
            v = norm.expr(k.value, base)
            if not isinstance(v, Struct) or v.kind != "dict":
                raise norm.error(node, "**kwargs needs a dict of known keys")
            kwargs.update(zip(v.keys, v.items))
        else:
            kwargs[k.arg] = norm.expr(k.value, base)
    return call(norm, func, args, kwargs, node, base)


def reduce_generator(norm, node, base):
    """sum(e for t in seq if c), any(...), all(...) over a sequence that is not a Python list
    of known structure (an array, range(n), zip/enumerate of arrays): a loop with an
    accumulator, not one term per item (any/all leave the loop at the first item that decides,
    as Python). The generator's names are renamed (they do not leak into the function). None
    where it is not such a call (the generator is then read item by item)."""
    import builtins as py
    func = norm.expr(node.func, base)
    if not isinstance(func, Static) or func.obj not in (py.sum, py.any, py.all):
        return None
    kind = func.obj.__name__
    gen = node.args[0]
    if len(gen.generators) != 1 or gen.generators[0].is_async or \
            (len(node.args) == 2 and kind != "sum"):
        return None
    g = gen.generators[0]
    it_func = norm.expr(g.iter.func, base) if isinstance(g.iter, gast.Call) and \
        isinstance(g.iter.func, gast.Name) else None
    if isinstance(it_func, Static) and it_func.obj in (range, enumerate, zip, reversed):
        seq = None              # the loop reads range(...), zip(...) itself
    else:
        seq = norm.expr(g.iter, base)
        if isinstance(seq, (Struct, Static)):
            return None         # a Python sequence of known structure: item by item
    env = norm.frame.env
    hidden_seq, acc = norm.namer.fresh("_gen_seq"), norm.namer.fresh(f"_{kind}")
    rename = {n: norm.namer.fresh(f"_gen_{n}") for n in _stored(g.target)}

    def renamed(n):
        n = copy.deepcopy(n)
        for sub in gast.walk(n):
            if isinstance(sub, gast.Name) and sub.id in rename:
                sub.id = rename[sub.id]
        return n

    def name(id_, store=False):
        return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                         type_comment=None)

    def assign(id_, value):
        return gast.Assign(targets=[name(id_, True)], value=value, type_comment=None)
    elt = renamed(gen.elt)
    if kind == "sum":
        start = node.args[1] if len(node.args) == 2 else gast.Constant(value=0, kind=None)
        first = assign(acc, start)
        inner = [assign(acc, gast.BinOp(left=name(acc), op=gast.Add(), right=elt))]
    else:
        first = assign(acc, gast.Constant(value=kind == "all", kind=None))
        test = elt if kind == "any" else gast.UnaryOp(op=gast.Not(), operand=elt)
        inner = [gast.If(test=test, body=[assign(acc, gast.Constant(value=kind == "any",
                                                                   kind=None)),
                                          gast.Break()], orelse=[])]
    ifs = [renamed(c) for c in g.ifs]
    if ifs:
        cond = ifs[0] if len(ifs) == 1 else gast.BoolOp(op=gast.And(), values=ifs)
        inner = [gast.If(test=cond, body=inner, orelse=[])]
    loop = gast.For(target=renamed(g.target), iter=name(hidden_seq) if seq is not None else
                    renamed(g.iter), body=inner, orelse=[], type_comment=None)
    stmts = [first, loop]
    for st in stmts:
        for sub in gast.walk(st):
            if "lineno" in sub._attributes:
                gast.copy_location(sub, node)
                sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
    saved = dict(env)
    if seq is not None:
        env[hidden_seq] = seq
    try:
        norm.run_body(stmts)
        result = env[acc]
    finally:
        for n in [hidden_seq, acc] + list(rename.values()):
            env.pop(n, None)
        for n in list(env):
            if n not in saved and n.startswith("_"):
                env.pop(n, None)        # the loop's own flags
    return result


def _stored(target):
    return [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]


def _tolist(norm, node, base):
    """x.tolist() of a vector: the list of its numbers (as list(x)); None where x is not an
    array (another object's tolist)."""
    x = norm.expr(node.func.value, base)
    if not isinstance(x, (Var, Const)):
        return None
    avals = norm.b.avals
    av = avals.get(x.name) if isinstance(x, Var) and avals is not None else None
    ndim = av.ndim if av is not None else (np.ndim(x.value) if isinstance(x, Const) else None)
    if ndim is None:
        raise norm.error(node, "x.tolist() needs the number of axes of x when the code is "
                         "generated", cls=ShapesNeeded)
    if ndim != 1:
        raise norm.error(node, "x.tolist() of an array that is not a vector (nested lists) is not "
                         "supported in transformed code", cls=TranspileError)
    n = av.shape[0] if av is not None else (len(x.value) if isinstance(x, Const) else None)
    if n is not None and n <= UNROLL_LIMIT:
        return norm.call(Static(list), [x], {}, node, base)     # a list of known structure
    # a long list (or one of run-time length): a RunList of a copy of the numbers
    dtype = av.dtype if av is not None else np.asarray(x.value).dtype
    h = runlists.new_runlist(norm, "tolist", dtype)
    norm.frame.env[h.items] = norm.b.emit(by_name("copy"), {"x": norm.to_arg(x, node)},
                                          base="tolist")
    norm.frame.env[h.count] = norm.b.emit(by_name("len"), {"x": norm.to_arg(x, node)},
                                          base="tolist_count")
    runlists._register(norm, h, norm.frame.env)
    return h


def call(norm, func, args, kwargs, node, base):
    if isinstance(func, LocalFunction):
        return call_local(norm, func, args, kwargs, node)
    if isinstance(func, LiftedTransform):       # grad(<nested function>)(...)
        return call_lifted(norm, func, args, kwargs, node, base, inline_transformed)
    if isinstance(func, Static) and id(func.obj) in random_streams.FACTORIES:
        return random_streams.make_stream(norm, func.obj, args, kwargs, node)
    if isinstance(func, random_streams.GeneratorMethod):
        return random_streams.generator_call(norm, func, args, kwargs, node, base)
    if isinstance(func, DictMethod):
        try:
            return func.call(args, kwargs)
        except TypeError as e:
            raise norm.error(node, str(e), cls=TranspileError) from None
    if isinstance(func, BoundMethod):
        prim, receiver = METHODS[func.name]
        if func.name in ("reshape", "transpose") and len(args) > 1:
            args = [Struct("tuple", args)]
        if func.name == "transpose" and not args and not kwargs:
            pass
        if func.name == "astype" and "copy" in kwargs:
            return _astype_copy(norm, prim, func.receiver, args, kwargs, node, base)
        result = norm.apply(prim, [func.receiver] + args, kwargs, node, base)
        if func.name == "flatten":
            norm.mem.mark_fresh(result)     # a copy, unlike ravel
        return result
    bound = call_bound(norm, func, args, kwargs, node, base)
    if bound is not None:              # functools.partial, bound method, classmethod
        return bound
    if not isinstance(func, Static):
        raise norm.error(node, "calling a value that is not a known function",
                         hint="functions passed in as arguments must be static arguments")
    obj = func.obj
    expanded = call_tree_util(norm, obj, args, kwargs, node, base)
    if expanded is None:
        expanded = construct_node(norm, obj, args, kwargs, node)
    if expanded is None:
        expanded = call_builtin(norm, obj, args, kwargs, node, base)
    if expanded is not None:         # tree_map(...), Params(w, b), sum(list_of_arrays)...
        return expanded
    api_call = transform_registry.value_function_name(obj)
    if api_call == "jvp":
        return call_jvp(norm, args, kwargs, node, inline_core)
    if api_call is not None:
        refuse_api_call(norm, obj, node)
    if getattr(obj, "__transpile_static__", False):
        # A transform constructor (grad(f), vmap(f, ...)): evaluated while generating code.
        lifted = transform_local(norm, obj, args, kwargs, node)
        if lifted is not None:      # of a function defined in the transformed code
            return lifted
        try:
            values = [norm.static_value(a, node, "an argument of a transform") for a in args]
            kw = {k: norm.static_value(v, node, "an argument of a transform")
                  for k, v in kwargs.items()}
        except TranspileError:
            raise
        return Static(obj(*values, **kw))
    if (obj is np.nonzero or obj is np.where and len(args) == 1) and not kwargs:
        return nonzero_parts(norm, args, node, base)
    if obj is np.unique and len(args) == 1 and kwargs and \
            set(kwargs) <= {"return_inverse", "return_counts"}:
        return unique_parts(norm, args[0], kwargs, node, base)
    written = rewrite_call(obj, args, kwargs, lambda row, a, kw: norm.apply(
        by_name(row) if isinstance(row, str) else row, a, kw, node, base))
    if written is not None:     # np.add.outer, np.add.reduce, np.diff(prepend=), np.allclose
        return written
    prim = lookup(obj)
    if prim is not None:
        python_float = getattr(obj, "__module__", None) == "math" and obj not in _EXACT_MATH
        if python_float:
            args = [_as_double(norm, a, node, base) for a in args]
        result = norm.apply(prim, args, kwargs, node, base)
        if python_float and obj not in _MATH_TESTS:
            # a Python float, weak in NumPy 2 (v32 * math.sqrt(2.0) stays float32)
            result = norm.apply(by_name("float"), [result], {}, node, base)
        elif _weak_number(norm, result) and _numpy_function(obj):
            # np.sqrt(2.0), np.exp(x) of a Python float: a NumPy scalar, strong in NumPy 2
            # (np.sqrt(2.0) * v32 is float64), where Python operators keep Python numbers
            result = norm.apply(by_name("numpy_scalar"), [result], {}, node, base)
        if obj is np.array:
            norm.mem.mark_fresh(result)     # np.array copies; np.asarray does not
        return result
    if isinstance(obj, type) and issubclass(obj, np.generic):
        if len(args) != 1:
            raise norm.error(node, f"{obj.__name__}(...) takes one argument")
        result = norm.apply(by_name("astype"), [args[0]], {"dtype": Const(obj)}, node, base)
        if isinstance(result, Var) and isinstance(args[0], Const):
            norm.mem.scalar_vars.add(result.name)     # np.float32(0.0): a scalar, rebound
        return result
    if is_transform_factory(obj) and all(isinstance(a, (Static, Const)) for a in
                                         list(args) + list(kwargs.values())):
        # grad(f) written inside a transformed function: build the transform now
        vals = [a.obj if isinstance(a, Static) else a.value for a in args]
        kw = {k: v.obj if isinstance(v, Static) else v.value for k, v in kwargs.items()}
        return Static(obj(*vals, **kw))
    if hasattr(obj, "__transpile_core__"):
        return inline_transformed(norm, obj, args, kwargs, node, base)
    mine = numpy_sources.ours(obj)
    if mine is not None:         # scipy.linalg.solve_triangular: our source, not SciPy's
        return inline_function(norm, mine, args, kwargs, node)
    if isinstance(obj, types.FunctionType):
        return inline_function(norm, obj, args, kwargs, node)
    source = numpy_sources.source_of(obj)
    if source is not None:       # np.trapezoid: read from Python source
        return inline_function(norm, source, args, kwargs, node)
    if isinstance(obj, (types.BuiltinFunctionType, np.ufunc, types.MethodType, type)) \
            or callable(obj):
        name = getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj)))
        module = getattr(obj, "__module__", None)
        full = f"{module}.{name}" if module and module != "builtins" else name
        raise norm.error(node, f"no rule for {full}: it has no Python source to read and is "
                         "not in transpile's table of functions (docs/supported.md)",
                         cls=NoRuleError,
                         hint="register it with transpile.defrule(...) (a derivative is only "
                         "needed where one is taken), or compute it outside the transformed "
                         "function")
    raise norm.error(node, f"{obj!r} is not callable", cls=TranspileError)



def _numpy_function(obj):
    """A NumPy ufunc (np.exp, np.maximum): of Python numbers it returns a NumPy scalar (other
    NumPy functions differ: np.allclose and np.random.normal return Python numbers)."""
    return isinstance(obj, np.ufunc)


def _weak_number(norm, atom):
    """Is `atom` known, under jit, to be a Python number (a weak scalar)?"""
    avals = norm.b.avals
    if isinstance(atom, Const):
        return isinstance(atom.value, (bool, int, float, complex)) and \
            not isinstance(atom.value, np.generic)
    av = avals.get(atom.name) if avals is not None and isinstance(atom, Var) else None
    return av is not None and av.weak


# math functions exact on Python ints (math.floor(2**60 + 1) is not rounded to a double)
_EXACT_MATH = (math.floor, math.ceil, math.trunc)
_MATH_TESTS = (math.isnan, math.isinf, math.isfinite)


def _as_double(norm, a, node, base):
    """An argument of a `math` function as the Python float (a C double) Python converts it
    to: math.log of a float32 element is computed in double precision and returns a weak
    Python float (np.float32 * math.log(v) is a float32), where its dtype is known to be
    another real one."""
    known = runlists.dtype_ndim(norm, a) if isinstance(a, Var) else None
    if known is None or known[1] or known[0].kind not in "fiub" or known[0] == np.float64:
        return a
    return norm.apply(by_name("float"), [a], {}, node, base)


def _astype_copy(norm, prim, x, args, kwargs, node, base):
    """x.astype(dtype, copy=...): copy=False gives x itself where the dtype is already x's
    (NumPy's alias: a write through either name changes both), a converted copy where it
    differs; where x's dtype is not known while the code is generated, a copy that may share
    x's memory (a write into it is refused rather than seen by one name only)."""
    kwargs = dict(kwargs)
    copy = kwargs.pop("copy")
    if not isinstance(copy, Const):
        raise norm.error(node, "astype(..., copy=...) needs copy known when the code is generated")
    result = norm.apply(prim, [x] + args, kwargs, node, base)
    if copy.value:
        return result
    dtype = (args[0] if args else kwargs.get("dtype"))
    target = getattr(dtype, "obj", getattr(dtype, "value", None))
    known = runlists.dtype_ndim(norm, x) if isinstance(x, Var) else None
    try:
        same = known is not None and np.dtype(target) == known[0]
        differs = known is not None and not same
    except TypeError:
        same = differs = False
    if same:
        return x
    if not differs and isinstance(result, Var) and isinstance(x, Var):
        norm.mem.maybe.setdefault(result.name, set()).add(norm.mem.root(x.name))
    return result

def unique_parts(norm, x, kwargs, node, base):
    """np.unique(x, return_inverse=..., return_counts=...): the sorted unique values u, each
    element's position in u (np.searchsorted; x's shape, as NumPy 2 gives it) and how often
    each occurs (np.bincount of the positions)."""
    flags = {k: norm.static_value(v, node, f"np.unique's {k}") for k, v in kwargs.items()}
    u = norm.apply(by_name("unique"), [x], {}, node, base)
    if not any(flags.values()):
        return u
    flat = norm.apply(by_name("ravel"), [x], {}, node, base)
    at = norm.apply(by_name("searchsorted"), [u, flat], {}, node, base)
    parts = [u]
    if flags.get("return_inverse"):
        shape = norm.apply(by_name("attr_shape"), [x], {}, node, base)
        parts.append(norm.apply(by_name("reshape"), [at, shape], {}, node, base))
    if flags.get("return_counts"):
        parts.append(norm.apply(by_name("bincount"), [at], {}, node, base))
    return Struct("tuple", parts)


def nonzero_parts(norm, args, node, base):
    """np.nonzero(x) and np.where(x): the columns of np.argwhere(x), one index array per axis
    (the number of axes must be known when the code is generated)."""
    if len(args) != 1:
        raise norm.error(node, "np.nonzero takes one argument")
    x = norm.to_arg(args[0], node)
    known = norm.b.avals.get(x.name) if norm.b.avals is not None and isinstance(x, Var) \
        else None
    ndim = Const(len(known.shape)) if known is not None else \
        norm.b.emit(by_name("attr_ndim"), {"x": x}, base="ndim")
    if not isinstance(ndim, Const):
        raise norm.error(node, "np.nonzero/np.where(condition) needs the number of axes of "
                         "its argument when the code is generated", cls=ShapesNeeded)
    found = norm.b.emit(by_name("argwhere"), {"x": x}, base=base)
    return Struct("tuple", [norm.b.emit(by_name("getitem"), {
        "x": found, "index": IndexArg((SliceArg(None, None, None), Const(k)))}, base=base)
        for k in range(int(ndim.value))])


def is_transform_factory(obj):
    """transpile.grad / value_and_grad and the Transform classes (applied to static values);
    api/autodiff.py registers them in transform_registry (the normalizer does not import the API)."""
    return transform_registry.is_transform_factory(obj)


# -- inlining --------------------------------------------------------------------------------


def inline_function(norm, fn, args, kwargs, node):
    try:
        return _inline_function(norm, fn, args, kwargs, node)
    except TranspileError as e:
        err = library_calls.call_error(norm, fn, node, e)    # at the user's call of a library
        if err is e:
            raise
        raise err from None


def _inline_function(norm, fn, args, kwargs, node):
    if fn.__code__ in norm.inline_stack:
        raise norm.error(node, f"recursive call to {fn.__name__} is not supported",
                         construct=f"{fn.__name__}(...)",
                         hint="rewrite the recursion as a loop")
    if len(norm.inline_stack) > norm.MAX_INLINE_DEPTH:
        raise norm.error(node, "calls nested too deeply")
    parsed = parse_function(fn)
    frame = Frame(parsed, Resolver(fn))
    try:
        bind_params(norm, frame, parsed, fn, args, kwargs)
    except TypeError as e:
        raise norm.error(node, f"{fn.__name__}(): {e}", cls=TranspileError) from None
    norm.frames.append(frame)
    norm.inline_stack.append(fn.__code__)
    saved_loc = norm.b.loc
    try:
        if isinstance(parsed.node, gast.Lambda):
            norm.set_loc(parsed.node)
            result = norm.expr(parsed.node.body, fn.__name__.strip("<>"))
        else:
            norm.run_body(with_final_return(parsed.node.body))
            result = frame.returned if frame.returned is not None and \
                not isinstance(frame.returned, Raised) else Const(None)
    finally:
        norm.frames.pop()
        norm.inline_stack.pop()
        norm.b.loc = saved_loc
    return result


def bind_params(norm, frame, parsed, fn, args, kwargs):
    a = parsed.node.args
    names = [p.id for p in a.posonlyargs + a.args]
    kwonly = [p.id for p in a.kwonlyargs]
    defaults = dict(zip(names[len(names) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    values = bind_star_params(a, names, kwonly, args, kwargs, defaults,
                              lambda n, d: norm.classify(d, None, n))
    frame.env.update(values)


def bind_star_params(a, names, kwonly, args, kwargs, defaults, default_value):
    """Python's argument binding with the values known while generating code: *args binds a
    tuple Struct of the extra positional values, **kwargs a dict Struct of the extra keywords."""
    if len(args) > len(names) and a.vararg is None:
        raise TypeError(f"takes {len(names)} positional arguments but {len(args)} were given")
    values = dict(zip(names, args))
    extra_kw = {}
    for k, v in kwargs.items():
        if k not in names + kwonly or k in [p.id for p in a.posonlyargs]:
            if a.kwarg is None:
                raise TypeError(f"unexpected keyword argument {k!r}")
            extra_kw[k] = v
            continue
        if k in values:
            raise TypeError(f"multiple values for argument {k!r}")
        values[k] = v
    for n in names + kwonly:
        if n not in values:
            if n not in defaults:
                raise TypeError(f"missing argument {n!r}")
            values[n] = default_value(n, defaults[n])
    if a.vararg is not None:
        values[a.vararg.id] = Struct("tuple", list(args[len(names):]))
    if a.kwarg is not None:
        values[a.kwarg.id] = Struct("dict", list(extra_kw.values()), list(extra_kw))
    return values


def inline_transformed(norm, obj, args, kwargs, node, base):
    if kwargs:
        args = _keywords_by_position(norm, obj, args, kwargs, node)
    trees, atoms = [], []
    statics = getattr(obj, "takes_static_args", False)
    for a in args:
        leaves, tree = flatten_value(a, statics)
        trees.append(tree)
        atoms += [norm.to_arg(l, node) for l in leaves]
    ranks = known_ranks(norm, atoms) if takes_ranks(obj) else None
    key = tuple(trees)
    if ranks is not None:
        key = transform_registry.Ranked((tuple(trees), ranks, tuple(True for _ in trees)))
    try:
        core = obj.__transpile_core__(key)
    except ShapesNeeded:
        core = with_shapes(norm, obj, key, atoms)      # (a comprehension over an array)
    outs = inline_core(norm, core, atoms)
    return unflatten_value(core.out_tree, outs)


def _keywords_by_position(norm, obj, args, kwargs, node):
    """`jf(a, b=x)` of a jit function inside another transform: the positional call it means
    (parameters it skips take their defaults). Other transforms' arguments are positional
    (argnums and in_axes count them)."""
    params = getattr(obj, "_params", None) if hasattr(obj, "_as_positional") else None
    if params is None or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                             for p in params):
        raise norm.error(node, "keyword arguments to a transformed function (other than a "
                         "jit function without *args or keyword-only parameters) called "
                         "inside another transform are not supported",
                         hint="pass them by position")
    kwargs = dict(kwargs)
    full = list(args)
    for p in params[len(args):]:
        if p.name in kwargs:
            full.append(kwargs.pop(p.name))
        elif p.default is not p.empty:
            full.append(norm.classify(p.default, None, p.name))
        else:
            raise norm.error(node, f"missing argument {p.name!r}", cls=TranspileError)
    if kwargs:
        raise norm.error(node, f"unexpected keyword argument {next(iter(kwargs))!r} (or one "
                         "given by position too)", cls=TranspileError)
    return full


def with_shapes(norm, obj, key, atoms):
    """obj's core built with its function's shape queries folded, when the shapes of the
    atoms are known here (under jit, or an eager transform retrying with shapes). Called
    while a ShapesNeeded is handled: re-raises it when the shapes are not known."""
    avals = getattr(norm.b, "avals", None)
    shape_folder = getattr(norm.b, "shape_folder", None)
    if avals is None or shape_folder is None:
        raise
    mine = []
    for a in atoms:
        av = aval_of(a.value) if isinstance(a, Const) else avals.get(getattr(a, "name", None))
        if av is None:
            raise
        mine.append(av)
    inner = transform_registry.example_avals(obj, key, mine)
    if inner is None:
        raise
    token = SPECIALIZE.set(shape_folder(inner))
    try:
        return obj.__transpile_core__(key)
    finally:
        SPECIALIZE.reset(token)


def takes_ranks(obj):
    """A vmap (every parameter passed, none defaulted) or a Jacobian picks its batching
    rules by the ranks of its arguments when they are known."""
    if getattr(obj, "accepts_ranks", False):
        return True
    return getattr(obj, "maps_every_parameter", lambda: False)()


def known_ranks(norm, atoms):
    """The ranks of the atoms when every one is known while generating code (under jit, whose
    argument shapes are known: transpile/api/jit.py _BuildFolder), else None."""
    avals = getattr(norm.b, "avals", None)
    if avals is None:
        return None
    ranks = []
    for a in atoms:
        if isinstance(a, Const):
            ranks.append(int(np.ndim(a.value)))
        elif isinstance(a, Var) and avals.get(a.name) is not None:
            ranks.append(len(avals[a.name].shape))
        else:
            return None
    return tuple(ranks)


def inline_core(norm, core, atoms):
    """Copy a CoreFn's body into the builder with fresh names; returns its output atoms."""
    mapping = {}
    n_args = len(core.params) - len(core.free)
    for p, a in zip(core.params[:n_args], atoms):
        mapping[p] = a
    for (pname, where, desc) in core.free:
        mapping[pname] = norm.classify(read_where(where), where, desc)
    for sname, obj in core.statics.items():
        mapping[sname] = norm.to_arg(Static(obj), None)
    body = rename_body(core.body, mapping, norm.namer, core.outs)
    norm.b.body += body
    norm.source_lines.update(core.source_lines)

    def sub(a):
        return mapping.get(a.name, a) if isinstance(a, Var) else a
    return [sub(o) for o in core.outs]


def read_where(where):
    return read_binding(where)


# -- local functions -----------------------------------------------------------------------


def stmt_FunctionDef(norm, node):
    if node.decorator_list:
        raise norm.error(node, "decorators on a nested function are not supported",
                         construct=f"@... def {node.name}",
                         hint="define the decorated function at module level")
    for n in gast.walk(node):
        if isinstance(n, (gast.Yield, gast.YieldFrom)):
            raise norm.error(n, "unsupported: generator (yield)",
                             hint="return the values instead (a list or tuple)")
    defaults = [norm.expr(d, "default") for d in node.args.defaults]
    norm.frame.env[node.name] = _with_kw_defaults(norm, LocalFunction(node, norm.frame,
                                                                      defaults))


def expr_Lambda(norm, node, base):
    defaults = [norm.expr(d, "default") for d in node.args.defaults]
    return _with_kw_defaults(norm, LocalFunction(node, norm.frame, defaults))


def _with_kw_defaults(norm, fn):
    fn.kw_defaults = [None if d is None else norm.expr(d, "default")
                      for d in fn.node.args.kw_defaults]
    return fn


def call_local(norm, fn, args, kwargs, node):
    depth = sum(1 for f in norm.frames if getattr(f, "local_fn", None) is fn.node)
    if depth:
        raise norm.error(node, f"recursive call to {fn.name} is not supported",
                         construct=f"{fn.name}(...)", hint="rewrite the recursion as a loop")
    a = fn.node.args
    names = [p.id for p in a.posonlyargs + a.args]
    kwonly = [p.id for p in a.kwonlyargs]
    defaults = dict(zip(names[len(names) - len(fn.defaults):], fn.defaults))
    defaults.update({p.id: d for p, d in zip(a.kwonlyargs, getattr(fn, "kw_defaults", ()))
                     if d is not None})
    try:
        values = bind_star_params(a, names, kwonly, args, kwargs, defaults, lambda n, d: d)
    except TypeError as e:
        raise norm.error(node, f"{fn.name}(): {e}", cls=TranspileError) from None
    parent = norm.frame if fn.frame in norm.frames else fn.frame
    frame = Frame(parent.parsed, parent.resolver)
    frame.env = dict(parent.env)
    frame.env.update(values)
    frame.local_fn = fn.node
    norm.frames.append(frame)
    saved_loc = norm.b.loc
    try:
        if isinstance(fn.node, gast.Lambda):
            result = norm.expr(fn.node.body, "lam")
        else:
            norm.run_body(with_final_return(fn.node.body))
            result = frame.returned if frame.returned is not None and \
                not isinstance(frame.returned, Raised) else Const(None)
    finally:
        norm.frames.pop()
        norm.b.loc = saved_loc
    return result


STATEMENTS = {"FunctionDef": stmt_FunctionDef}
EXPRESSIONS = {"Call": expr_Call, "Lambda": expr_Lambda}
