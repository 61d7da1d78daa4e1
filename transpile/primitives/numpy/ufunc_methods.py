"""ufunc methods as rows, and calls the normalizer writes with other rows.

`np.maximum.accumulate(x)` is a bound method, a new object at every access:
registry.defufunc_method keys it by its ufunc and name.

    np.maximum.accumulate / np.minimum.accumulate   a running extremum along axis (default 0);
        the cotangent of each output goes to the element that set it (rt.running_source),
        so the rules are a scatter-add (vjp) and a gather (jvp) of that source
    np.add.accumulate / np.multiply.accumulate      np.cumsum / np.cumprod along axis 0, in
        x's dtype (np.cumsum would widen an int8 to int64)
    ufunc.reduce (REDUCE_ROWS)   the reduction row along axis 0 (np.add.reduce is np.sum)
    ufunc.outer                  the ufunc's own row on rt.outer_expand(a, b) (a reshaped to
        a.shape + (1,) * b.ndim) and b: every binary ufunc row's rules apply

`rewrite` (called by transpile/frontend/normalize/calls.py) writes the last two, np.allclose
(bool(np.all(np.isclose(a, b, ...))), as NumPy computes it) and np.diff(x, n, axis,
prepend=p, append=a) as np.diff(rt.diff_extend(x, axis, p, a), n, axis), linear in x, p, a.
"""
import numpy as np

from transpile.core.ir import Const, Eqn, Var
from transpile.primitives.batching.axis_rules import axis_rule, per_example
from transpile.primitives.numpy.stats import is_none
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim, defufunc_method, lookup
from transpile_runtime import numpy_rows as NR


# ---- ufunc.accumulate -----------------------------------------------------------------------------


def _running_form(fn):
    """np.maximum.accumulate along one axis: x copied, each slice combined with the one
    before it (NumPy's order: the same numbers, NaN propagating as np.maximum does)."""
    def form(lw, eqn):
        if NF._const(eqn, "dtype") is not None or NF._const(eqn, "out") is not None:
            return None
        x, out = eqn.args["x"], eqn.out
        xs, os_ = lw.av(x), lw.avals[out]
        k = NF._axis(NF._const(eqn, "axis", 0), xs.ndim) if xs.ndim else None
        if k is None:
            return None
        return _scan_fn(out, f"{lw.fmt(x)}.astype({NF._dt(os_.dtype)})", fn, k, xs.shape)
    return form


def _scan_fn(out, start, fn, k, shape):
    j = f"{out}_j"
    rest = [f"{out}_i{m}" for m in range(len(shape)) if m != k]

    def at(step):
        items = list(rest)
        items.insert(k, step)
        return ", ".join(items)
    lines = [f"{out} = {start}", f"for {j} in range(1, {int(shape[k])}):"]
    d = 1
    for m, n in enumerate(shape):
        if m != k:
            lines.append("    " * d + f"for {out}_i{m} in range({int(n)}):")
            d += 1
    lines.append("    " * d + f"{out}[{at(j)}] = {fn}({out}[{at(j)}], {out}[{at(j + ' - 1')}])")
    return lines


def _source_loops(lw, eqn, body):
    """Loops over x's positions along the axis (outer loops over the other axes), binding
    {out}_src: the running extremum's source index at the position (kept as s)."""
    x, ans, out = eqn.args["x"], eqn.args["ans"], eqn.out
    xs = lw.av(x)
    if xs is None or lw.av(ans) is None or not xs.ndim:
        return None
    k = NF._axis(NF._const(eqn, "axis", 0), xs.ndim)
    if k is None:
        return None
    rest = [f"{out}_i{m}" for m in range(xs.ndim) if m != k]
    j = f"{out}_j"

    def at(step):
        items = list(rest)
        items.insert(k, step)
        return ", ".join(items)
    lines, d = [], 0
    for m, n in enumerate(xs.shape):
        if m != k:
            lines.append("    " * d + f"for {out}_i{m} in range({int(n)}):")
            d += 1
    X, A = lw.fmt(x), lw.fmt(ans)
    lines += ["    " * d + f"{out}_s = 0",
              "    " * d + f"for {j} in range({int(xs.shape[k])}):"]
    d += 1
    lines += ["    " * d + f"if {X}[{at(j)}] == {A}[{at(j)}] or ({X}[{at(j)}] != {X}[{at(j)}] "
              f"and {A}[{at(j)}] != {A}[{at(j)}]):",
              "    " * (d + 1) + f"{out}_s = {j}"]
    lines += ["    " * d + line for line in body(at(j), at(f"{out}_s"))]
    return lines


