"""The Numba kernel of one fused group (optimize/fusion.py), for lowering/cpu/module.py's Lowerer.

A `FusedGroup` becomes one @njit function: a loop nest over the group's shape (prange over the
outer axis when the array is large, or over chunks of it for full reductions), inputs read
once per element (with broadcasting), one scalar expression per elementwise equation,
accumulators for the reductions (a local per outer index when the reduced axes are the
innermost ones), and only the values needed later written out. `kernel(lw, g)` appends the
kernel's source to `lw.kernels` and returns the lines that call it in the main function.

Loop bounds are read from the kernel's own arrays (`range(out.shape[0])`), so one compiled
kernel serves every batch size; which inputs broadcast (a dimension of 1) is in the text.
"""
import re

import numpy as np

from transpile.core.ir import Const, Var
from transpile.lowering.cpu.text import (SizeNamer, atom_const_text, dtype_ctor, product_text,
                                         shape_text, size_text, typed, unsigned_operand)
from transpile.optimize.fusion import FusedGroup, scalar_template
from transpile.primitives.numpy.arrays import roll

HUGE_MIN_BYTES = 1 << 22      # transpile_runtime.backends.numba_memory.large_pages hints from 4 MiB


def kernel(lw, g: FusedGroup):
    avals = lw.avals
    kname = f"{lw.name}__{g.name}"
    S = g.shape
    nd = len(S)
    size = int(np.prod(S)) if S else 1
    produced = g.produced()
    arrays_in = [n for n in g.inputs if avals[n].shape]
    full = g.axes is not None and len(g.axes) == nd
    axis_reds = [] if full else g.reductions
    full_reds = g.reductions if full else []
    parallel = size >= lw.parallel_min and S[0] >= 2 and lw.threads > 1
    if axis_reds and 0 in g.axes:
        parallel = False
    params = list(g.inputs) + list(g.outputs) + [f"acc_{r.out}" for r in axis_reds]
    # the loop's sizes, read from arrays that span them (outputs first)
    spans = [(n, avals[n].shape) for n in list(g.outputs) + arrays_in
             if len(avals[n].shape) == nd and all(a == b or a == 1 for a, b in
                                                  zip(avals[n].shape, S))]
    with SizeNamer(spans):
        L = _kernel_text(lw, g, kname, S, nd, parallel, params, arrays_in, full, axis_reds)
    kname = _shared(lw, kname, "\n".join(L) + "\n")
    lines = _call_lines(g, avals, kname, S, nd, params, axis_reds, full_reds)
    for o, (x, index) in g.stores.items():     # the loop writes into the view x[index]
        k = lines.index(f"{o} = np.empty({shape_text(S)}, {dtype_ctor(avals[o].dtype)})")
        whole = all(it is Ellipsis or isinstance(it, Const) and it.value is Ellipsis
                    for it in index.items)        # (Numba has no x[...]: x itself)
        lines[k] = f"{o} = {x}" if whole else f"{o} = {x}[{lw.index(index, None)}]"
        if k + 1 < len(lines) and lines[k + 1] == f"large_pages({o})":
            del lines[k + 1]
    return lines


