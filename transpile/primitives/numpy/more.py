"""Rows for NumPy functions met in other people's code: ufunc methods, np.histogram,
np.unravel_index / np.ravel_multi_index, np.isin, the nan-reductions, np.allclose /
np.array_equal, np.diff's prepend / append, and the builtins complex() and round().

ufunc methods (`np.maximum.accumulate(x)` is a bound method, a new object at every access:
registry.defufunc_method keys it by its ufunc and name):

    np.maximum.accumulate / np.minimum.accumulate   a running extremum along axis (default 0);
        the cotangent of each output goes to the element that set it (rt.running_source),
        so the rules are a scatter-add (vjp) and a gather (jvp) of that source
    np.add.accumulate / np.multiply.accumulate      np.cumsum / np.cumprod along axis 0, in
        x's dtype (np.cumsum would widen an int8 to int64)
    ufunc.reduce (REDUCE_ROWS)   the reduction row along axis 0 (np.add.reduce is np.sum)
    ufunc.outer                  the ufunc's own row on rt.outer_expand(a, b) (a reshaped to
        a.shape + (1,) * b.ndim) and b: every binary ufunc row's rules apply
(the normalizer writes the last two, transpile/frontend/normalize/calls.py, with `rewrite`.)

np.diff(x, n, axis, prepend=p, append=a) is np.diff(rt.diff_extend(x, axis, p, a), n, axis)
(also written by `rewrite`), linear in x, p and a.
"""
import numpy as np

from transpile.core.ir import Const, Eqn, TupleArg, Var
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import axis_rule, per_example
from transpile.primitives.numpy.stats import is_none
from transpile.primitives.numpy.reductions import _EXT_JVP, _EXT_VJP
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import by_name, defprim, defufunc_method, lookup
from transpile_runtime import numpy_rows as NR

R = BR.reduction


def _const(eqn, name, default=None):
    a = eqn.args.get(name)
    if a is None:
        return default
    return a.value if isinstance(a, Const) else NF._NOT_CONST


# ---- ufunc.accumulate -----------------------------------------------------------------------------


def _running_form(fn):
    """np.maximum.accumulate along one axis: x copied, each slice combined with the one
    before it (NumPy's order: the same numbers, NaN propagating as np.maximum does)."""
    def form(lw, eqn):
        if _const(eqn, "dtype") is not None or _const(eqn, "out") is not None:
            return None
        x, out = eqn.args["x"], eqn.out
        xs, os_ = lw.av(x), lw.avals[out]
        k = NF._axis(_const(eqn, "axis", 0), xs.ndim) if xs.ndim else None
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
    k = NF._axis(_const(eqn, "axis", 0), xs.ndim)
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
    k = NF._axis(_const(eqn, "axis", -1), xs.ndim) if xs is not None and xs.ndim else None
    if k is None:
        return None, None
    slab = list(xs.shape)
    slab[k] = 1
    parts = []
    for v, given in ((pre, "prepend"), (None, None), (app, "append")):
        if given is None:
            parts.append(f"{x_text}.astype({NF._dt(dtype)})")
            continue
        if v is None:
            continue
        arg = eqn.args[given]
        av = lw.av(arg) if isinstance(arg, Var) else None
        shape = av.shape if av is not None else np.shape(arg.value)
        if not shape:
            parts.append(f"np.full({NF._shape(tuple(slab))}, {v}, {NF._dt(dtype)})")
        elif len(shape) == xs.ndim:
            parts.append(f"np.asarray({v}).astype({NF._dt(dtype)})")
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
    xs, which = lw.av(x), _const(eqn, "which", 0)
    k = NF._axis(_const(eqn, "axis", -1), xs.ndim) if xs is not None and xs.ndim else None
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


# ---- np.histogram: (counts, edges), two rows -----------------------------------------------------

_HIST = "x, bins=10, range=None, density=None, weights=None"


def _hist_parts(bound, const):
    return [("histogram_counts", {}), ("histogram_edges", {})]


histogram = defprim("histogram", np.histogram, "np.histogram", _HIST, nondiff=True,
                    batch=per_example, sized_by=("bins",))
histogram.multi = _hist_parts