def _source_form(lw, eqn):
    out, xs = eqn.out, lw.av(eqn.args["x"])
    loops = _source_loops(lw, eqn, lambda here, src: [f"{out}[{here}] = {out}_s"])
    return None if loops is None else \
        [f"{out} = np.empty({NF._shape(xs.shape)}, np.int64)"] + loops


def _vjp_form(lw, eqn):
    out, ct = eqn.out, eqn.args["ct"]
    os_ = lw.avals[out]
    if lw.av(ct) is None or lw.av(ct).shape != os_.shape:
        return None
    loops = _source_loops(lw, eqn, lambda here, src:
                          [f"{out}[{src}] += {lw.fmt(ct)}[{here}]"])
    return None if loops is None else \
        [f"{out} = np.zeros({NF._shape(os_.shape)}, {NF._dt(os_.dtype)})"] + loops


def _jvp_form(lw, eqn):
    out, t = eqn.out, eqn.args["t"]
    os_ = lw.avals[out]
    if lw.av(t) is None or lw.av(t).shape != os_.shape:
        return None
    loops = _source_loops(lw, eqn, lambda here, src: [f"{out}[{here}] = {lw.fmt(t)}[{src}]"])
    return None if loops is None else \
        [f"{out} = np.empty({NF._shape(os_.shape)}, {NF._dt(os_.dtype)})"] + loops


_ACC = "x, axis=0, dtype=None, out=None"
_AXIS = axis_rule(["axis"])
for _name, _ufunc in [("maximum", np.maximum), ("minimum", np.minimum)]:
    defufunc_method(defprim(
        f"{_name}_accumulate", _ufunc.accumulate, f"np.{_name}.accumulate", _ACC, batch=_AXIS,
        vjp={"x": "rt.running_extremum_vjp(g, x, ans, axis)"},
        jvp={"x": "rt.running_extremum_jvp(x_dot, x, ans, axis)"},
        numba=_running_form(f"np.{_name}"), array_result=True,
        doc=f"np.{_name}.accumulate: the running {_name[:3]} along axis (default 0)"),
        _ufunc, "accumulate")
defprim("running_source", NR.running_source, "rt.running_source", "x, ans, axis=0",
        nondiff=True, batch=per_example, numba=_source_form, sized_by=())
defprim("running_extremum_vjp", NR.running_extremum_vjp, "rt.running_extremum_vjp",
        "ct, x, ans, axis=0", linear=("ct",), batch=per_example,
        vjp={"ct": "rt.running_extremum_jvp(g, x, ans, axis)", "x": "0", "ans": "0"},
        jvp={"x": "0", "ans": "0"}, numba=_vjp_form)
defprim("running_extremum_jvp", NR.running_extremum_jvp, "rt.running_extremum_jvp",
        "t, x, ans, axis=0", linear=("t",), batch=per_example,
        vjp={"t": "rt.running_extremum_vjp(g, x, ans, axis)", "x": "0", "ans": "0"},
        jvp={"x": "0", "ans": "0"}, numba=_jvp_form)
def _axis0(form):
    """np.cumsum's form with the axis given (a ufunc's accumulate defaults to axis 0)."""
    def with_axis(lw, eqn):
        if "axis" not in eqn.args:
            eqn = Eqn(eqn.out, eqn.prim, dict(eqn.args, axis=Const(0)), eqn.loc)
        return form(lw, eqn)
    return with_axis


defufunc_method(defprim(
    "add_accumulate", np.add.accumulate, "np.add.accumulate", _ACC, batch=_AXIS,
    linear=("x",), vjp={"x": "rt.cumsum_vjp(g, x, axis)"}, numba=_axis0(NF.cumsum),
    array_result=True,
    doc="np.add.accumulate: np.cumsum along axis (default 0), in x's dtype"), np.add,
    "accumulate")
