"""Core IR elementwise regions -> CUDA C source for CuPy RawKernels.

One kernel per fused region (see transpile/lowering/gpu/plan.py): a grid-stride loop over the
region's iteration space, one statement per line, every temporary named after the core IR
variable it computes, and comments naming the user's source line. Kernels are specialized on
dtype: float32 code calls expf/logf/tanhf and writes literals as 1.0f, so it never touches
float64 units; float64 code calls exp/log/tanh. A trailing sum/mean becomes a per-thread
accumulator, a warp-shuffle + shared-memory block reduction and one atomicAdd per block.

Lowering needs no GPU: `lower_to_cuda_c(core, example_args)` returns the source texts and the
plan; NVRTC can compile them to PTX without a driver (tests/test_gpu_codegen.py does).
"""
import glob
import os

import numpy as np

from transpile.core.ir import Const, Var
from transpile.lowering.gpu import plan as gpu_plan
from transpile.lowering.gpu.kernel_info import KernelInfo, KernelParam, index_expr
from transpile.primitives.internal.adjoint_helpers import sum_grad
import importlib.util

CTYPES = {
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.int8): "signed char", np.dtype(np.int16): "short",
    np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
    np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.bool_): "bool",
}

C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
              "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
              "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
              "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
              "true", "false", "new", "delete", "class", "template", "this", "throw", "try",
              "catch", "namespace", "operator", "private", "public", "protected", "virtual",
              "friend", "typename", "using", "n", "i", "half"}


def cname(name):
    return name + "_" if name in C_KEYWORDS or name.startswith("tp_") else name


def ctype(dtype):
    try:
        return CTYPES[np.dtype(dtype)]
    except KeyError:
        raise NotImplementedError(f"no CUDA C type for dtype {np.dtype(dtype)}") from None


def literal(value, dtype):
    """A C literal of `value` in dtype (float32 literals carry the f suffix)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "true" if bool(value) else "false"
    if dtype.kind in "iu":
        v = int(value)
        return f"{v}LL" if dtype.itemsize == 8 and abs(v) >= 2 ** 31 else str(v)
    v = float(value)
    if v != v:
        return "__int_as_float(0x7fc00000)" if dtype == np.float32 else \
            "__longlong_as_double(0x7ff8000000000000LL)"
    if v in (float("inf"), float("-inf")):
        sign = "-" if v < 0 else ""
        return (f"{sign}__int_as_float(0x7f800000)" if dtype == np.float32 else
                f"{sign}__longlong_as_double(0x7ff0000000000000LL)")
    text = str(np.float32(v)) if dtype == np.float32 else repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    text = f"({text})" if text.startswith("-") else text
    if dtype == np.float32:
        return text[:-1] + "f)" if text.endswith(")") else text + "f"
    return text


# ---- scalar lowering of each primitive ------------------------------------------------------------
# Each row's `cuda_c` field: f(a, m, eqn) -> C expression; `a` maps argument names to C operand
# expressions already in the compute dtype (the row's `operands`; `uncast` ones as loaded);
# m(name) is the math function for that dtype (expf for float32). Forms:
# transpile/primitives/scalar_forms.py.


def lowerable(prim):
    return prim.cuda_c is not None


# the helpers the forms call, each defined once at the top of a kernel that uses it
PREAMBLE = {
    "tp_maximum": """\
template <typename T> __device__ __forceinline__ T tp_maximum(T x, T y) { return (x != x || x > y) ? x : y; }""",
    "tp_minimum": """\
template <typename T> __device__ __forceinline__ T tp_minimum(T x, T y) { return (x != x || x < y) ? x : y; }""",
    "tp_sign": """\
template <typename T> __device__ __forceinline__ T tp_sign(T x) { return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x); }""",
    "tp_logaddexp": """\
__device__ __forceinline__ float tp_logaddexp(float x, float y) { return x == y ? x + 0.6931471805599453f : fmaxf(x, y) + log1pf(expf(-fabsf(x - y))); }
__device__ __forceinline__ double tp_logaddexp(double x, double y) { return x == y ? x + 0.6931471805599453 : fmax(x, y) + log1p(exp(-fabs(x - y))); }""",
    "tp_mod": """\