def _kernel_text(lw, g, kname, S, nd, parallel, params, arrays_in, full, axis_reds):
    avals = lw.avals
    L = []
    L.append(f"@njit(nogil=True, cache=True, error_model='numpy', fastmath=FASTMATH"
             f"{', parallel=True' if parallel else ''})")
    L.append(f"def {kname}({', '.join(params)}):")
    L.append(f'    """{describe(g)}"""')
    idx = [f"i{j}" for j in range(nd)]

    def read(name):
        a = avals[name]
        if not a.shape:
            return name
        off = nd - len(a.shape)
        ix = ["0" if (n == 1 and S[off + k] != 1) else idx[off + k]
              for k, n in enumerate(a.shape)]
        return f"{name}[{', '.join(ix)}]"

    body = []
    local = {}
    for n in arrays_in:
        body.append(f"{n}__e = {read(n)}")
        local[n] = f"{n}__e"
    for n in g.inputs:
        if n not in local:
            local[n] = n

    def operand(a, dtype, out_dtype):
        # (an element of an array too: NumPy computes int32 with float32 in float64, where
        # Numba's scalar forms may pick float32)
        if isinstance(a, Var):
            av = avals.get(a.name)
            if dtype is not None and av is not None and \
                    av.dtype != np.dtype(dtype) and _promoted(av.dtype, dtype):
                return f"{dtype_ctor(dtype)}({local[a.name]})"
            if unsigned_operand(a, av, out_dtype):
                return f"np.uint64({local[a.name]})"
            return local[a.name]
        return atom_const_text(a, dtype or unsigned_operand(a, None, out_dtype))

    for e in g.eqns:
        out_av = avals[e.out]
        if e.prim is roll:        # x at the index shifted back along the axis (fusion.py)
            local[e.out] = f"{e.out}__e"
            body.append(f"{e.out}__e = {_rolled_read(e, S, idx)}")
            continue
        # the row's loop form for this dtype where it has one (exp32/exp64 vectorize)
        tmpl = e.prim.lower_loop.get(np.dtype(out_av.dtype).name) or scalar_template(e)
        # operands typed like the result for float results (NumPy 2 weak scalars)
        cdt = out_av.dtype if np.issubdtype(out_av.dtype, np.inexact) else None
        vals = {}
        for k, a in e.args.items():
            if isinstance(a, (Var, Const)):
                vals[k] = operand(a, None if k in e.prim.uncast else cdt, out_av.dtype)   # (where's condition)
        expr = tmpl.replace("T(", f"{dtype_ctor(out_av.dtype)}(").format(**vals) \
            if "T(" in tmpl else tmpl.format(**vals)
        if not e.prim.truth:      # a truth value is stored as the bool it is
            expr = typed(expr, tmpl, out_av.dtype,
                         [_operand_dtype(a, avals, cdt) for a in e.args.values()])
        local[e.out] = f"{e.out}__e"
        body.append(f"{e.out}__e = {expr}")
    ix_all = ", ".join(idx)
    for o in g.outputs:
        body.append(f"{o}[{ix_all}] = {local[o]}")
    # reductions
    pre, post, rets, rowpre = [], [], [], []
    trailing = bool(axis_reds) and min(g.axes) >= 1 and \
        tuple(g.axes) == tuple(range(min(g.axes), nd))
    for r in g.reductions:
        x = r.args["x"]
        v = local[x.name] if x.name in local else read(x.name)
        kind = r.prim.reduce
        acc_dt = _acc_dtype(avals[x.name].dtype, kind)
        if full:
            a = f"a_{r.out}"
            body.append(_accumulate(kind, a, v))
            pre.append((a, _init(kind, acc_dt), r))
        elif trailing:
            a = f"a_{r.out}"
            body.append(_accumulate(kind, a, v))
            rowpre.append((a, _init(kind, acc_dt), r))
        else:
            kix = ", ".join("0" if j in g.axes else idx[j] for j in range(nd))
            body.append(_accumulate(kind, f"acc_{r.out}[{kix}]", v))
    L_body = []
    if trailing:
        # reduced axes are the innermost ones: one local accumulator per outer index
        k = min(g.axes)
        ind = ""
        for j in range(k):
            rng = "prange" if (j == 0 and parallel) else "range"
            L_body.append(f"{ind}for i{j} in {rng}({size_text(S[j])}):")
            ind += "    "
        for a, init, r in rowpre:
            L_body.append(f"{ind}{a} = {init}")
        ind2 = ind
        for j in range(k, nd):
            L_body.append(f"{ind2}for i{j} in range({size_text(S[j])}):")
            ind2 += "    "
        L_body += [ind2 + b for b in body]
        kix = ", ".join("0" if j in g.axes else idx[j] for j in range(nd))
        for a, init, r in rowpre:
            L_body.append(f"{ind}acc_{r.out}[{kix}] = {a}")
    elif full and parallel:
        P = lw.threads
        for a, init, r in pre:
            L_body.append(f"parts_{r.out} = np.empty({P}, {dtype_ctor(_acc_dtype(avals[r.args['x'].name].dtype, r.prim.reduce))})")
        L_body.append(f"for c in prange({P}):")
        for a, init, r in pre:
            L_body.append(f"    {a} = {init}")
        n0 = size_text(S[0])
        L_body.append(f"    for i0 in range(c * {n0} // {P}, (c + 1) * {n0} // {P}):")
        ind = "        "
        for j in range(1, nd):
            L_body.append(f"{ind}for i{j} in range({size_text(S[j])}):")
            ind += "    "
        L_body += [ind + b for b in body]
        for a, init, r in pre:
            L_body.append(f"    parts_{r.out}[c] = {a}")
        for a, init, r in pre:
            L_body.append(f"{a} = {init}")
            L_body.append(f"for c in range({P}):")
            L_body.append("    " + _accumulate(r.prim.reduce, a, f"parts_{r.out}[c]"))
    else:
        for a, init, r in pre:
            L_body.append(f"{a} = {init}")
        ind = ""
        for j in range(nd):
            rng = "prange" if (j == 0 and parallel) else "range"
            L_body.append(f"{ind}for i{j} in {rng}({size_text(S[j])}):")
            ind += "    "
        L_body += [ind + b for b in body]
    for a, init, r in pre:
        res = f"{a} / ({product_text(S)})" if r.prim.reduce == "mean" else a
        rets.append(f"{dtype_ctor(avals[r.out].dtype)}({res})")
    if rets:
        L_body.append(f"return ({', '.join(rets)},)")
    L += ["    " + b for b in L_body]
    return L