def _edge_types(lw, eqn):
    """(the bins' dtype, the type np.linspace computes the edges in): NumPy's
    np.result_type(first_edge, last_edge, x) (an integer: float64), and first_edge /
    last_edge's own (x's min and max, NumPy scalars of x's dtype; or the range's values,
    Python scalars weak) made inexact."""
    xs = lw.av(eqn.args["x"])
    r = eqn.args.get("range")
    if isinstance(r, Const) and r.value is not None:
        edges = list(r.value)
    elif isinstance(r, TupleArg):
        edges = []
        for v in r.items:
            av = lw.av(v) if isinstance(v, Var) else None
            edges.append(v.value if isinstance(v, Const) else
                         (av.dtype.type(0).item() if av.weak else av.dtype.type(0)))
    else:
        edges = [xs.dtype.type(0)] * 2
    t = np.result_type(*edges, np.zeros(1, xs.dtype))
    lin = np.result_type(*edges)
    inexact = [np.dtype(d) if np.issubdtype(d, np.inexact) else np.dtype(np.float64)
               for d in (t, lin)]
    return inexact[0], inexact[1]


def _hist_lines(lw, eqn, want):
    """NumPy's np.histogram (numpy/lib/_histograms_impl.py) for an int bins (uniform bins:
    the index from the value, moved by one where it falls outside its computed bin's edges)
    or an array of edges (searchsorted, the last bin closed), written as loops."""
    if not (is_none(eqn, "density") and is_none(eqn, "weights")):
        return None
    x, out = eqn.args["x"], eqn.out
    xs = lw.av(x)
    if xs is None or xs.dtype.kind not in "biuf":
        return None
    X = f"{out}_x"
    lines = [f"{X} = np.ascontiguousarray({lw.fmt(x)}).ravel()"]
    bins = eqn.args.get("bins", Const(10))
    bv = lw.av(bins) if isinstance(bins, Var) else None
    if bv is not None and bv.ndim == 1:
        E, n = f"{out}_e", f"{int(bv.shape[0]) - 1}"
        lines += [f"{E} = {lw.fmt(bins)}",
                  f"for {out}_k in range({E}.shape[0] - 1):",
                  f"    if {E}[{out}_k + 1] < {E}[{out}_k]:",
                  "        raise ValueError('`bins` must increase monotonically, when an "
                  "array')"]
        if want == "edges":
            return lines[1:] + [f"{out} = {E}.copy()"]
        lines += [f"{out} = np.zeros({n}, np.int64)",
                  f"for {out}_v in {X}:",
                  f"    if {out}_v >= {E}[0] and {out}_v <= {E}[{n}]:",
                  f"        {out}_b = np.searchsorted({E}, {out}_v, 'right') - 1",
                  f"        if {out}_b >= {n}:",
                  f"            {out}_b = {n} - 1",
                  f"        {out}[{out}_b] += 1"]
        return lines
    if not isinstance(bins, Const) or not isinstance(bins.value, (int, np.integer)) or \
            isinstance(bins.value, bool) or bins.value < 1:
        return None
    n, (t, lin) = int(bins.value), _edge_types(lw, eqn)
    T, L = NF._dt(t), NF._dt(lin)
    lo, hi = f"{out}_lo", f"{out}_hi"
    rng = eqn.args.get("range", Const(None))
    if isinstance(rng, Const) and rng.value is None:
        lines += [f"if {X}.shape[0] == 0:",
                  f"    {lo}, {hi} = 0.0, 1.0",
                  "else:",
                  f"    {lo}, {hi} = float({X}.min()), float({X}.max())",
                  f"if not (np.isfinite({lo}) and np.isfinite({hi})):",
                  "    raise ValueError('autodetected range of [' + str(" + lo + ") + ', ' + "
                  "str(" + hi + ") + '] is not finite')"]
    else:
        items = rng.items if isinstance(rng, TupleArg) else \
            [Const(v) for v in rng.value] if isinstance(rng, Const) else None
        if items is None or len(items) != 2:
            return None
        lines += [f"{lo}, {hi} = float({lw.fmt(items[0])}), float({lw.fmt(items[1])})",
                  f"if {lo} > {hi}:",
                  "    raise ValueError('max must be larger than min in range parameter.')",
                  f"if not (np.isfinite({lo}) and np.isfinite({hi})):",
                  "    raise ValueError('supplied range of [' + str(" + lo + ") + ', ' + "
                  "str(" + hi + ") + '] is not finite')"]
    E = f"{out}_e" if want == "counts" else out
    lines += [f"if {lo} == {hi}:",
              f"    {lo}, {hi} = {lo} - 0.5, {hi} + 0.5",
              # np.linspace(lo, hi, n + 1) in the edges' own type, the end exact, then in
              # the bins' dtype
              f"{out}_step = ({L}({hi}) - {L}({lo})) / {L}({n})",
              f"{E} = np.empty({n + 1}, {L})",
              f"for {out}_k in range({n + 1}):",
              f"    {E}[{out}_k] = {L}({out}_k) * {out}_step + {L}({lo})",
              f"{E}[{n}] = {L}({hi})",
              f"{E} = {E}.astype({T})"]
    if want == "edges":
        return lines
    lines += [f"{out} = np.zeros({n}, np.int64)",
              f"{out}_den = {T}({hi} - {lo})",
              f"for {out}_v in {X}:",
              f"    if {out}_v >= {lo} and {out}_v <= {hi}:",
              f"        {out}_a = {T}({out}_v)",
              f"        {out}_b = int(({out}_a - {T}({lo})) / {out}_den * {T}({n}))",
              f"        if {out}_b == {n}:",
              f"            {out}_b -= 1",
              f"        if {out}_a < {E}[{out}_b]:",
              f"            {out}_b -= 1",
              f"        elif {out}_b != {n - 1} and {out}_a >= {E}[{out}_b + 1]:",
              f"            {out}_b += 1",
              f"        {out}[{out}_b] += 1"]
    return lines