__device__ __forceinline__ float tp_mod(float x, float y) { float r = fmodf(x, y); return (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) ? r + y : r; }
__device__ __forceinline__ double tp_mod(double x, double y) { double r = fmod(x, y); return (r != 0.0 && ((r < 0.0) != (y < 0.0))) ? r + y : r; }
template <typename T> __device__ __forceinline__ T tp_mod(T x, T y) { if (y == 0) return 0; T r = x % y; return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; }""",
    "tp_floor_divide": """\
__device__ __forceinline__ float tp_floor_divide(float x, float y) { return floorf(x / y); }
__device__ __forceinline__ double tp_floor_divide(double x, double y) { return floor(x / y); }
template <typename T> __device__ __forceinline__ T tp_floor_divide(T x, T y) { if (y == 0) return 0; T q = x / y; return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q; }""",
}


class MathNames:
    """m('exp') -> 'expf' for float32, 'exp' for float64."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.float = self.dtype.kind == "f"

    def __call__(self, name):
        return name + "f" if self.dtype == np.float32 else name


# ---- one region -> one kernel ---------------------------------------------------------------------


def _compute_dtype(eqn, avals):
    out = avals[eqn.out].dtype
    if out.kind != "b" or eqn.prim.logical:     # truth-valued operands: computed as bools
        return out
    samples = []
    for v in eqn.args.values():
        if isinstance(v, Var):
            samples.append(gpu_plan.sample_of(avals[v.name]))
        elif isinstance(v, Const) and isinstance(v.value, (bool, int, float, np.generic)):
            samples.append(v.value)
    return np.result_type(*samples) if samples else out


def comment_line(core, loc, done):
    if loc is None or loc == done[0]:
        return None
    done[0] = loc
    filename, lineno = loc[0], loc[1]
    tag = loc[2] + " " if len(loc) > 2 and loc[2] else ""
    text = core.source_lines.get((filename, lineno), "").strip()
    where = f"line {lineno}" if filename == core.filename else \
        f"{os.path.basename(filename)}:{lineno}"
    return f"{tag}{where}: {text}".rstrip().rstrip("\\")


