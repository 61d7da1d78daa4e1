"""np.histogram: (counts, edges) as two rows, NumPy's bins (the last one closed) and edges."""
import numpy as np

from transpile.core.ir import Const, TupleArg, Var
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.numpy.stats import is_none
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim
from transpile_runtime import numpy_rows as NR


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
