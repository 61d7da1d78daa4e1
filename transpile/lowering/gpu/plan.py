"""The GPU execution plan of a core function: fused elementwise regions and array ops.

Shared by the CUDA C lowering (CuPy RawKernels) and the numba.cuda lowering. Planning needs
no device: shapes and dtypes of every intermediate are inferred from example arguments on the
host (elementwise results from one-element samples, everything else from zero-stride proxies).

Steps of a plan, in order:
  KernelStep  a fused region: consecutive elementwise eqns of one iteration shape, plus an
              optional trailing full sum/mean; one generated kernel (grid-stride loop)
  OpStep      one eqn run as an array-library call (cupy.matmul, cupy.sum, rt helpers, ...)
  ConstStep   a value known at plan time (np.ones_like of a shape, ...)

Passes: fold shape-only helpers to constants, group regions, rematerialize elementwise
producers inside the regions that use them (reading x again is cheaper than writing and
re-reading three temporaries), drop dead eqns and regions.

`group_regions` is this module's own small region finder; the shared fusion pass
(transpile/optimize/fusion.py) can replace it: it needs only lists of consecutive eqns.
"""
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var, has_control_flow
from transpile.primitives.registry import REQUIRED
from transpile.core.rename import ssa
from transpile.ad.reverse import core_namer
import transpile_runtime as runtime
from transpile.primitives.internal.adjoint_helpers import sum_grad
from transpile.primitives.internal.collectives import pmax, pmean, pmin, psum

# ---- abstract values ------------------------------------------------------------------------


@dataclass(frozen=True)
class AVal:
    shape: tuple
    dtype: np.dtype
    weak: bool = False      # a Python scalar (NumPy 2 weak promotion), passed by value

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1


def aval_of(value):
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        return AVal((), np.result_type(value), weak=True)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return AVal(tuple(value.shape), np.dtype(value.dtype))
    arr = np.asarray(value)
    return AVal(arr.shape, arr.dtype)


def sample_of(aval, fill=1):
    """A one-element stand-in with the right promotion behaviour."""
    if aval.weak:
        return aval.dtype.type(fill).item()
    return np.full((1,) * min(len(aval.shape), 1), fill, dtype=aval.dtype) if aval.shape \
        else aval.dtype.type(fill)


def proxy_of(aval):
    """A zero-stride array of the right shape and dtype (no memory for the data)."""
    if aval.weak:
        return aval.dtype.type(0).item()
    if not aval.shape:
        return aval.dtype.type(0)
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape)


# ---- which eqns can be fused ------------------------------------------------------------------

def fusable(eqn, lowerable):
    """Can `eqn` go into a fused region? `lowerable(prim)` says whether a backend has a
    scalar lowering for it. A broadcast helper (the row's `bcast_operand`) is a broadcast
    load; rt.sum_grad only with constant axis and keepdims."""
    prim = eqn.prim
    if prim.bcast_operand is not None:
        if prim is sum_grad:
            return eqn.args.get("keepdims", Const(False)) in (Const(False), Const(True)) and \
                isinstance(eqn.args.get("axis", Const(None)), Const)
        return True
    if not prim.elementwise or prim.op == "getitem":
        return False
    for v in eqn.args.values():
        if not isinstance(v, (Var, Const)):
            return False
        if isinstance(v, Const) and not isinstance(v.value, (bool, int, float, np.generic,
                                                                type(None), np.dtype, type)):
            return False
    return lowerable(prim)


def data_reads(eqn):
    """Vars whose values a fused eqn reads (broadcast helpers read only the shape of the
    others)."""
    if eqn.prim.bcast_operand is not None:
        v = eqn.args.get(eqn.prim.bcast_operand)
        return [v.name] if isinstance(v, Var) else []
    return eqn.vars_read()


def is_full_reduction(eqn, avals):
    if eqn.prim.reduce not in ("sum", "mean"):      # what the kernels accumulate
        return False
    a = eqn.args
    if not isinstance(a.get("x"), Var):
        return False
    for k in ("dtype", "out"):
        if k in a and a[k] != Const(None):
            return False
    axis = a.get("axis", Const(None))
    if not isinstance(axis, Const):
        return False
    nd = len(avals[a["x"].name].shape)
    ax = axis.value
    if ax is None:
        return True
    axes = ax if isinstance(ax, tuple) else (ax,)
    return sorted(int(x) % max(nd, 1) for x in axes) == list(range(nd))


