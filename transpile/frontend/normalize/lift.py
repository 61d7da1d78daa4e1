"""A transform of a function defined inside the transformed code: `grad(lambda p: loss(p, x))`,
`vmap(inner, in_axes=(None, 0))` with `def inner` nested in the function being transformed.

The nested function reads the enclosing function's values (`x` above). Those are traced values
of the outer code, so the nested function is *lifted*: it becomes a real function whose extra
trailing parameters are the values it reads, and the transform is applied to that function and
called with the values appended (vmap maps them with in_axes None; grad's argnums still count
the nested function's own parameters). The outer transform then differentiates, batches or
compiles through the inlined result like any other call. Known objects the nested function
reads (a helper bound to a local name, a closure cell of the outer function) are fixed when the
code is generated; module globals stay globals.

    def step(params, x):
        g = grad(lambda p: loss(p, x))(params)       # lifted: def _lambda(p, x): ...
"""
import ast
import itertools
import linecache
import types

import gast

from transpile.errors import TranspileError
from transpile.frontend.normalize.values import (LocalFunction, Static, Struct, flatten_value, unflatten_value)
from transpile.frontend.transform_registry import jvp_class

_count = itertools.count()


class LiftedTransform:
    """Transforms (outermost last) applied to a lifted nested function, not called yet."""

    def __init__(self, fn, lifted, captured, chain):
        self.fn, self.lifted, self.captured, self.chain = fn, lifted, captured, chain

    def then(self, factory, kwargs):
        return LiftedTransform(self.fn, self.lifted, self.captured,
                               self.chain + [(factory, kwargs)])

    def build(self, n_args):
        """The transformed function of n_args own arguments + the captured values."""
        fn = self.lifted
        extra = len(self.captured)
        for factory, kwargs in self.chain:
            kw = dict(kwargs)
            if getattr(factory, "__name__", "") == "vmap":
                axes = kw.get("in_axes", 0)
                axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,) * n_args
                kw["in_axes"] = axes + (None,) * extra
            fn = factory(fn, **kw)
        return fn


def transform_local(norm, factory, args, kwargs, node):
    """factory(nested function or LiftedTransform, *static args): a LiftedTransform, or None
    when the first argument is neither."""
    if not args or not isinstance(args[0], (LocalFunction, LiftedTransform)):
        return None
    if len(args) > 1:
        raise norm.error(node, "give the options of a transform of a nested function as "
                         "keywords (in_axes=..., argnums=...)", cls=TranspileError)
    kw = {k: norm.static_value(v, node, "an option of a transform") for k, v in kwargs.items()}
    target = args[0]
    if isinstance(target, LocalFunction):
        target = lift(norm, target, node)
    return target.then(factory, kw)


def call_lifted(norm, value, args, kwargs, node, base, inline):
    if kwargs:
        raise norm.error(node, "keyword arguments to a transformed nested function are not "
                         "supported", cls=TranspileError)
    fn = value.build(len(args))
    return inline(norm, fn, list(args) + list(value.captured), {}, node, base)


def _free_names(fnode):
    params = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}
    stored, loaded = set(), []
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name):
            if isinstance(n.ctx, (gast.Store, gast.Del)):
                stored.add(n.id)
            else:
                loaded.append(n.id)
        elif isinstance(n, gast.FunctionDef) and n is not fnode:
            stored.add(n.name)
    return [n for n in dict.fromkeys(loaded) if n not in params and n not in stored]


def lift(norm, lf, node):
    fnode = lf.node
    a = fnode.args
    if a.vararg is not None or a.kwarg is not None or a.kwonlyargs or lf.defaults:
        raise norm.error(node, "a transform of a nested function with *args, **kwargs, "
                         "keyword-only or default parameters is not supported",
                         cls=TranspileError, hint="define the function at module level")
    frame = norm.frame if lf.frame in norm.frames else lf.frame
    resolver = frame.resolver
    captured_names, captured, fixed = [], [], {}
    for name in _free_names(fnode):
        if name in frame.env:
            value = frame.env[name]
            if isinstance(value, Static):
                fixed[name] = value.obj
            elif isinstance(value, (LocalFunction, LiftedTransform)):
                raise norm.error(node, f"the nested function reads {name!r}, another nested "
                                 "function: a transform of it is not supported",
                                 cls=TranspileError, hint="define one of them at module level")
            else:
                captured_names.append(name)
                captured.append(value)
        elif resolver is not None and name in resolver.closure:
            fixed[name] = resolver.lookup(name)[0]
    fn = _compile(norm, fnode, captured_names, fixed, resolver)
    return LiftedTransform(lf, fn, captured, [])