defprim("histogram_counts", NR.histogram_counts, "rt.histogram_counts", _HIST, nondiff=True,
        batch=per_example, numba=lambda lw, eqn: _hist_lines(lw, eqn, "counts"),
        sized_by=("bins",))
defprim("histogram_edges", NR.histogram_edges, "rt.histogram_edges", _HIST, nondiff=True,
        batch=per_example, numba=lambda lw, eqn: _hist_lines(lw, eqn, "edges"),
        sized_by=("bins",))


# ---- np.unravel_index (one row per dimension) and np.ravel_multi_index ---------------------------


def _shape_const(eqn, name):
    s = eqn.args.get(name)
    if isinstance(s, Const):
        v = s.value
        return (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(d) for d in v)
    if isinstance(s, TupleArg) and all(isinstance(d, Const) for d in s.items):
        return tuple(int(d.value) for d in s.items)
    return None


unravel_index = defprim("unravel_index", np.unravel_index, "np.unravel_index",
                        "indices, shape, order='C'", nondiff=True, batch=per_example,
                        sized_by=())
unravel_index.multi = lambda bound, const: [
    ("unravel_part", {"k": k}) for k in range(len(np.atleast_1d(const(bound["shape"]))))]


def _unravel_form(lw, eqn):
    shape, idx, out = _shape_const(eqn, "shape"), eqn.args["indices"], eqn.out
    k = _const(eqn, "k", 0)
    if shape is None or _const(eqn, "order", "C") not in ("C", "F") or k is NF._NOT_CONST:
        return None
    dims = shape if _const(eqn, "order", "C") == "C" else shape[::-1]
    kk = k if _const(eqn, "order", "C") == "C" else len(shape) - 1 - k
    stride = int(np.prod(dims[kk + 1:], dtype=np.int64))
    size = int(np.prod(shape, dtype=np.int64))
    av = lw.av(idx) if isinstance(idx, Var) else None
    I = lw.fmt(idx)
    check = (f"if {{v}} < -{size} or {{v}} >= {size}:",
             f"    raise ValueError('index ' + str({{v}}) + ' is out of bounds for array with "
             f"size {size}')")
    check = (check[0].replace(f"< -{size}", "< 0"), check[1])     # (NumPy: no negative index)
    if av is None or not av.shape:
        v = f"{out}_v"
        return [f"{v} = np.int64({I})", check[0].format(v=v), check[1].format(v=v),
                f"{out} = ({v} // {stride}) % {int(dims[kk])}"]
    v = f"{out}_v"
    return [f"{out} = np.empty({NF._shape(av.shape)}, np.int64)",
            f"{out}_f = {out}.ravel()",
            f"for {out}_k, {v} in enumerate(np.ascontiguousarray({I}).ravel()):",
            "    " + check[0].format(v=v),
            "    " + check[1].format(v=v),
            f"    {out}_f[{out}_k] = ({v} // {stride}) % {int(dims[kk])}"]


