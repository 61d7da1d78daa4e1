"""Core IR elementwise regions -> numba.cuda kernel source (backend='cuda').

The same regions as the CUDA C lowering (transpile/lowering/gpu/plan.py), printed as Python
for `numba.cuda.jit`: a grid-stride `for i in range(cuda.grid(1), n, cuda.gridsize(1))` loop,
one statement per line, temporaries named after the core IR, comments naming the user's line.
float32 kernels wrap literals in float32(...) so Numba types the whole chain as float32
(math.exp on a float32 compiles to expf). A trailing sum/mean accumulates per thread and adds
once per thread with cuda.atomic.add.

The text runs under the CUDA simulator (NUMBA_ENABLE_CUDASIM=1) as well as on a GPU.
"""
import numpy as np

from transpile.core.ir import Const, Var
from transpile.lowering.gpu import plan as gpu_plan
from transpile.lowering.gpu.cuda_c import _compute_dtype, comment_line
from transpile.lowering.gpu.kernel_info import KernelInfo, KernelParam, index_expr
from transpile.primitives.internal.adjoint_helpers import sum_grad

NBTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
           np.dtype(np.int8): "int8", np.dtype(np.int16): "int16", np.dtype(np.int32): "int32",
           np.dtype(np.int64): "int64", np.dtype(np.uint8): "uint8",
           np.dtype(np.uint16): "uint16", np.dtype(np.uint32): "uint32",
           np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "boolean"}

PY_KEYWORDS = {"i", "n", "stride", "acc", "math", "cuda", "np"} | set(NBTYPES.values())


def pyname(name):
    return name + "_" if name in PY_KEYWORDS or name.startswith("tp_") else name


def nbtype(dtype):
    try:
        return NBTYPES[np.dtype(dtype)]
    except KeyError:
        raise NotImplementedError(f"no numba type for dtype {np.dtype(dtype)}") from None