def _rolled_read(e, S, idx):
    """np.roll(x, shift, axis)'s element at the loop index: x at (i - shift) mod n on axis."""
    nd = len(S)
    k = e.args["axis"].value % nd
    n = int(S[k])
    s = int(e.args["shift"].value) % n if n else 0
    ix = list(idx)
    if s:
        i = idx[k]
        ix[k] = f"({i} - {s} if {i} >= {s} else {i} + {size_text(n)} - {s})"
    return f"{e.args['x'].name}[{', '.join(ix)}]"


def describe(g):
    """The group's description with its shape as the code reads it."""
    text = g.describe()
    plain = f"over {g.shape}:"
    return text.replace(plain, f"over {shape_text(g.shape)}:", 1) if g.shape else text


def may_be_large(shape, dtype):
    """Can an array of this shape reach huge-page size (4 MiB, `large_pages`)? Yes where its
    sizes are read at run time (another call may be larger)."""
    if re.search(r"[A-Za-z_]", shape_text(shape)):
        return True
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize >= HUGE_MIN_BYTES


def weak_int_checks(eqns, avals, fmt):
    """NumPy 2 raises OverflowError where a Python int operand does not fit the integer
    result's dtype (int8 array + 300): the checks, before the arithmetic (a Python int known
    only at run time; a constant one never compiles, NumPy raises)."""
    lines, seen = [], set()
    for e in eqns:
        out = avals.get(e.out)
        if out is None or out.dtype.kind not in "iu" or out.dtype.itemsize == 8 and \
                out.dtype.kind == "i":
            continue
        info = np.iinfo(out.dtype)
        for a in e.args.values():
            av = avals.get(a.name) if isinstance(a, Var) else None
            if av is None or not av.weak or av.dtype.kind not in "iu" or a.name in seen:
                continue
            seen.add(a.name)
            v = fmt(a)
            lines += [f"if {v} < {info.min} or {v} > {info.max}:",
                      f"    raise OverflowError('Python integer ' + str({v}) + ' out of bounds "
                      f"for {out.dtype.name}')"]
    return lines


def _call_lines(g, avals, kname, S, nd, params, axis_reds, full_reds):
    """The lines that call the kernel in the main function."""
    lines = weak_int_checks(g.eqns, avals, lambda a: a.name)
    for o in g.outputs:
        lines.append(f"{o} = np.empty({shape_text(S)}, {dtype_ctor(avals[o].dtype)})")
        if may_be_large(S, avals[o].dtype):
            lines.append(f"large_pages({o})")
    for r in axis_reds:
        acc_dt = _acc_dtype(avals[r.args['x'].name].dtype, r.prim.reduce)
        kshape = tuple(1 if j in g.axes else S[j] for j in range(nd))
        lines.append(f"acc_{r.out} = np.full({shape_text(kshape)}, "
                     f"{_init(r.prim.reduce, acc_dt)}, {dtype_ctor(acc_dt)})")
    call = f"{kname}({', '.join(params)})"
    if full_reds:
        names = [r.out if not avals[r.out].shape else f"{r.out}__s" for r in full_reds]
        outs = ", ".join(names)
        lines.append(f"{outs}, = {call}" if len(full_reds) == 1 else f"{outs} = {call}")
        for r, n in zip(full_reds, names):
            if n != r.out:   # keepdims=True: a (1, ..., 1) array
                lines.append(f"{r.out} = np.full({shape_text(avals[r.out].shape)}, {n}, "
                             f"{dtype_ctor(avals[r.out].dtype)})")
    else:
        lines.append(call)
    for r in axis_reds:
        out_av = avals[r.out]
        val = f"acc_{r.out}"
        if r.prim.reduce == "mean":
            val = f"({val} / ({product_text([S[j] for j in g.axes])}))"
        val = f"{val}.astype({dtype_ctor(out_av.dtype)})"
        kshape = tuple(1 if j in g.axes else S[j] for j in range(nd))
        if tuple(out_av.shape) != kshape:
            val = f"{val}.reshape({shape_text(out_av.shape)})"
        lines.append(f"{r.out} = {val}")
    return lines