def region_kernel(region, plan):
    """CUDA C source and launch info for one region."""
    core, avals = plan.core, plan.avals
    consts = getattr(plan, "consts", {})
    shape, size = region.shape, region.size
    itype = "int" if size < 2 ** 31 - 2 ** 26 else "long long"
    params, decls, loads, body, stores = [], [], [], [], []
    helpers = set()
    known = {}           # var -> C expression of its value (loaded or computed)

    # inputs: arrays read with (broadcast) indexing, Python scalars by value, plan constants
    # inlined as literals
    bcast_view = {}
    for e in region.eqns:
        if e.prim is sum_grad:
            ct, x = e.args["ct"], e.args["x"]
            if isinstance(ct, Var):
                xs = avals[x.name].shape if isinstance(x, Var) else ()
                axis = e.args.get("axis", Const(None)).value
                keep = e.args.get("keepdims", Const(False)).value
                cs = avals[ct.name].shape
                if not keep and axis is not None:
                    axes = axis if isinstance(axis, tuple) else (axis,)
                    axes = sorted(a % len(xs) for a in axes)
                    cs = list(cs)
                    for a in axes:
                        cs.insert(a, 1)
                    cs = tuple(cs)
                bcast_view[ct.name] = cs
    for name in region.inputs:
        av = avals[name]
        cn = cname(name)
        if name in consts and np.size(consts[name]) == 1:
            known[name] = (literal(np.asarray(consts[name]).reshape(-1)[0], av.dtype), av.dtype)
            continue
        if av.weak:
            t = {"b": "bool", "i": "long long", "u": "long long"}.get(av.dtype.kind, "double")
            params.append(KernelParam("scalar", name, np.dtype({"bool": np.bool_,
                                                                "long long": np.int64,
                                                                "double": np.float64}[t])))
            decls.append(f"const {t} {cn}")
            known[name] = (cn, params[-1].dtype)
            continue
        params.append(KernelParam("in", name, av.dtype))
        decls.append(f"const {ctype(av.dtype)}* __restrict__ p_{name}")
        view = bcast_view.get(name, av.shape)
        loads.append(f"const {ctype(av.dtype)} {cn} = p_{name}[{index_expr(view, shape, 'i')}];")
        known[name] = (cn, av.dtype)

    done = [None]
    for e in region.eqns:
        c = comment_line(core, e.loc, done)
        if c:
            body.append(f"// {c}")
        out_dt = avals[e.out].dtype
        comp = _compute_dtype(e, avals)
        m = MathNames(comp)
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
                a[pname] = expr if np.dtype(dt) == comp else f"({ctype(comp)}){expr}"
        for k, val in (("one", 1), ("half", 0.5), ("zero", 0)):
            a[k] = literal(val, comp)
        expr = e.prim.cuda_c(a, m, e)
        for h in PREAMBLE:
            if h in expr:
                helpers.add(h)
        if comp != out_dt and out_dt.kind != "b":
            expr = f"({ctype(out_dt)})({expr})"
        cn = cname(e.out)
        body.append(f"const {ctype(out_dt)} {cn} = {expr};")
        known[e.out] = (cn, out_dt)

    for name in region.outputs:
        dt = avals[name].dtype
        params.append(KernelParam("out", name, dt))
        decls.append(f"{ctype(dt)}* __restrict__ p_{name}")
        stores.append(f"p_{name}[i] = {cname(name)};")

    red = region.reduction
    acc_dt = None
    if red is not None:
        red_dt = avals[red.out].dtype
        acc_dt = np.dtype(np.int64) if red_dt.kind in "biu" else red_dt
        if red.prim.reduce == "mean" and red_dt.kind == "f":
            acc_dt = red_dt
        params.append(KernelParam("acc", red.out, acc_dt))
        decls.append(f"{ctype(acc_dt)}* __restrict__ p_acc_{red.out}")
        src = known[red.args["x"].name]
        val = src[0] if np.dtype(src[1]) == acc_dt else f"({ctype(acc_dt)}){src[0]}"
        stores.append(f"acc += {val};")
    params.append(KernelParam("n", None, np.dtype(np.int32 if itype == "int" else np.int64)))
    decls.append(f"const {itype} n")

    lines = [f"// Generated by transpile from {core.filename}: {core.name}, fused region "
             f"{region.name}.",
             f"// Iteration shape {shape} ({size} elements); reads "
             f"{', '.join(region.inputs) or 'nothing'}; writes "
             f"{', '.join(region.outputs) or 'nothing'}"
             + (f"; {red.prim.name} -> {red.out}" if red is not None else "") + "."]
    if region.remat:
        lines.append(f"// Recomputed here instead of read back: {', '.join(sorted(region.remat))}.")
    lines.append("")
    for h in sorted(helpers):
        lines.append(PREAMBLE[h])
    if helpers:
        lines.append("")
    sig = ",\n        ".join(decls)
    lines.append(f'extern "C" __global__ void {region.name}(\n        {sig})')
    lines.append("{")
    ind = "    "
    if red is not None:
        lines.append(f"{ind}{ctype(acc_dt)} acc = 0;")
    lines.append(f"{ind}const {itype} stride = ({itype})blockDim.x * gridDim.x;")
    lines.append(f"{ind}for ({itype} i = ({itype})blockIdx.x * blockDim.x + threadIdx.x; "
                 f"i < n; i += stride) {{")
    for ln in loads + body + stores:
        lines.append(ind * 2 + ln)
    lines.append(ind + "}")
    if red is not None:
        t = ctype(acc_dt)
        atomic = ("atomicAdd((unsigned long long*)p_acc_{0}, (unsigned long long)acc);"
                  if acc_dt.kind in "iu" else "atomicAdd(p_acc_{0}, acc);").format(red.out)
        lines += [
            f"{ind}// block reduction of the per-thread sums, then one atomicAdd per block",
            f"{ind}for (int off = 16; off > 0; off >>= 1) {{",
            f"{ind * 2}acc += __shfl_down_sync(0xffffffffu, acc, off);",
            f"{ind}}}",
            f"{ind}__shared__ {t} warp_sums[32];",
            f"{ind}const int lane = threadIdx.x & 31;",
            f"{ind}const int warp = threadIdx.x >> 5;",
            f"{ind}if (lane == 0) warp_sums[warp] = acc;",
            f"{ind}__syncthreads();",
            f"{ind}if (warp == 0) {{",
            f"{ind * 2}acc = lane < (int)((blockDim.x + 31) >> 5) ? warp_sums[lane] : ({t})0;",
            f"{ind * 2}for (int off = 16; off > 0; off >>= 1) {{",
            f"{ind * 3}acc += __shfl_down_sync(0xffffffffu, acc, off);",
            f"{ind * 2}}}",
            f"{ind * 2}if (lane == 0) {atomic}",
            f"{ind}}}",
        ]
    lines.append("}")
    source = "\n".join(lines) + "\n"
    return KernelInfo(region.name, source, params, size, shape, red, acc_dt, itype)