def literal(value, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "True" if bool(value) else "False"
    if dtype.kind in "iu":
        return f"{nbtype(dtype)}({int(value)})"
    v = float(value)
    if v != v or v in (float("inf"), float("-inf")):
        text = f"math.{'nan' if v != v else 'inf'}"
        text = "-" + text if v < 0 else text
    else:
        text = str(np.float32(v)) if dtype == np.float32 else repr(v)
    return f"{nbtype(dtype)}({text})"


# Each row's `numba_cuda` field: f(a, eqn) -> Python expression over operands `a` (as for
# CUDA C); forms in transpile/primitives/scalar_forms.py. The device helpers they call:
HELPERS = {
    "tp_maximum": ["@cuda.jit(device=True)", "def tp_maximum(x, y):",
                   "    return x if (x != x or x > y) else y"],
    "tp_minimum": ["@cuda.jit(device=True)", "def tp_minimum(x, y):",
                   "    return x if (x != x or x < y) else y"],
    "tp_sign": ["@cuda.jit(device=True)", "def tp_sign(x):",
                "    return type(x)(1) if x > 0 else (type(x)(-1) if x < 0 else x)"],
}


def lowerable(prim):
    return prim.numba_cuda is not None


def region_kernel(region, plan):
    core, avals = plan.core, plan.avals
    consts = getattr(plan, "consts", {})
    shape = region.shape
    params, names, loads, body, stores = [], [], [], [], []
    helpers, known = set(), {}
    bcast_view = {}
    for e in region.eqns:
        if e.prim is sum_grad and isinstance(e.args["ct"], Var):
            ct, x = e.args["ct"], e.args["x"]
            xs = avals[x.name].shape if isinstance(x, Var) else ()
            axis = e.args.get("axis", Const(None)).value
            keep = e.args.get("keepdims", Const(False)).value
            cs = list(avals[ct.name].shape)
            if not keep and axis is not None:
                for a in sorted(a % len(xs) for a in (axis if isinstance(axis, tuple) else (axis,))):
                    cs.insert(a, 1)
            bcast_view[ct.name] = tuple(cs)
    for name in region.inputs:
        av = avals[name]
        pn = pyname(name)
        if name in consts and np.size(consts[name]) == 1:
            known[name] = (literal(np.asarray(consts[name]).reshape(-1)[0], av.dtype), av.dtype)
            continue
        if av.weak:
            dt = np.dtype({"b": np.bool_, "i": np.int64, "u": np.int64}.get(av.dtype.kind,
                                                                          np.float64))
            params.append(KernelParam("scalar", name, dt))
            names.append(pn)
            known[name] = (pn, dt)
            continue
        params.append(KernelParam("in", name, av.dtype))
        names.append(f"p_{name}")
        view = bcast_view.get(name, av.shape)
        loads.append(f"{pn} = p_{name}[{index_expr(view, shape, 'i', div='//')}]")
        known[name] = (pn, av.dtype)
    done = [None]
    for e in region.eqns:
        c = comment_line(core, e.loc, done)
        if c:
            body.append(f"# {c}")
        out_dt = avals[e.out].dtype
        comp = _compute_dtype(e, avals)
        operands = e.prim.operands
        a = {}
        for pname, v in e.args.items():
            if isinstance(v, Const) and v.value is None:
                a[pname] = None
                continue
            if operands is not None and pname not in operands:
                if isinstance(v, Var) and pname in e.prim.uncast:
                    a[pname] = known[v.name][0]
                continue
            if isinstance(v, Const):
                a[pname] = literal(v.value, comp)
            else:
                expr, dt = known[v.name]
                a[pname] = expr if np.dtype(dt) == comp else f"{nbtype(comp)}({expr})"
        for k, val in (("one", 1), ("half", 0.5), ("zero", 0)):
            a[k] = literal(val, comp)
        expr = e.prim.numba_cuda(a, e)
        for h in HELPERS:
            if h in expr:
                helpers.add(h)
        if out_dt.kind != "b" and comp != out_dt:
            expr = f"{nbtype(out_dt)}({expr})"
        pn = pyname(e.out)
        body.append(f"{pn} = {expr}")
        known[e.out] = (pn, out_dt)
    for name in region.outputs:
        params.append(KernelParam("out", name, avals[name].dtype))
        names.append(f"p_{name}")
        stores.append(f"p_{name}[i] = {pyname(name)}")
    red, acc_dt = region.reduction, None
    if red is not None:
        red_dt = avals[red.out].dtype
        acc_dt = np.dtype(np.int64) if red_dt.kind in "biu" else red_dt
        params.append(KernelParam("acc", red.out, acc_dt))
        names.append(f"p_acc_{red.out}")
        src = known[red.args["x"].name]
        val = src[0] if np.dtype(src[1]) == acc_dt else f"{nbtype(acc_dt)}({src[0]})"
        stores.append(f"acc += {val}")
    params.append(KernelParam("n", None, np.dtype(np.int64)))
    names.append("n")
    lines = [f"# Generated by transpile from {core.filename}: {core.name}, fused region "
             f"{region.name} (numba.cuda).",
             f"# Iteration shape {shape} ({region.size} elements); reads "
             f"{', '.join(region.inputs) or 'nothing'}; writes "
             f"{', '.join(region.outputs) or 'nothing'}"
             + (f"; {red.prim.name} -> {red.out}" if red is not None else "") + "."]
    if region.remat:
        lines.append(f"# Recomputed here instead of read back: {', '.join(sorted(region.remat))}.")
    lines += ["import math", "from numba import cuda, " + ", ".join(sorted(set(NBTYPES.values()))),
              ""]
    for h in sorted(helpers):
        lines += HELPERS[h] + [""]
    lines.append("@cuda.jit")
    lines.append(f"def {region.name}({', '.join(names)}):")
    if red is not None:
        lines.append(f"    acc = {literal(0, acc_dt)}")
    lines.append("    for i in range(cuda.grid(1), n, cuda.gridsize(1)):")
    lines += ["        " + ln for ln in loads + body + stores]
    if red is not None:
        lines.append("    cuda.atomic.add(p_acc_" + red.out + ", 0, acc)")
    source = "\n".join(lines) + "\n"
    return KernelInfo(region.name, source, params, region.size, shape, red, acc_dt, "int64")


def lower_to_numba_cuda(core, example_args):
    """(kernel sources {name: Python text}, plan) for backend='cuda'; no device needed."""
    plan = gpu_plan.build_plan(core, example_args, lowerable)
    plan.consts = {s.out: s.value for s in plan.steps if isinstance(s, gpu_plan.ConstStep)}
    plan.kernels = {}
    for region in plan.regions():
        info = region_kernel(region, plan)
        plan.kernels[region.name] = info
        plan.source[region.name] = info.source
    return dict(plan.source), plan


def kernel_text(core, example_args):
    sources, plan = lower_to_numba_cuda(core, example_args)
    head = [f"# numba.cuda kernels for {core.name} (transpile, backend='cuda')", "# Plan:"] + \
        [f"#   {ln}" for ln in plan.describe().splitlines()]
    return "\n".join(head) + "\n\n" + "\n\n".join(sources.values())