# ---- shape and dtype inference ------------------------------------------------------------------


def resolve(value, env):
    """An argument value with Vars looked up in env (used for proxies and for execution)."""
    if isinstance(value, Var):
        return env[value.name]
    if isinstance(value, Const):
        return value.value
    if isinstance(value, TupleArg):
        items = [resolve(v, env) for v in value.items]
        return items if value.kind == "list" else tuple(items)
    if isinstance(value, IndexArg):
        out = []
        for it in value.items:
            if isinstance(it, SliceArg):
                out.append(slice(*[None if x is None else resolve(x, env)
                                   for x in (it.lower, it.upper, it.step)]))
            elif isinstance(it, (Var, Const)):
                out.append(resolve(it, env))
            else:
                out.append(it)
        return tuple(out)
    return value


def call_args(prim, args, env):
    """(positional, keyword) call arguments for prim from an Eqn's args."""
    pos, kw, positional = [], {}, True
    for p in prim.params:
        if p.name not in args:
            positional = False
            continue
        val = resolve(args[p.name], env)
        if p.kind == "var":
            pos += list(val)
            positional = False
        elif positional and p.kind == "pos" and p.default is REQUIRED:
            pos.append(val)
        else:
            positional = False
            kw[p.name] = val
    return pos, kw


def apply_eqn(eqn, env, impl=None):
    """Evaluate one eqn with `impl` (default: the primitive's NumPy callable)."""
    prim = eqn.prim
    op = prim.op
    if op == "getitem":
        return resolve(eqn.args["x"], env)[resolve(eqn.args["index"], env)]
    if op and op.startswith("attr:"):
        return getattr(resolve(eqn.args["x"], env), op[5:])
    fn = impl or prim.impl
    if fn is None:
        fn = getattr(runtime, prim.path.split(".", 1)[1])
    pos, kw = call_args(prim, eqn.args, env)
    return fn(*pos, **kw)


def is_collective(prim):
    """A pmap collective (the rows with batch 'collective'): planning must not call one (each
    would wait at the rendezvous for shards that are not running it); the executor calls them
    at run time, like any array op."""
    return prim.batch == "collective"


def collective_aval(eqn, avals):
    """The abstract result of a collective: psum/pmax/pmin keep the operand's, pmean of
    integers gives float64; others are not planned (the program runs as CuPy array ops)."""
    prim = eqn.prim
    if prim in (psum, pmean, pmax, pmin):
        x = next((v for v in eqn.args.values() if isinstance(v, Var)), None)
        if x is not None:
            av = avals[x.name]
            dtype = av.dtype
            if prim is pmean and dtype.kind in "biu":
                dtype = np.dtype(np.float64)
            return AVal(av.shape, dtype)
    raise NotImplementedError(f"{prim.path}(...) has no GPU plan (its result shape depends "
                              "on the pmap axis)")


def infer_avals(core, example_args):
    """{var name: AVal} for params and every eqn result (host only, no device)."""
    if len(example_args) != len(core.params):
        raise TypeError(f"{core.name}: expected {len(core.params)} flat arguments "
                        f"({', '.join(core.params)}), got {len(example_args)}")
    avals, proxies = {}, {}
    for name, value in zip(core.params, example_args):
        avals[name] = aval_of(value)
        proxies[name] = proxy_of(avals[name])
    for eqn in core.body:
        if not isinstance(eqn, Eqn):
            raise NotImplementedError(type(eqn).__name__)
        with np.errstate(all="ignore"):
            if eqn.prim.elementwise and all(isinstance(v, (Var, Const))
                                           for v in eqn.args.values()):
                shapes = [avals[v.name].shape for v in eqn.args.values()
                          if isinstance(v, Var)]
                samples = {v.name: sample_of(avals[v.name]) for v in eqn.args.values()
                           if isinstance(v, Var)}
                try:
                    res = apply_eqn(eqn, samples)
                    av = AVal(np.broadcast_shapes(*shapes) if shapes else np.shape(res),
                              np.result_type(res),
                              weak=not shapes or all(avals[v.name].weak for v in eqn.args.values()
                                                     if isinstance(v, Var)) and
                              not isinstance(res, (np.ndarray, np.generic)))
                    avals[eqn.out] = av
                    proxies[eqn.out] = proxy_of(av)
                    continue
                except Exception:
                    pass
            if is_collective(eqn.prim):
                av = collective_aval(eqn, avals)
                avals[eqn.out] = av
                proxies[eqn.out] = proxy_of(av)
                continue
            res = apply_eqn(eqn, proxies)
        proxies[eqn.out] = res
        avals[eqn.out] = aval_of(res)
    return avals