def lower_to_cuda_c(core, example_args):
    """(kernel sources {name: CUDA C text}, plan) for a core function and example flat
    arguments (its params in order: the user's array leaves, then free variables)."""
    plan = gpu_plan.build_plan(core, example_args, lowerable)
    plan.consts = {s.out: s.value for s in plan.steps if isinstance(s, gpu_plan.ConstStep)}
    plan.kernels = {}
    for region in plan.regions():
        info = region_kernel(region, plan)
        plan.kernels[region.name] = info
        plan.source[region.name] = info.source
    return dict(plan.source), plan


def kernel_text(core, example_args):
    """All kernels of a core function as one text (what `show` prints for backend='cupy')."""
    sources, plan = lower_to_cuda_c(core, example_args)
    head = [f"// CUDA C kernels for {core.name} (transpile, backend='cupy')",
            "// Plan:"] + [f"//   {ln}" for ln in plan.describe().splitlines()]
    return "\n".join(head) + "\n\n" + "\n".join(sources.values())


# ---- NVRTC: CUDA C -> PTX without a GPU or driver ------------------------------------------------


def compile_to_ptx(source, name="kernel.cu", arch="compute_80", options=()):
    """Compile CUDA C to PTX text with NVRTC (no device needed). Uses CuPy's NVRTC binding
    (cupy_backends) when installed, else libnvrtc from the nvidia-cuda-nvrtc wheel by ctypes."""
    opts = [f"--gpu-architecture={arch}", "--std=c++14"] + list(options)
    try:
        from cupy_backends.cuda.libs import nvrtc   # (lazy: the [cuda] extra, GPU backends only)
    except ImportError:
        return _ptx_ctypes(source, name, opts)
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except Exception as e:
            log = nvrtc.getProgramLog(prog)
            raise RuntimeError(f"NVRTC failed to compile {name}:\n{log}\n--- source ---\n"
                               f"{source}") from e
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return ptx.decode() if isinstance(ptx, bytes) else ptx


def _nvrtc_library():
    import ctypes   # (lazy: only to find NVRTC)
    spec = importlib.util.find_spec("nvidia")
    paths = []
    for base in (spec.submodule_search_locations if spec else []):
        paths += glob.glob(os.path.join(base, "**", "libnvrtc.so*"), recursive=True)
    paths = [p for p in paths if "builtins" not in p]
    if not paths:
        raise ImportError("NVRTC not found: pip install nvidia-cuda-nvrtc (or cupy-cuda13x)")
    return ctypes.CDLL(sorted(paths)[0])


def _ptx_ctypes(source, name, opts):
    import ctypes   # (lazy: only to find NVRTC)
    lib = _nvrtc_library()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None,
                              None):
        raise RuntimeError("nvrtcCreateProgram failed")
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    if rc:
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        raise RuntimeError(f"NVRTC failed to compile {name}:\n{buf.value.decode()}")
    size = ctypes.c_size_t()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    buf = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.value.decode()
