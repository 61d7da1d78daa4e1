"""GPU backends without a GPU: generated CUDA C compiles to PTX with NVRTC (no driver needed),
numba.cuda kernels run under the CUDA simulator and match NumPy, errors are clear."""
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from transpile.api.pmap import psum  # noqa: E402
from transpile.api.autodiff import flat_example_args
from transpile.compile.gpu_programs import gpu_program, kernel_source

sys.path.insert(0, os.path.dirname(__file__))
from gpu_cases import cases, grad_sum_logistic, mlp_grad, mlp_args, poly, selu  # noqa: E402

try:
    from cupy_backends.cuda.libs import nvrtc as _nvrtc  # noqa: F401
    HAVE_NVRTC = True
except ImportError:
    try:
        from transpile.lowering.gpu.cuda_c import _nvrtc_library
        _nvrtc_library()
        HAVE_NVRTC = True
    except ImportError:
        HAVE_NVRTC = False

needs_nvrtc = pytest.mark.skipif(not HAVE_NVRTC, reason="NVRTC not installed "
                                 "(pip install nvidia-cuda-nvrtc or cupy-cuda13x)")

ALL = [(dt, label, fn, args) for dt in (np.float32, np.float64)
       for (label, fn, args) in cases(dt)]
IDS = [f"{label}-{np.dtype(dt).name}" for dt, label, _, _ in ALL]


def lowered(fn, args):
    from transpile.lowering.gpu.cuda_c import lower_to_cuda_c
    core, flat = flat_example_args(fn, *args)
    return lower_to_cuda_c(core, flat)


F64_OP = re.compile(r"^\s*[a-z][a-z0-9.]*\.f64\b", re.M)


@needs_nvrtc
@pytest.mark.parametrize("dt,label,fn,args", ALL, ids=IDS)
def test_every_kernel_compiles_to_ptx(dt, label, fn, args):
    from transpile.lowering.gpu.cuda_c import compile_to_ptx
    sources, plan = lowered(fn, args)
    assert sources, f"{label}: no fused region"
    for name, src in sources.items():
        ptx = compile_to_ptx(src, name + ".cu")
        assert f".entry {name}(" in ptx
        f64_ops = F64_OP.findall(ptx)
        if dt == np.float32:
            assert not f64_ops, f"float32 kernel {name} uses float64 ops: {f64_ops[:3]}"
            assert ".f32" in ptx
        else:
            assert f64_ops


@needs_nvrtc
def test_float32_transcendentals_use_f32_hardware_paths():
    from transpile.lowering.gpu.cuda_c import compile_to_ptx
    sources, _ = lowered(selu, [np.ones(10, np.float32)])
    ptx = compile_to_ptx(next(iter(sources.values())))
    assert "ex2.approx" in ptx and ".f32" in ptx and not F64_OP.findall(ptx)


@needs_nvrtc
def test_ctypes_nvrtc_path_matches():
    from transpile.lowering.gpu.cuda_c import _nvrtc_library, _ptx_ctypes
    try:
        _nvrtc_library()
    except ImportError:
        pytest.skip("nvidia-cuda-nvrtc wheel not installed (CuPy's binding is used instead)")
    sources, _ = lowered(poly, [np.ones((3, 4), np.float32)])
    name, src = next(iter(sources.items()))
    assert f".entry {name}(" in _ptx_ctypes(src, name, ["--gpu-architecture=compute_80"])


def test_float32_source_is_dtype_specialized():
    x32 = np.ones(5, np.float32)
    src = kernel_source(*flat_example_args(selu, x32), "cupy")
    assert "expf(x)" in src and "1.6732632f" in src and "double" not in src
    assert re.search(r"// line \d+: return scale \* np.where", src)
    assert "i += stride" in src            # grid-stride loop
    for line in src.splitlines():          # one statement per line in the loop body
        assert line.count(";") <= 1 or line.lstrip().startswith(("for", "//", "template",
                                                                   "__device__"))
    src64 = kernel_source(*flat_example_args(selu, x32.astype(np.float64)), "cupy")
    assert "exp(x)" in src64 and "expf" not in src64 and "const double" in src64
    assert "2.0f * x" in kernel_source(*flat_example_args(poly, x32), "cupy")


