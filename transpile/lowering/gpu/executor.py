"""Runs a GPU plan (transpile/lowering/gpu/plan.py): generated kernels for fused regions,
array-library calls for everything else. Shared by the CuPy backend (xp = cupy, kernels are
RawKernels) and the numba.cuda backend (kernels are numba.cuda functions; xp = cupy on a GPU,
numpy under the CUDA simulator)."""

import numpy as np

import transpile_runtime as runtime
from transpile.core.ir import Var
from transpile.lowering.gpu.plan import ConstStep, OpStep, apply_eqn
from transpile_runtime.diagnostics import warn

BLOCK = 256


def where(eqn):
    loc = eqn.loc
    if not loc:
        return "generated code"
    return f"{loc[0]}:{loc[1]}"


def warn_unlowered(plan, backend):
    """One warning per plan naming the constructs that run as array ops instead of kernels."""
    if plan.unlowered and not getattr(plan, "_warned", False):
        plan._warned = True
        names = ", ".join(f"{e.prim.path} ({where(e)})" for e in plan.unlowered)
        warn(f"transpile[{backend}]: no GPU kernel lowering for {names}; running "
             f"{'it' if len(plan.unlowered) == 1 else 'them'} as array-library ops "
             "(same numbers, no fusion)")     # a TranspileWarning at the user's call


def impl_for(prim, xp):
    """The array-library callable for a primitive: xp.<name> for np.<name>, the runtime helper
    for rt.<name> (its np.* calls dispatch to xp's arrays), else the NumPy callable."""
    path = prim.path
    if path.startswith("np."):
        obj = xp
        for part in path.split(".")[1:]:
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    if path.startswith("rt."):
        return getattr(runtime, path[3:])
    return prim.impl


def grid_for(size, max_blocks):
    return max(1, min((size + BLOCK - 1) // BLOCK, max_blocks))


def kernel_args(info, env, xp):
    args, outs = [], {}
    for p in info.params:
        if p.kind == "in":
            a = env[p.var]
            a = xp.ascontiguousarray(xp.asarray(a, dtype=p.dtype))
            args.append(a.reshape(-1))
        elif p.kind == "scalar":
            args.append(p.dtype.type(env[p.var]))
        elif p.kind == "out":
            flat = xp.empty(info.size, dtype=p.dtype)
            outs[p.var] = flat.reshape(info.shape)
            args.append(flat)
        elif p.kind == "acc":
            outs[p.var] = xp.zeros((1,), dtype=p.dtype)
            args.append(outs[p.var])
        else:
            args.append(p.dtype.type(info.size))
    return args, outs


def finish_reduction(info, acc, plan, xp):
    red = info.reduction
    av = plan.avals[red.out]
    val = acc
    if red.prim.reduce == "mean":
        val = val / info.size
    return xp.reshape(val.astype(av.dtype, copy=False), av.shape)


def device_constant(plan, step, xp):
    """A constant of the plan on the array library's current device, copied there once (no
    host-to-device copy per call; stream capture of a CUDA graph allows none)."""
    if xp is np:
        return xp.asarray(step.value)
    cache = plan.__dict__.setdefault("_device_constants", {})
    key = (id(step), xp.cuda.Device().id)
    value = cache.get(key)
    if value is None:
        value = cache[key] = xp.asarray(step.value)
    return value


def run_plan(plan, args, xp, launch, backend):
    """Execute `plan` on flat arguments. launch(info, grid, args) runs one kernel."""
    warn_unlowered(plan, backend)
    core = plan.core
    env = {}
    for name, value in zip(core.params, args):
        if isinstance(value, np.ndarray) or (hasattr(value, "shape") and not
                                             isinstance(value, np.generic)):
            value = xp.asarray(value)
        env[name] = value
    for step in plan.steps:
        if isinstance(step, ConstStep):
            env[step.out] = device_constant(plan, step, xp)
        elif isinstance(step, OpStep):
            eqn = step.eqn
            env[eqn.out] = apply_eqn(eqn, env, impl_for(eqn.prim, xp))
        else:
            info = plan.kernels[step.region.name]
            kargs, outs = kernel_args(info, env, xp)
            cap = getattr(plan, "max_blocks", 4096)
            if info.reduction is not None:   # one atomicAdd per block: fewer, fuller blocks
                cap = getattr(plan, "max_blocks_reduce", cap)
            launch(info, grid_for(info.size, cap), kargs)
            for var, arr in outs.items():
                if info.reduction is not None and var == info.reduction.out:
                    env[var] = finish_reduction(info, arr, plan, xp)
                else:
                    env[var] = arr
    return [env[o.name] if isinstance(o, Var) else o.value for o in plan.outs]
