"""np.unravel_index (one row per dimension) and np.ravel_multi_index, with NumPy's errors;
np.triu_indices / np.tril_indices (one row for the row indices, one for the columns)."""
import numpy as np

from transpile.core.ir import Const, TupleArg, Var
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim
from transpile_runtime import numpy_rows as NR


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
    k = NF._const(eqn, "k", 0)
    if shape is None or NF._const(eqn, "order", "C") not in ("C", "F") or k is NF._NOT_CONST:
        return None
    dims = shape if NF._const(eqn, "order", "C") == "C" else shape[::-1]
    kk = k if NF._const(eqn, "order", "C") == "C" else len(shape) - 1 - k
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
            NF._const(eqn, "mode", "raise") != "raise" or NF._const(eqn, "order", "C") != "C":
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


# ---- np.triu_indices / np.tril_indices: (rows, columns) of a triangle of an n-by-m matrix -------

def _triangle_form(lw, eqn):
    """Numba's np.triu_indices / np.tril_indices, then the part asked for."""
    fn = "np.triu_indices" if NF._const(eqn, "upper", True) else "np.tril_indices"
    which = NF._const(eqn, "which", 0)
    if which not in (0, 1):
        return None
    args = [lw.fmt(eqn.args["n"])]
    if "k" in eqn.args or "m" in eqn.args:
        args.append(lw.fmt(eqn.args["k"]) if "k" in eqn.args else "0")
    if "m" in eqn.args and NF._const(eqn, "m", None) is not None:
        args.append(lw.fmt(eqn.args["m"]))
    return f"{fn}({', '.join(args)})[{which}]"


for _name, _upper in (("triu_indices", True), ("tril_indices", False)):
    defprim(_name, getattr(np, _name), f"np.{_name}", "n, k=0, m=None", nondiff=True,
            batch=per_example).multi = (
        lambda bound, const, _upper=_upper: [("triangle_part", {"upper": _upper, "which": w})
                                             for w in (0, 1)])
defprim("triangle_part", NR.triangle_part, "rt.triangle_part",
        "n, k=0, m=None, upper=True, which=0", nondiff=True, batch=per_example,
        numba=_triangle_form)