def test_grad_sum_logistic_is_one_kernel_recomputing_the_forward():
    sources, plan = lowered(grad_sum_logistic, [np.ones(100, np.float32)])
    assert len(sources) == 1
    region = plan.regions()[0]
    assert region.outputs == ["dx"] and region.reduction is None
    info = plan.kernels[region.name]
    assert [p.var for p in info.params if p.kind == "in"] == ["x"]   # dout is a literal
    assert {"out_2", "out_3", "out_4"} <= region.remat
    src = next(iter(sources.values()))
    assert "adjoint of line" in src and "dout_4 = 1.0f;" in src


def test_mlp_plan_uses_matmul_ops_and_fused_elementwise():
    _, plan = lowered(mlp_grad, mlp_args(np.float32))
    text = plan.describe()
    assert "np.matmul" in text and "kernel mlp_loss__grad_k0" in text
    # the loss value (mean) is dead in grad: check_scalar_output and reduced_count only need
    # shapes, so they are folded to constants and the forward mean is never computed
    assert "constant dout_5" in text and "reduced_count" not in text
    assert all(r.reduction is None for r in plan.regions())
    _, plan = lowered(mlp_args.__globals__["mlp_loss"], mlp_args(np.float32))
    assert [r.reduction.prim.name for r in plan.regions() if r.reduction] == ["mean"]


def test_broadcast_indexing_of_bias():
    from transpile.lowering.gpu.kernel_info import index_expr
    assert index_expr((3,), (5, 3)) == "i % 3"
    assert index_expr((5, 1), (5, 3)) == "i / 3"
    assert index_expr((), (5, 3)) == "0"
    assert index_expr((4, 1, 3), (4, 2, 3)) == "((i / 6) * 3) + (i % 3)"
    src = kernel_source(*flat_example_args(mlp_args.__globals__["mlp_layer"],
                                           np.ones((4, 3), np.float32),
                                           np.ones(3, np.float32),
                                           np.ones((5, 4), np.float32)), "cupy")
    assert "p_b[i % 3]" in src and "tanhf(out_2)" in src


def test_numba_cuda_source_text():
    src = kernel_source(*flat_example_args(selu, np.ones(5, np.float32)), "cuda")
    assert "@cuda.jit" in src and "for i in range(cuda.grid(1), n, cuda.gridsize(1)):" in src
    assert "math.exp(x)" in src and "float32(1.6732632)" in src
    assert re.search(r"# line \d+: return scale", src)
    compile(src.split("\n\n", 1)[1], "<kernel>", "exec")


SIM_SCRIPT = r"""
import json, os, sys, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
from gpu_cases import cases
from transpile.api.autodiff import Plain, Transform
from transpile.api.autodiff import flat_example_args
from transpile.compile.gpu_programs import gpu_program
res = []
for dt in (np.float32, np.float64):
    for label, fn, args in cases(dt):
        core, flat = flat_example_args(fn, *args)
        out = gpu_program(core, flat, "cuda")(*flat)
        t = fn if isinstance(fn, Transform) else Plain(fn)
        ref = t(*args)
        ref = list(ref) if isinstance(ref, tuple) else [ref]
        err = max(float(np.max(np.abs(np.asarray(o, np.float64) - np.asarray(r, np.float64))
                            / max(1.0, float(np.max(np.abs(r))))))
                  for o, r in zip(out, ref))   # relative to the output's magnitude
        res.append(dict(label=label, dtype=np.dtype(dt).name, err=err,
                        dtypes=[np.asarray(o).dtype.name for o in out],
                        ref_dtypes=[np.asarray(r).dtype.name for r in ref]))
from gpu_cases import exp2_plus_one as g
x = np.linspace(0, 1, 40)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    core, flat = flat_example_args(g, x)
    prog = gpu_program(core, flat, "cuda")
    out = prog(*flat)
    out2 = prog(*flat)
fallback = dict(err=float(np.max(np.abs(out[0] - g(x)))),
                warnings=[str(m.message) for m in w if "transpile[cuda]" in str(m.message)])
print("RESULT" + json.dumps(dict(cases=res, fallback=fallback)))
"""