def _compile(norm, fnode, captured_names, fixed, resolver):
    name = getattr(fnode, "name", "_lambda")
    tree = gast.gast_to_ast(gast.Module(body=[_as_def(fnode, name)], type_ignores=[]))
    inner = tree.body[0]
    inner.decorator_list = []
    inner.args.args += [ast.arg(arg=c) for c in captured_names]
    factory = ast.FunctionDef(name="_transpile_lift", args=ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=n) for n in fixed], kwonlyargs=[], kw_defaults=[],
        defaults=[]), body=[inner, ast.Return(ast.Name(name, ast.Load()))],
        decorator_list=[], returns=None, type_params=[])
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    text = ast.unparse(module) + "\n"
    where = norm.frame.loc(fnode) if norm.frame is not None else None
    origin = f"{where[0]}:{where[1]}" if where else "transformed code"
    filename = f"<transpile: nested function {name} of {origin}, lifted>"
    filename = f"{filename[:-1]} {next(_count)}>"
    lines = text.splitlines(True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    code = compile(text, filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    glob = resolver.globals if resolver is not None else {}
    made = types.FunctionType(fcode, glob, "_transpile_lift")
    return made(*fixed.values())


def _as_def(fnode, name):
    if isinstance(fnode, gast.FunctionDef):
        return fnode
    return gast.FunctionDef(name=name, args=fnode.args, body=[gast.Return(value=fnode.body)],
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])


def call_jvp(norm, args, kwargs, node, inline_core):
    """jvp(f, primals, tangents) inside transformed code: the forward-mode core of f (lifted
    when f is a nested function, its captured values with zero tangents) inlined here."""
    if kwargs or len(args) != 3 or not all(isinstance(a, Struct) and a.kind in ("tuple", "list")
                                           for a in args[1:]):
        raise norm.error(node, "jvp(f, primals, tangents) takes a function and two tuples",
                         cls=TranspileError)
    f, primals, tangents = args[0], list(args[1].items), list(args[2].items)
    if len(primals) != len(tangents):
        raise norm.error(node, f"jvp: {len(primals)} primals but {len(tangents)} tangents",
                         cls=TranspileError)
    extra = []
    if isinstance(f, LocalFunction):
        lifted = lift(norm, f, node)
        fn, extra = lifted.lifted, list(lifted.captured)
    elif isinstance(f, Static) and callable(f.obj):
        fn = f.obj
    else:
        raise norm.error(node, "jvp: the function must be known when the code is generated",
                         cls=TranspileError)
    trees, atoms, tatoms = [], [], []
    for p in primals + extra:
        leaves, tree = flatten_value(p)
        trees.append(tree)
        atoms += [norm.to_arg(leaf, node) for leaf in leaves]
    for p, t in zip(primals, tangents):
        pl, pt = flatten_value(p)
        tl, tt = flatten_value(t)
        if len(pl) != len(tl):
            raise norm.error(node, "jvp: a tangent must have the structure of its primal",
                             cls=TranspileError)
        tatoms += [norm.to_arg(leaf, node) for leaf in tl]
    core = jvp_class()(fn, tuple(range(len(primals)))).__transpile_core__(tuple(trees))
    outs = inline_core(norm, core, atoms + tatoms)
    return unflatten_value(core.out_tree, outs)


def refuse_api_call(norm, obj, node):
    """vjp/linearize/check_grads called inside transformed code: name the alternative (their
    Python source is transpile's own, which must not be inlined)."""
    name = getattr(obj, "__name__", "this function")
    raise norm.error(node, f"{name}(...) inside a transformed function is not supported",
                     construct=f"{name}(...)", cls=TranspileError,
                     hint="use grad, value_and_grad, jacrev or jvp inside; or call "
                          f"{name} outside the transformed function")