def _acc_dtype(dtype, kind):
    dtype = np.dtype(dtype)
    if kind in ("max", "min"):
        return dtype
    if np.issubdtype(dtype, np.floating):
        return np.dtype(np.float64)
    if np.issubdtype(dtype, np.complexfloating):
        return np.dtype(np.complex128)
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.dtype(np.uint64)
    return np.dtype(np.int64)


def _init(kind, dtype):
    dtype = np.dtype(dtype)
    if kind in ("sum", "mean"):
        return f"{dtype_ctor(dtype)}(0)"
    if kind == "prod":
        return f"{dtype_ctor(dtype)}(1)"
    if np.issubdtype(dtype, np.floating):
        return f"{dtype_ctor(dtype)}({'-' if kind == 'max' else ''}np.inf)"
    if dtype == np.bool_:
        return "False" if kind == "max" else "True"
    info = np.iinfo(dtype)
    return f"{dtype_ctor(dtype)}({info.min if kind == 'max' else info.max})"


def _accumulate(kind, acc, v):
    if kind in ("sum", "mean"):
        return f"{acc} += {v}"
    if kind == "prod":
        return f"{acc} *= {v}"
    op = ">" if kind == "max" else "<"
    return f"{acc} = {v} if ({v} {op} {acc} or {v} != {v}) else {acc}"


_NAME = re.compile(r"[A-Za-z_]\w*")
_ASSIGNED = re.compile(r"^\s*(?:for\s+)?([A-Za-z_]\w*)\s*(?:=|\+=|-=|\*=|/=|in\b)", re.M)


def _shared(lw, kname, text):
    """Add a kernel's text to the module, unless an earlier kernel is the same loop with other
    names for its parameters and locals (two layers of an MLP, say): then the module keeps
    one and both call sites call it (one Numba compilation instead of two). Only parameters
    and names the kernel assigns are renamed for the comparison; every other name (np, math,
    helpers) must match as written. Returns the name to call."""
    head, _, body = text.partition("\n")
    params = re.search(r"def \w+\((.*)\):", body.split("\n", 1)[0])
    if params is None:
        lw.kernels.append(text)
        return kname
    local = [p.strip() for p in params.group(1).split(",") if p.strip()]
    local += _ASSIGNED.findall(body)
    rename = {}
    for n in local:
        rename.setdefault(n, f"v{len(rename)}")
    canon = head + "\n" + _NAME.sub(lambda m: rename.get(m.group(0), m.group(0)),
                                    body.replace(f"def {kname}(", "def KERNEL(", 1))
    seen = lw.shared_kernels
    if canon in seen:
        return seen[canon]
    seen[canon] = kname
    lw.kernels.append(text)
    return kname


def _promoted(dtype, cdt):
    """Is an operand of this dtype read in the float result's dtype `cdt` (a number or bool
    that NumPy's loop converts; a complex operand of a real result, np.abs or np.imag, is
    not)?"""
    dtype = np.dtype(dtype)
    return (np.issubdtype(dtype, np.number) or dtype == np.bool_) and \
        np.can_cast(dtype, cdt, "same_kind")


def _operand_dtype(a, avals, cdt):
    """The dtype an operand has in a fused loop's scalar expression (see `operand`): a
    number constant and a number value are written as `cdt`; None where unknown."""
    if isinstance(a, Const):
        v = a.value
        ok = isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))
        return cdt if ok and cdt is not None else None
    if not isinstance(a, Var) or a.name not in avals:
        return None
    av = avals[a.name]
    if cdt is not None and _promoted(av.dtype, cdt):
        return np.dtype(cdt)
    return av.dtype