defprim("unravel_part", NR.unravel_part, "rt.unravel_part", "indices, shape, order='C', k=0",
        nondiff=True, batch=per_example, numba=_unravel_form, sized_by=())


def _ravel_multi_form(lw, eqn):
    dims, mi = _shape_const(eqn, "dims"), eqn.args["multi_index"]
    if dims is None or not isinstance(mi, TupleArg) or len(mi.items) != len(dims) or \
            _const(eqn, "mode", "raise") != "raise" or _const(eqn, "order", "C") != "C":
        return None
    out = eqn.out
    avs = [lw.av(v) if isinstance(v, Var) else None for v in mi.items]
    shapes = {a.shape for a in avs if a is not None}
    if len(shapes) > 1:
        return None
    shape = shapes.pop() if shapes else ()
    strides = [int(np.prod(dims[k + 1:], dtype=np.int64)) for k in range(len(dims))]
    bad = "raise ValueError('invalid entry in coordinates array')"
    if not shape:
        terms, lines = [], []
        for k, v in enumerate(mi.items):
            t = f"np.int64({lw.fmt(v)})"
            lines += [f"if {t} < 0 or {t} >= {dims[k]}:", f"    {bad}"]
            terms.append(f"{t} * {strides[k]}")
        return lines + [f"{out} = {' + '.join(terms)}"]
    flat = [f"np.ascontiguousarray({lw.fmt(v)}).ravel()" for v in mi.items]
    lines = [f"{out}_m{k} = {f}" for k, f in enumerate(flat)]
    lines += [f"{out} = np.empty({NF._shape(shape)}, np.int64)", f"{out}_f = {out}.ravel()",
              f"for {out}_k in range({out}_f.shape[0]):", f"    {out}_s = np.int64(0)"]
    for k in range(len(dims)):
        lines += [f"    {out}_c = np.int64({out}_m{k}[{out}_k])",
                  f"    if {out}_c < 0 or {out}_c >= {dims[k]}:", f"        {bad}",
                  f"    {out}_s += {out}_c * {strides[k]}"]
    return lines + [f"    {out}_f[{out}_k] = {out}_s"]


defprim("ravel_multi_index", np.ravel_multi_index, "np.ravel_multi_index",
        "multi_index, dims, mode='raise', order='C'", nondiff=True, batch=per_example,
        numba=_ravel_multi_form, sized_by=())


# ---- np.isin ---------------------------------------------------------------------------------------


def _isin_form(lw, eqn):
    if _const(eqn, "kind") is not None or _const(eqn, "invert", False) not in (True, False):
        return None
    a, b, out = eqn.args["element"], eqn.args["test_elements"], eqn.out
    av, bv = (lw.av(v) if isinstance(v, Var) else None for v in (a, b))
    if bv is None or av is None:
        return None
    hit = "not " if _const(eqn, "invert", False) else ""
    srt = f"{out}_t"
    lines = [f"{srt} = np.sort(np.ascontiguousarray({lw.fmt(b)}).ravel())"]
    find = (f"{out}_j = np.searchsorted({srt}, {{v}})",
            f"{{dst}} = {hit}({out}_j < {srt}.shape[0] and {srt}[min({out}_j, {srt}.shape[0] - "
            f"1)] == {{v}})")
    if not av.shape:
        return lines + [find[0].format(v=lw.fmt(a)),
                        find[1].format(v=lw.fmt(a), dst=out)]
    return lines + [f"{out} = np.empty({NF._shape(av.shape)}, np.bool_)",
                    f"{out}_f = {out}.ravel()",
                    f"for {out}_k, {out}_v in enumerate(np.ascontiguousarray({lw.fmt(a)}).ravel()):",
                    "    " + find[0].format(v=f"{out}_v"),
                    "    " + find[1].format(v=f"{out}_v", dst=f"{out}_f[{out}_k]")]