# ---- the plan -------------------------------------------------------------------------------------


@dataclass
class Region:
    name: str                  # kernel name
    eqns: list                 # fused eqns, in order (rematerialized ones included)
    shape: tuple               # iteration shape
    inputs: list = field(default_factory=list)    # var names read (arrays or scalars)
    outputs: list = field(default_factory=list)   # var names written as full arrays
    reduction: Eqn = None      # trailing sum/mean over everything, or None
    remat: set = field(default_factory=set)       # eqn outs recomputed here

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1


@dataclass
class KernelStep:
    region: Region


@dataclass
class OpStep:
    eqn: Eqn


@dataclass
class ConstStep:
    out: str
    value: object


@dataclass
class Plan:
    core: object
    steps: list
    avals: dict
    outs: list
    unlowered: list = field(default_factory=list)   # (eqn, reason) run as array ops
    source: dict = field(default_factory=dict)      # kernel name -> source text

    def regions(self):
        return [s.region for s in self.steps if isinstance(s, KernelStep)]

    def describe(self):
        """The plan as readable lines (what runs where)."""
        lines = []
        for s in self.steps:
            if isinstance(s, KernelStep):
                r = s.region
                red = f" + {r.reduction.prim.name} -> {r.reduction.out}" if r.reduction else ""
                lines.append(f"kernel {r.name}({', '.join(r.inputs)}) -> "
                             f"{', '.join(r.outputs) or '-'}{red}  [{len(r.eqns)} ops over "
                             f"shape {r.shape}]")
            elif isinstance(s, OpStep):
                lines.append(f"array op {s.eqn.out} = {s.eqn.prim.path}(...)")
            else:
                lines.append(f"constant {s.out}")
        return "\n".join(lines)


def fold_shape_only(core, avals):
    """Eqns whose value depends only on shapes known now -> ConstStep values."""
    consts = {}
    for eqn in core.body:
        if eqn.prim.shape_only:
            # evaluated on proxies: raises the user-facing error at plan time if it must
            proxies = {v.name: proxy_of(avals[v.name]) for v in eqn.args.values()
                       if isinstance(v, Var)}
            consts[eqn.out] = np.array(apply_eqn(eqn, proxies))
    return consts


def group_regions(body, avals, lowerable):
    """Consecutive fusable eqns of one iteration shape (+ a trailing full sum/mean) -> lists.

    Returns a list of items: ('region', [eqns], reduction eqn or None) or ('op', eqn)."""
    items, cur, cur_shape = [], [], None

    def close(red=None):
        nonlocal cur, cur_shape
        if cur:
            items.append(("region", cur, red))
        elif red is not None:
            items.append(("op", red))
        cur, cur_shape = [], None

    for eqn in body:
        if fusable(eqn, lowerable) and avals[eqn.out].shape != () and \
                avals[eqn.out].dtype.kind in "biuf":
            shape = avals[eqn.out].shape
            if cur and shape != cur_shape:
                close()
            cur.append(eqn)
            cur_shape = shape
            continue
        if cur and is_full_reduction(eqn, avals) and eqn.args["x"].name == cur[-1].out \
                and avals[eqn.out].dtype.kind in "biuf":
            close(eqn)
            continue
        close()
        items.append(("op", eqn))
    close()
    return items