defufunc_method(defprim(
    "multiply_accumulate", np.multiply.accumulate, "np.multiply.accumulate", _ACC,
    batch=_AXIS, vjp={"x": "rt.cumsum_vjp(g * ans, x, axis) / x"},
    jvp={"x": "ans * np.cumsum(x_dot / x, axis=axis)"}, numba=_axis0(NF.cumprod),
    array_result=True,
    doc="np.multiply.accumulate: np.cumprod along axis (default 0), in x's dtype"),
    np.multiply, "accumulate")

# ufunc.reduce: the reduction row (its axis defaults to 0)
REDUCE_ROWS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
               np.logical_and: "all", np.logical_or: "any"}


# ---- ufunc.outer: a reshaped to a.shape + (1,) * b.ndim, then the ufunc's own row ------------


def _outer_expand_form(lw, eqn):
    a, os_ = eqn.args["a"], lw.avals[eqn.out]
    av = lw.av(a)
    if av is None:
        return None
    if not av.shape:
        return f"np.full({NF._shape(os_.shape)}, {lw.fmt(a)})" if os_.shape else lw.fmt(a)
    return f"np.ascontiguousarray({lw.fmt(a)}).reshape({NF._shape(os_.shape)})"


outer_expand = defprim("outer_expand", NR.outer_expand, "rt.outer_expand", "a, b",
                       shape_args=("b",), linear=("a",), batch=per_example,
                       vjp={"a": "np.reshape(g, np.shape(a))"}, numba=_outer_expand_form,
                       sized_by=(),
                       view="reshape")


# ---- np.diff(..., prepend=, append=): np.diff of x extended along the axis -------------------


def _extend_parts(lw, eqn, x_text, pre, app, dtype):
    """The texts of prepend, x and append as arrays of the result's dtype (a scalar as one
    slice of x's shape)."""
    xs = lw.av(eqn.args["x"])
    k = NF._axis(NF._const(eqn, "axis", -1), xs.ndim) if xs is not None and xs.ndim else None
    if k is None:
        return None, None
    slab = list(xs.shape)
    slab[k] = 1
    parts = []
    for v, given in ((pre, "prepend"), (None, None), (app, "append")):
        if given is None:          # (no copy where x has the result's dtype already)
            parts.append(x_text if xs.dtype == np.dtype(dtype) else
                         f"{x_text}.astype({NF._dt(dtype)})")
            continue
        if v is None:
            continue
        arg = eqn.args[given]
        av = lw.av(arg) if isinstance(arg, Var) else None
        shape = av.shape if av is not None else np.shape(arg.value)
        if not shape:
            parts.append(f"np.full({NF._shape(tuple(slab))}, {v}, {NF._dt(dtype)})")
        elif len(shape) == xs.ndim:
            parts.append(v if av is not None and av.dtype == np.dtype(dtype) else
                         f"np.asarray({v}).astype({NF._dt(dtype)})")
        else:
            return None, None
    return parts, k


def _diff_extend_form(lw, eqn):
    os_ = lw.avals[eqn.out]
    pre = None if is_none(eqn, "prepend") else lw.fmt(eqn.args["prepend"])
    app = None if is_none(eqn, "append") else lw.fmt(eqn.args["append"])
    parts, k = _extend_parts(lw, eqn, lw.fmt(eqn.args["x"]), pre, app, os_.dtype)
    if parts is None:
        return None
    return f"np.concatenate(({', '.join(parts)},), axis={k})"


def _diff_extend_vjp_form(lw, eqn):
    x, ct, os_ = eqn.args["x"], eqn.args["ct"], lw.avals[eqn.out]
    xs, which = lw.av(x), NF._const(eqn, "which", 0)
    k = NF._axis(NF._const(eqn, "axis", -1), xs.ndim) if xs is not None and xs.ndim else None
    if k is None or which not in (0, 1, 2):
        return None

    def width(name):
        if is_none(eqn, name):
            return 0
        a = eqn.args[name]
        shape = lw.av(a).shape if isinstance(a, Var) else np.shape(a.value)
        return 1 if not shape else int(shape[k])
    lo, n = width("prepend"), int(xs.shape[k])
    span = {0: f"{lo}:{lo + n}", 1: f"0:{lo}", 2: f"{lo + n}:"}[which]
    part = f"{lw.fmt(ct)}[{NF._at(k, xs.ndim, span)}]"
    if which and not os_.shape:
        return f"{NF._dt(os_.dtype)}(np.sum({part}))"
    return f"np.ascontiguousarray({part}).astype({NF._dt(os_.dtype)})"