defprim("isin", np.isin, "np.isin", "element, test_elements, assume_unique=False, invert=False, "
        "*, kind=None", nondiff=True, batch=per_example, numba=_isin_form, bool_result=True,
        sized_by=())


# ---- np.allclose, np.array_equal ------------------------------------------------------------------


# np.allclose(a, b, ...) is written bool(np.all(np.isclose(a, b, ...))), as NumPy computes it
# (`rewrite`)


def _array_equal_form(lw, eqn):
    a, b, out = eqn.args["a1"], eqn.args["a2"], eqn.out
    sa = lw.av(a).shape if isinstance(a, Var) else np.shape(a.value)
    sb = lw.av(b).shape if isinstance(b, Var) else np.shape(b.value)
    if sa != sb:
        return "False"      # shapes differ: False, as in NumPy
    nan = _const(eqn, "equal_nan", False)
    if nan not in (True, False):
        return None
    x, y = f"{out}_x", f"{out}_y"
    same = f"{x} == {y}" + (f" or ({x} != {x} and {y} != {y})" if nan else "")
    it = (f"zip(np.ascontiguousarray({lw.fmt(a)}).ravel(), "
          f"np.ascontiguousarray({lw.fmt(b)}).ravel())") if sa else \
        f"(({lw.fmt(a)}, {lw.fmt(b)}),)"
    return [f"{out} = True", f"for {x}, {y} in {it}:", f"    if not ({same}):",
            f"        {out} = False", "        break"]


defprim("array_equal", np.array_equal, "np.array_equal", "a1, a2, equal_nan=False",
        nondiff=True, batch=per_example, numba=_array_equal_form, bool_result=True,
        scalar_result=True, sized_by=())


# ---- nan-reductions ---------------------------------------------------------------------------------

_NAN = "np.isnan(x)"
_COUNT = "np.sum(~np.isnan(x), axis=axis, keepdims=keepdims)"
_MASKED_DOT = f"np.where({_NAN}, 0.0, x_dot)"
_CENTER = f"np.where({_NAN}, 0.0, x - np.nanmean(x, axis=axis, keepdims=True))"


_NSIG = "x, axis=None, dtype=None, out=None, keepdims=False"
defprim("nanmean", np.nanmean, "np.nanmean", _NSIG, batch=R, reduction=True,
        vjp={"x": f"np.where({_NAN}, 0.0, rt.sum_grad(g / {_COUNT}, x, axis, keepdims))"},
        jvp={"x": f"np.sum({_MASKED_DOT}, axis=axis, keepdims=keepdims) / {_COUNT}"},
        numba=NF.nan_whole("nanmean"))
_VSIG = "x, axis=None, dtype=None, out=None, ddof=0, keepdims=False"
defprim("nanvar", np.nanvar, "np.nanvar", _VSIG, batch=R, reduction=True,
        vjp={"x": f"rt.sum_grad(g / ({_COUNT} - ddof), x, axis, keepdims) * 2 * {_CENTER}"},
        jvp={"x": f"np.sum(2 * {_CENTER} * {_MASKED_DOT}, axis=axis, keepdims=keepdims) / "
                  f"({_COUNT} - ddof)"},
        numba=NF.nan_whole("nanvar", ddof=True))
defprim("nanstd", np.nanstd, "np.nanstd", _VSIG, batch=R, reduction=True,
        vjp={"x": f"rt.sum_grad(g / (ans * ({_COUNT} - ddof)), x, axis, keepdims) * {_CENTER}"},
        jvp={"x": f"np.sum({_CENTER} * {_MASKED_DOT}, axis=axis, keepdims=keepdims) / "
                  f"(({_COUNT} - ddof) * ans)"},
        numba=NF.nan_whole("nanstd", ddof=True))