def single_assignment(core):
    """The core with every rebinding of a name renamed (`y = f(y)` twice -> y, y_2): kernel
    variables, kernel parameters and plan slots are keyed by name, and C forbids redeclaring
    one. Straight-line bodies only (the planner refuses control flow anyway)."""
    if has_control_flow(core.body):
        return core
    bound = [e.out for e in core.body if isinstance(e, Eqn)]
    if len(set(bound)) == len(bound) and not set(bound) & set(core.params):
        return core
    body, outs = ssa(core, core_namer(core))
    return dataclasses.replace(core, body=body, outs=outs)


def build_plan(core, example_args, lowerable, kernel_prefix=None):
    """Group, rematerialize and prune: a Plan whose regions are ready for a lowering."""
    core = single_assignment(core)
    avals = infer_avals(core, example_args)
    consts = fold_shape_only(core, avals)
    body = [e for e in core.body if e.out not in consts]
    items = group_regions(body, avals, lowerable)
    producer = {}          # var -> the fused eqn that computes it
    for kind, *rest in items:
        if kind == "region":
            for e in rest[0]:
                producer[e.out] = e
    prefix = kernel_prefix or core.name
    steps, regions = [], []
    for out, value in consts.items():
        steps.append(ConstStep(out, value))
    for k, (kind, *rest) in enumerate(items):
        if kind == "op":
            steps.append(OpStep(rest[0]))
            continue
        eqns, red = rest
        region = Region(f"{prefix}_k{len(regions)}", list(eqns), avals[eqns[-1].out].shape,
                        reduction=red)
        rematerialize(region, producer, avals)
        regions.append(region)
        steps.append(KernelStep(region))
    prune(steps, [o.name for o in core.outs if isinstance(o, Var)])
    unlowered = [s.eqn for s in steps if isinstance(s, OpStep) and s.eqn.prim.elementwise
                 and not lowerable(s.eqn.prim) and s.eqn.prim.op != "getitem"]
    for i, r in enumerate(s.region for s in steps if isinstance(s, KernelStep)):
        r.name = f"{prefix}_k{i}"
    return Plan(core, steps, avals, list(core.outs), unlowered=unlowered)


def rematerialize(region, producer, avals, limit=64):
    """Inline the elementwise producers of this region's inputs (same iteration shape), so the
    kernel reads their sources instead of temporaries written by an earlier kernel."""
    own = {e.out for e in region.eqns}
    added = []

    def need(name, depth):
        if name in own or name not in producer or depth > limit:
            return
        e = producer[name]
        if avals[e.out].shape != region.shape or len(added) >= limit:
            return
        for v in data_reads(e):
            need(v, depth + 1)
        own.add(name)
        added.append(e)

    for e in list(region.eqns):
        for v in data_reads(e):
            need(v, 0)
    if added:
        # producers come earlier in the program; keep their relative order
        order = {id(e): i for i, e in enumerate(added)}
        added.sort(key=lambda e: order[id(e)])
        region.eqns = added + region.eqns
        region.remat = {e.out for e in added}


def prune(steps, outs):
    """Drop dead steps, compute region inputs/outputs from what later steps read."""
    live = set(outs)
    for s in reversed(list(steps)):
        if isinstance(s, ConstStep):
            if s.out not in live:
                steps.remove(s)
            continue
        if isinstance(s, OpStep):
            if s.eqn.out in live:
                live.discard(s.eqn.out)
                live.update(s.eqn.vars_read())
            else:
                steps.remove(s)
            continue
        r = s.region
        red = r.reduction
        if red is not None and red.out not in live:
            r.reduction = red = None
        needed = set(live)
        if red is not None:
            needed.add(red.args["x"].name)
        kept = []
        for e in reversed(r.eqns):
            if e.out in needed:
                kept.append(e)
                needed.update(data_reads(e))
        r.eqns = list(reversed(kept))
        if not r.eqns:
            steps.remove(s)
            continue
        own = {e.out for e in r.eqns}
        r.outputs = [e.out for e in r.eqns if e.out in live]
        reads = []
        for e in r.eqns:
            for v in data_reads(e):
                if v not in own and v not in reads:
                    reads.append(v)
        r.inputs = reads
        for e in r.eqns:
            live.discard(e.out)
        if red is not None:
            live.discard(red.out)
        live.update(reads)