_EXT = "x, axis=-1, prepend=None, append=None"
diff_extend = defprim(
    "diff_extend", NR.diff_extend, "rt.diff_extend", _EXT, batch=per_example,
    linear=("x", "prepend", "append"),
    vjp={a: f"rt.diff_extend_vjp(g, x, axis, prepend, append, {w})"
         for a, w in (("x", 0), ("prepend", 1), ("append", 2))},
    jvp={a: f"rt.diff_extend_jvp({a}_dot, x, axis, prepend, append, {w})"
         for a, w in (("x", 0), ("prepend", 1), ("append", 2))},
    numba=_diff_extend_form, sized_by=())
defprim("diff_extend_vjp", NR.diff_extend_vjp, "rt.diff_extend_vjp", "ct, " + _EXT + ", which=0",
        linear=("ct",), diff=("ct",), shape_args=("x", "prepend", "append"), batch=per_example,
        vjp={"ct": "rt.diff_extend_jvp(g, x, axis, prepend, append, which)"},
        numba=_diff_extend_vjp_form)
defprim("diff_extend_jvp", NR.diff_extend_jvp, "rt.diff_extend_jvp", "t, " + _EXT + ", which=0",
        linear=("t",), diff=("t",), shape_args=("x", "prepend", "append"), batch=per_example,
        vjp={"t": "rt.diff_extend_vjp(g, x, axis, prepend, append, which)"})


def rewrite(obj, args, kwargs, apply):
    """Calls the normalizer writes with other rows (None: not one of them). `apply(row, args,
    kwargs)` emits a call of a row (a Primitive or its name) and returns its value."""
    ufunc = getattr(obj, "__self__", None)
    if isinstance(ufunc, np.ufunc) and getattr(obj, "__name__", None) in ("outer", "reduce"):
        row = lookup(ufunc)
        if obj.__name__ == "outer":
            if row is None or len(args) != 2 or kwargs or ufunc.nin != 2:
                return None
            return apply(row, [apply("outer_expand", list(args), {}), args[1]], {})
        name = REDUCE_ROWS.get(ufunc)
        if name is None or len(args) < 1:
            return None
        kw = dict(kwargs)
        names = ["axis", "dtype", "out"]
        for v, n in zip(args[1:], names):
            kw[n] = v
        kw.setdefault("axis", Const(0))
        return apply(name, [args[0]], kw)
    if obj is np.allclose:
        names = ["a", "b", "rtol", "atol", "equal_nan"]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if set(bound) - set(names) or "a" not in bound or "b" not in bound:
            return None
        close = apply("isclose", [bound.pop("a"), bound.pop("b")], bound)
        return apply("bool", [apply("all", [close], {})], {})
    if obj in (np.argmax, np.argmin) and "keepdims" in kwargs:
        # keepdims=True along an axis: the reduced axis kept with length 1
        bound = dict(zip(["x", "axis", "out"], args))
        bound.update(kwargs)
        keep, axis = bound.pop("keepdims"), bound.get("axis", Const(None))
        if not isinstance(keep, Const) or not isinstance(axis, Const) or "out" in bound or \
                keep.value and axis.value is None:
            return None
        picked = apply(obj.__name__, [bound["x"]], {"axis": axis})
        return apply("expand_dims", [picked], {"axis": axis}) if keep.value else picked
    if obj is np.diff and ("prepend" in kwargs or "append" in kwargs):
        names = ["x", "n", "axis"]
        bound = dict(zip(names, args))
        bound.update(kwargs)
        axis = bound.get("axis", Const(-1))
        ext = apply("diff_extend", [bound["x"]], {"axis": axis,
                                                  "prepend": bound.get("prepend", Const(None)),
                                                  "append": bound.get("append", Const(None))})
        return apply("diff", [ext], {"n": bound.get("n", Const(1)), "axis": axis})
    return None