defprim("nanprod", np.nanprod, "np.nanprod", _NSIG, batch=R, reduction=True,
        vjp={"x": f"np.where({_NAN}, 0.0, rt.sum_grad(g * ans, x, axis, keepdims) / "
                  "np.where(np.isnan(x), 1.0, x))"},
        jvp={"x": f"np.sum({_MASKED_DOT} * rt.sum_grad(ans, x, axis, keepdims) / "
                  "np.where(np.isnan(x), 1.0, x), axis=axis, keepdims=keepdims)"},
        numba=NF.nan_whole("nanprod"))
_MSIG = "x, axis=None, out=None, keepdims=False"
for _name in ("nanmax", "nanmin"):
    defprim(_name, getattr(np, _name), f"np.{_name}", _MSIG, batch=R, reduction=True,
            vjp=_EXT_VJP, jvp=_EXT_JVP, numba=NF.nan_whole(_name))
for _name in ("nanargmax", "nanargmin"):
    defprim(_name, getattr(np, _name), f"np.{_name}", "x, axis=None", nondiff=True,
            batch=R, int_result=True, numba=NF.nan_whole(_name))
defprim("nancumsum", np.nancumsum, "np.nancumsum", "x, axis=None, dtype=None, out=None",
        batch=_AXIS, linear=("x",),
        vjp={"x": f"np.where({_NAN}, 0.0, rt.cumsum_vjp(g, x, axis))"},
        jvp={"x": f"np.cumsum({_MASKED_DOT}, axis=axis)"}, numba=NF.nan_whole("nancumsum"),
        array_result=True)


# ---- builtins complex(a, b) and round(x[, n]) ---------------------------------------------------

complex_ = defprim("complex", [NR.complex_of, complex], "rt.complex_of", "real=0.0, imag=0.0",
                   batch=BR.elementwise,
                   vjp={"real": "np.real(g)", "imag": "np.real(1j * g)"},
                   jvp={"real": "real_dot + 0j", "imag": "1j * imag_dot"},
                   lower="complex({real}, {imag})", uncast=("real", "imag"), fresh=True,
                   construct="complex(...)")


def _round_form(lw, eqn):
    """round(x): the nearest int, ties to even; round(x, n): NumPy's rounding of a NumPy
    scalar, Python's (correctly rounded decimal) of a Python float, in object mode."""
    x, out = eqn.args["x"], eqn.out
    av = lw.av(x) if isinstance(x, Var) else None
    xt = lw.fmt(x)
    if av is not None and av.shape:
        return None
    kind = av.dtype.kind if av is not None else np.asarray(x.value).dtype.kind
    weak = av.weak if av is not None else isinstance(x.value, (int, float))
    if kind not in "biuf":
        return None
    if is_none(eqn, "ndigits"):
        if kind in "biu":
            return xt
        # Python's errors where the int cannot be had (an int64 holds below 2**63)
        return [f"if {xt} != {xt}:",
                "    raise ValueError('cannot convert float NaN to integer')",
                f"if abs({xt}) == np.inf:",
                "    raise OverflowError('cannot convert float infinity to integer')",
                f"if abs({xt}) >= 9.223372036854775e18:",
                "    raise OverflowError('round(): the int is 2**63 or more, which compiled "
                "code cannot hold (Python gives a larger int)')",
                f"{out} = int(np.rint({xt}))"]
    n = _const(eqn, "ndigits")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        return None
    n = int(n)
    os_ = lw.avals[out]
    if weak:          # Python's round: exact decimal rounding (Numba's is not)
        typ = "int64" if kind in "biu" else "float64"
        return [f"with objmode({out}={typ!r}):", f"    {out} = round({xt}, {n})"]
    if kind in "biu":
        return f"{NF._dt(os_.dtype)}(np_round_down({xt}, {10.0 ** -n!r}))" if n < 0 else xt
    return f"{NF._dt(os_.dtype)}(np_round_up({xt}, {10.0 ** n!r}))" if n > 0 else \
        (f"{NF._dt(os_.dtype)}(np_rint_keep_int({xt}))" if n == 0 else
         f"{NF._dt(os_.dtype)}(np_round_down({xt}, {10.0 ** -n!r}))")


builtin_round = defprim("builtin_round", [NR.builtin_round, round], "rt.builtin_round",
                        "x, ndigits=None", nondiff=True, batch=per_example, numba=_round_form,
                        sized_by=(),
                        construct="round(...)")
