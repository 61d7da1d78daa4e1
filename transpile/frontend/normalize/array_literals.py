"""Python lists inside array code: `np.array([[x, y], [y, x]])`, `np.sum([1.0, a * a])`,
`np.r_[x, c]`, `np.c_[u, v]`.

A list (or nested list) of traced values that reaches a NumPy function's array argument is
turned into explicit `np.stack` equations, so its derivative flows like any other array's;
`np.r_` / `np.c_` become `np.concatenate` / `np.column_stack`. The normalizer calls these
helpers; they only emit equations through it.
"""
import gast
import numpy as np

from transpile.errors import TranspileError
from transpile.core.ir import Const, Var
from transpile.frontend.normalize.values import Struct, Static
from transpile.primitives import by_name

# parameters that hold a sequence of arrays (each item is one array)
_SEQUENCE_PARAMS = ("arrays", "tup", "condlist", "choicelist")
# parameters that are arrays even when the primitive has no derivative rule for them
_ARRAY_PARAMS = ("x", "y", "condition", "a", "b", "start", "stop", "indices")


def _has_traced(value, Struct):
    if isinstance(value, Var):
        return True
    if isinstance(value, Struct):
        return any(_has_traced(v, Struct) for v in value.items)
    return False


def stack_struct(norm, value, node, base):
    """A (nested) list/tuple holding traced values -> one stacked array atom; else unchanged."""
    if not isinstance(value, Struct) or value.kind == "dict" or not _has_traced(value, Struct):
        return value
    items = [stack_struct(norm, v, node, base) for v in value.items]
    args = {"arrays": norm.to_arg(Struct("tuple", items), node), "axis": Const(0)}
    return norm.b.emit(by_name("stack"), args, base=base)


def sequence_array(norm, value, node, base):
    """An item of a sequence of arrays (np.concatenate(([0.0], x))): a list of numbers becomes
    an array as NumPy makes it (np.asarray), a list holding traced values a stack."""
    if isinstance(value, Struct) and value.kind in ("list", "tuple") and value.items and \
            not _has_traced(value, Struct) and \
            all(isinstance(v, Const) and isinstance(v.value, (bool, int, float, complex))
                for v in value.items):
        return norm.b.emit(by_name("array"), {"x": norm.to_arg(value, node)}, base=base)
    return stack_struct(norm, value, node, base)


def array_arguments(norm, prim, bound, node, base):
    """Stack lists of traced values passed where `prim` expects an array (in place)."""
    rules = set(prim.vjp) | set(prim.deriv) | set(prim.jvp) | set(prim.linear)
    for name, value in list(bound.items()):
        p = prim.param(name)
        if p is None or name in prim.shape_args:
            continue
        if p.kind == "var" or name in _SEQUENCE_PARAMS:
            if isinstance(value, Struct) and value.kind != "dict":
                bound[name] = Struct(value.kind, [sequence_array(norm, v, node, base)
                                                  for v in value.items])
            elif isinstance(value, tuple):
                bound[name] = tuple(sequence_array(norm, v, node, base) for v in value)
        elif name in rules or name in _ARRAY_PARAMS:
            bound[name] = stack_struct(norm, value, node, base)
    return bound


def is_concatenator(obj):
    return obj is np.r_ or obj is np.c_


def index_concat(norm, obj, node, base):
    """np.r_[a, b, ...] -> np.concatenate of 1-D pieces; np.c_[a, b, ...] -> np.column_stack.
    Slices and string directives (np.r_['0,2', ...], np.r_[0:3]) are evaluated only when every
    piece is a constant."""
    elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    if any(isinstance(e, gast.Slice) for e in elts):
        raise norm.error(node, f"{'np.r_' if obj is np.r_ else 'np.c_'}[...] with a slice is "
                         "not supported inside a transformed function", cls=TranspileError,
                         hint="use np.arange / np.linspace and np.concatenate")
    pieces = [norm.expr(e, base) for e in elts]
    if all(isinstance(p, (Const, Static)) for p in pieces):
        vals = tuple(norm.static_value(p, node) for p in pieces)
        return norm.classify(obj[vals if len(vals) > 1 else vals[0]], None)
    if any(isinstance(p, Const) and isinstance(p.value, str) for p in pieces):
        raise norm.error(node, "np.r_/np.c_ with a string directive is not supported inside a "
                         "transformed function", cls=TranspileError,
                         hint="use np.concatenate / np.stack with an explicit axis")
    pieces = [stack_struct(norm, p, node, base) for p in pieces]
    if obj is np.r_:
        parts = [norm.apply(by_name("atleast_1d"), [p], {}, node, base) for p in pieces]
        return norm.apply(by_name("concatenate"), [Struct("tuple", parts)], {}, node, base)
    return norm.apply(by_name("column_stack"), [Struct("tuple", pieces)], {}, node, base)


def index_mgrid(norm, node, base):
    """np.mgrid[a:b, c:d]: np.stack(np.meshgrid(np.arange(a, b), np.arange(c, d),
    indexing='ij')); one slice: its np.arange. A complex step (a count of points) is refused."""
    elts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    if not all(isinstance(e, gast.Slice) and e.upper is not None for e in elts):
        raise norm.error(node, "np.mgrid[...] needs slices with a stop (np.mgrid[0:n, 0:m])",
                         cls=TranspileError)
    ranges = []
    for e in elts:
        start, stop, step = [Const(0) if p is None and k == 0 else Const(1) if p is None else
                             norm.atom(p, base)
                             for k, p in enumerate((e.lower, e.upper, e.step))]
        if isinstance(step, Const) and isinstance(step.value, complex):
            raise norm.error(node, "np.mgrid[...] with a complex step (a number of points) is "
                             "not supported inside a transformed function", cls=TranspileError,
                             hint="use np.linspace and np.meshgrid(..., indexing='ij')")
        ranges.append(norm.apply(by_name("arange"), [start, stop, step], {}, node, base))
    if len(ranges) == 1:
        return ranges[0]
    grids = norm.apply(by_name("meshgrid"), ranges, {"indexing": Const("ij")}, node, base)
    return norm.apply(by_name("stack"), [grids], {}, node, base)


def multi_output(norm, prim, bound, node, base):
    """A function returning several arrays (np.split, np.linalg.eigh, ...) -> a tuple of one
    primitive call per output; `prim.multi(bound, const)` lists (part name, extra args)."""

    def const(v):
        if isinstance(v, Struct):
            return tuple(const(i) for i in v.items)
        return None if v is None else norm.static_value(v, node, f"this argument of {prim.path}")
    parts = prim.multi(bound, const)
    if isinstance(parts, str):       # a single array (e.g. svd with compute_uv=False)
        parts = [(parts, {})]
        single = True
    else:
        single = False
    outs = []
    for name, extra in parts:
        part = by_name(name)
        args = {k: v for k, v in bound.items() if part.param(k) is not None}
        args.update({k: Const(v) for k, v in extra.items()})
        var = [p.name for p in part.params if p.kind == "var"]    # *xi: passed positionally
        outs.append(norm.apply(part, list(args.pop(var[0], ())) if var else [], args, node,
                               base))
    return outs[0] if single else Struct("tuple", outs)