@pytest.fixture(scope="module")
def sim_results():
    pytest.importorskip("numba.cuda", reason="numba-cuda not installed")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", SIM_SCRIPT, os.path.dirname(__file__)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")][0]
    return json.loads(line[6:])


def test_numba_cuda_kernels_match_numpy_under_simulator(sim_results):
    assert len(sim_results["cases"]) == 12
    for r in sim_results["cases"]:
        tol = 1e-5 if r["dtype"] == "float32" else 1e-12
        assert r["err"] <= tol, r
        assert r["dtypes"] == r["ref_dtypes"], r     # float32 in, float32 out


def test_unlowered_construct_falls_back_with_one_warning(sim_results):
    fb = sim_results["fallback"]
    assert fb["err"] < 1e-12
    assert len(fb["warnings"]) == 1 and "np.exp2" in fb["warnings"][0]
    assert "array-library ops" in fb["warnings"][0]


def test_cupy_backend_without_device_says_so():
    pytest.importorskip("cupy")
    from transpile.lowering.gpu.cupy_backend import GPUUnavailable, device_available
    if device_available():
        pytest.skip("a GPU is visible here; tests/test_gpu_device.py covers it")
    core, flat = flat_example_args(poly, np.ones(4, np.float32))
    prog = gpu_program(core, flat, "cupy")       # lowering needs no device
    with pytest.raises(GPUUnavailable, match="no CUDA device is visible"):
        prog(*flat)


def test_cupy_missing_says_what_to_install(monkeypatch):
    from transpile.lowering.gpu.cupy_backend import GPUUnavailable, import_cupy
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(GPUUnavailable, match=r'pip install "transpile\[cuda\]"'):
        import_cupy()


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown GPU backend"):
        kernel_source(None, [], "opencl")


def rebinds(x):
    y = np.sin(x) * 0.75 + np.cos(x) * 0.25
    y = np.sin(y) * 0.75 + np.cos(y) * 0.25
    y = y * y
    return y


@needs_nvrtc
def test_rebinding_a_name_gives_distinct_kernel_variables():
    """`y = f(y)` several times: one output parameter, no redeclared C variable (NVRTC would
    refuse the kernel with 'duplicate parameter name')."""
    from transpile.lowering.gpu.cuda_c import compile_to_ptx
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    sources, plan = lowered(rebinds, [x])
    (src,) = sources.values()
    params = re.findall(r"\bp_\w+", src.split("{")[0])
    assert len(params) == len(set(params)) == 2, params
    declared = re.findall(r"const float (\w+) =", src)
    assert len(declared) == len(set(declared))
    compile_to_ptx(src, "rebinds.cu")


def test_rebinding_runs_right_under_the_simulator():
    import subprocess
    import sys
    code = ("import numpy as np, sys; sys.path.insert(0, 'tests');"
            "from test_gpu_codegen import rebinds;"
            "from transpile.api.autodiff import flat_example_args;"
            "from transpile.compile.gpu_programs import gpu_program;"
            "x = np.linspace(-1, 1, 37);"
            "core, flat = flat_example_args(rebinds, x);"
            "out = gpu_program(core, flat, 'cuda')(*flat)[0];"
            "y = np.sin(x) * 0.75 + np.cos(x) * 0.25; y = np.sin(y) * 0.75 + np.cos(y) * 0.25;"
            "print(float(np.max(np.abs(out - y * y))))")
    env = dict(__import__("os").environ, NUMBA_ENABLE_CUDASIM="1")
    root = __import__("os").path.dirname(__import__("os").path.dirname(__file__))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=root, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.split()[-1]) < 1e-12


def psum_normalize(x):
    return x / psum(x, "i") + 1.0


def test_planning_never_calls_a_collective():
    """Planning runs outside the shards' rendezvous: a psum must be planned as an array op
    from its operand's shape, never executed (executing it outside pmap raises)."""
    x = np.linspace(1, 2, 9, dtype=np.float32)
    sources, plan = lowered(psum_normalize, [x])
    ops = [s.eqn.prim.path for s in plan.steps if type(s).__name__ == "OpStep"]
    assert ops == ["rt.psum"]
    assert plan.avals[[s.eqn.out for s in plan.steps
                       if type(s).__name__ == "OpStep"][0]].dtype == np.float32
