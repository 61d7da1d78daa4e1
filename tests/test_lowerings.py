"""Every row says how each backend lowers it (registry.py, '# lowerings'): the Numba CPU
scalar form (`lower`), CUDA C (`cuda_c`) and numba.cuda (`numba_cuda`). These tests keep the
rows honest: an elementwise row without a Numba CPU form, or a row that fuses on the CPU but
misses a GPU form, must be listed below with the reason, so a new row that forgets one shows
up here. The GPU forms of every row are compiled (NVRTC) and run (CUDA simulator) against
NumPy, one generated function per row."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special  # noqa: F401  (binds the scipy.special rows' aliases)
import scipy.stats  # noqa: F401

from transpile import jit
from transpile.primitives.registry import REQUIRED, all_primitives

ROWS = all_primitives(builtin_only=True)

# Elementwise rows with no Numba CPU scalar form: jit runs them as whole-array calls (a fused
# loop stops before them and starts again after).
NO_CPU_FORM = {
    # control-flow and assignment helpers: they decide on a whole value (is it an array? which
    # dtype does the target have?) or only move buffers, there is no per-element arithmetic
    "assign", "if_array", "float_part", "cast_into", "shape_like", "shape_only", "added_to_zero",
    # complex-number helpers of the derivatives of np.abs / np.angle / real parts: they branch
    # on whether the array is complex; the fused loops are typed per real dtype
    "match_complex", "angle_jvp", "angle_vjp", "abs_factor", "abs_factor_jvp", "abs_factor_vjp",
    # SciPy functions with no scalar implementation available to Numba (Bessel functions,
    # incomplete gamma/beta and the distributions built on them): SciPy runs them
    "special_beta", "special_betainc", "special_gammainc", "special_gammaincc", "special_i0",
    "special_i0e", "special_i1", "special_i1e", "i1_over_x", "i1e_over_x",
    "stats_t_cdf", "stats_t_logcdf", "stats_gamma_logpdf", "stats_gamma_pdf", "stats_gamma_cdf",
    "stats_beta_logpdf", "stats_beta_pdf", "stats_beta_cdf", "stats_poisson_logpmf",
    "stats_poisson_pmf", "stats_poisson_cdf",
}

# Rows the CPU loops fuse but the GPU backends do not: the GPU plans run them as array-library
# calls (CuPy / NumPy under the simulator), after a warning naming them.
_SCIPY_CPU_ONLY = {
    # SciPy rows whose Numba forms call transpile_runtime's Numba scalar functions
    # (erfinv_scalar, digamma_scalar, ...); no CUDA form written yet
    "special_betaln", "special_digamma", "special_erf", "special_erfc", "special_erfinv",
    "special_expit", "special_gamma", "special_gammaln", "special_log_ndtr", "special_logit", "special_ndtr",
    "special_polygamma", "special_xlog1py", "special_xlogy", "stats_norm_cdf",
    "stats_norm_logcdf", "stats_norm_logpdf", "stats_norm_logsf", "stats_norm_pdf",
    "stats_norm_sf", "stats_t_logpdf", "stats_t_pdf",
}
_NO_GPU_FORM_YET = {
    # complex parts (the GPU kernels are typed for real dtypes only)
    "real", "imag", "conj", "angle",
    # bitwise operators, Python's math.floor/ceil/trunc on scalars, and NumPy functions whose
    # CUDA form is not written yet
    "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift",
    "math_ceil", "math_floor", "math_trunc", "deg2rad", "rad2deg", "fmod", "heaviside",
    "fmax", "fmin", "float_power", "complex",
    "logaddexp2", "nan_to_num", "sinc", "sinc_at_zero", "isclose",
    # the derivative mask of np.clip: its row is a runtime helper that the GPU plans never
    # fuse (not elementwise for them), so it has no GPU form
    "clip_mask",
}
NO_CUDA_C = _SCIPY_CPU_ONLY | _NO_GPU_FORM_YET
NO_NUMBA_CUDA = NO_CUDA_C | {
    # CUDA C has these through its C math library or a preamble helper; Python's math module
    # has no exp2, cbrt, rint, signbit, and no numba.cuda helper is written for the others
    "exp2", "cbrt", "rint", "signbit", "round", "clip", "logaddexp", "logical_xor", "mod",
    "floor_divide",
}


def names(rows):
    return {p.name for p in rows}


def test_every_elementwise_row_has_a_numba_cpu_form_or_a_listed_reason():
    missing = names(p for p in ROWS if p.elementwise and p.lower is None)
    assert missing - NO_CPU_FORM == set(), "elementwise rows without lower= (add one, or " \
        "list the row in NO_CPU_FORM with the reason)"
    assert NO_CPU_FORM - missing == set(), "listed in NO_CPU_FORM but has lower= (or is gone)"


def test_rows_the_cpu_loops_fuse_without_a_gpu_form_are_the_listed_ones():
    cpu = [p for p in ROWS if p.lower is not None]
    assert names(p for p in cpu if p.cuda_c is None) == NO_CUDA_C
    assert names(p for p in cpu if p.numba_cuda is None) == NO_NUMBA_CUDA


def test_gpu_only_forms_are_the_broadcast_helpers():
    """rt.sum_grad / rt.broadcast_like: a broadcast load on the GPU (specialization rewrites
    them away before the CPU loops see them)."""
    gpu_only = [p for p in ROWS if p.lower is None and (p.cuda_c or p.numba_cuda)]
    assert names(gpu_only) == {"sum_grad", "broadcast_like"}
    for p in gpu_only:
        assert p.bcast_operand == p.params[0].name and p.operands == (p.bcast_operand,)


def test_lowering_fields_name_real_arguments_and_known_accumulations():
    for p in ROWS:
        params = {q.name for q in p.params}
        for field in ("operands", "uncast"):
            assert set(getattr(p, field) or ()) <= params, (p.name, field)
        assert p.bcast_operand in params | {None}, p.name
        assert p.reduce in (None, "sum", "mean", "max", "min", "prod"), p.name
        assert set(p.lower_loop) <= {"float32", "float64"}, p.name
    assert {p.name: p.reduce for p in ROWS if p.reduce} == \
        {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod"}


def test_truth_rows_give_bools_and_logical_rows_read_truth_values():
    """`truth` (the Numba loops store the scalar form uncast) only where NumPy's result is
    bool for float operands; `logical` (GPU forms compute in bool) only on logical ops."""
    x = np.array([-1.5, 0.0, 2.5, np.nan, np.inf])
    y = np.array([0.5, 0.0, 2.5, 1.0, -np.inf])
    for p in ROWS:
        if not p.truth:
            continue
        args = [x, y][:len([q for q in p.params if q.default is REQUIRED])]
        assert np.asarray(p.impl(*args)).dtype == np.bool_, p.name
    assert names(p for p in ROWS if p.logical) == \
        {"logical_and", "logical_or", "logical_xor", "logical_not", "where"}


# ---- the GPU forms against NumPy, one generated function per row ----------------------------

# how a row is called when its required arguments are not just (x) or (x, y)
CALLS = {"where": "np.where(x > 0.5, x, y)", "clip": "np.clip(x, 0.3, 0.6)",
         "round": "np.round(x, 1)", "arccosh": "np.arccosh(x + 1.0)", "astype": None,
         "ldexp": "np.ldexp(x, 3)"}
# rows the integer pass and the pass with NaN, inf, -0.0 and huge values cover too (the
# simulator runs Python's math module, which raises where CUDA gives NaN: log, sqrt, sin, ...
# are left out of that pass)
INT_ROWS = {"add", "subtract", "multiply", "negative", "positive", "square", "absolute",
            "maximum", "minimum", "sign", "floor", "ceil", "rint", "trunc", "isnan", "isinf",
            "isfinite", "signbit", "floor_divide", "mod", "greater", "greater_equal", "less",
            "less_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_xor",
            "logical_not", "where", "copysign", "fabs", "ldexp"}


def _gpu_rows(field):
    rows = []
    for p in ROWS:
        if getattr(p, field) is None or not p.path.startswith("np."):
            continue
        required = [q.name for q in p.params if q.default is REQUIRED and q.kind == "pos"]
        call = CALLS.get(p.name, f"{p.path}({', '.join(required)})" if
                         required in (["x"], ["x", "y"]) else None)
        if call is not None:
            rows.append((p.name, call))
    return sorted(rows)


def _module(tmp_path, field):
    rows = _gpu_rows(field)
    src = "import numpy as np\n\n" + "\n".join(
        f"def f_{name}(x, y):\n    return {call}\n" for name, call in rows)
    path = tmp_path / f"rows_{field}.py"
    path.write_text(src)
    return path, rows


RUN_ROWS = r"""
import importlib.util, json, sys, warnings
import numpy as np
from transpile.api.autodiff import flat_example_args
from transpile.compile.gpu_programs import gpu_program
from transpile.lowering.gpu.cuda_c import lower_to_cuda_c, compile_to_ptx
path, backend, rows, int_rows = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), set(json.loads(sys.argv[4]))
spec = importlib.util.spec_from_file_location("rows_mod", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
rng = np.random.default_rng(1)
out = []
for dtype in ("float32", "float64", "int64", "special"):
    if dtype == "int64":
        x, y = rng.integers(-7, 8, 37), rng.integers(1, 6, 37)
    elif dtype == "special":      # NaN, infinities, signed zeros and large values
        x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 2.0 ** 60, -2.0 ** 60, 1e300, -2.5,
                      2.5, -0.5, 3.0])
        y = np.array([1.0, 2.0, np.nan, 0.0, -0.0, 3.0, np.inf, -1.0, -2.5, 1.0, 0.5, 3.0])
    else:
        x, y = rng.uniform(0.1, 0.9, 37).astype(dtype), rng.uniform(0.1, 0.9, 37).astype(dtype)
    for name in rows:
        if dtype in ("int64", "special") and name not in int_rows:
            continue
        fn = getattr(mod, "f_" + name)
        with np.errstate(all="ignore"):
            ref = np.asarray(fn(x, y))
        core, flat = flat_example_args(fn, x, y)
        r = dict(name=name, dtype=dtype)
        if backend == "cupy":
            sources, plan = lower_to_cuda_c(core, flat)
            r["kernels"] = len(sources)
            r["ptx"] = all(".entry " + k + "(" in compile_to_ptx(s, k + ".cu")
                           for k, s in sources.items())
        else:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                prog = gpu_program(core, flat, "cuda")
                try:
                    res = np.asarray(prog(*flat)[0])
                except Exception as e:
                    r["error"] = f"{type(e).__name__}: {str(e)[-300:]}"
                    out.append(r)
                    continue
            r["kernels"] = len(prog.plan.regions()) if getattr(prog, "plan", None) else 0
            r["warned"] = [str(m.message) for m in w if "transpile[" in str(m.message)]
            r["dtype_out"], r["dtype_ref"] = res.dtype.name, ref.dtype.name
            r["exact"] = bool(np.array_equal(res, ref, equal_nan=res.dtype.kind == "f"))
            r["same_nan"] = bool(np.array_equal(np.isnan(res.astype(float)), np.isnan(ref.astype(float))))
            ok = ~np.isnan(ref.astype(float))
            d = np.abs(res.astype(float)[ok] - ref.astype(float)[ok])
            r["err"] = float(np.max(d / np.maximum(1.0, np.abs(ref.astype(float)[ok])))) if d.size else 0.0
        out.append(r)
print("RESULT" + json.dumps(out))
"""


def _run(tmp_path, field, backend, env_extra=None):
    path, rows = _module(tmp_path, field)
    env = dict(os.environ, **(env_extra or {}))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, "-c", RUN_ROWS, str(path), backend,
                        json.dumps([n for n, _ in rows]), json.dumps(sorted(INT_ROWS))],
                       env=env, capture_output=True, text=True, timeout=900, cwd=root)
    assert p.returncode == 0, p.stderr[-4000:]
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")][0]
    return rows, json.loads(line[6:])


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc  # noqa: F401
        return True
    except ImportError:
        try:
            from transpile.lowering.gpu.cuda_c import _nvrtc_library
            _nvrtc_library()
            return True
        except ImportError:
            return False


@pytest.mark.skipif(not _nvrtc(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")
def test_every_cuda_c_form_compiles_in_one_kernel(tmp_path):
    rows, results = _run(tmp_path, "cuda_c", "cupy")
    assert len(rows) >= 50
    assert {r["name"] for r in results} == {n for n, _ in rows}
    for r in results:
        assert r["kernels"] == 1 and r["ptx"], r


def test_every_numba_cuda_form_matches_numpy_under_the_simulator(tmp_path):
    pytest.importorskip("numba.cuda", reason="numba-cuda not installed")
    rows, results = _run(tmp_path, "numba_cuda", "cuda", {"NUMBA_ENABLE_CUDASIM": "1"})
    assert len(rows) >= 40
    assert {r["name"] for r in results} == {n for n, _ in rows}
    for r in results:
        assert "error" not in r, r
        assert r["kernels"] == 1 and not r["warned"], r       # lowered, not an array op
        tol = 2e-6 if r["dtype"] == "float32" else 1e-12
        if r["dtype"] == "special":
            assert r["exact"], r       # NaN where NumPy has NaN, inf where it has inf
        else:
            assert r["same_nan"] and r["err"] <= tol, r
        assert r["dtype_out"] == r["dtype_ref"], r


# ---- a row whose optional argument is given as None fuses (clip, nan_to_num) ----------------


def n2n(x):
    return np.nan_to_num(np.log(x - 0.5), posinf=None, nan=1.0) * 2.0 + np.clip(x, None, 0.7)


def test_optional_arguments_given_as_none_fuse_and_match_numpy():
    x = np.array([0.2, 0.5, 0.75, 1.5, 3.0])
    f = jit(n2n)
    src = f.source_for(x)
    # one fused loop (its length read from x at run time)
    assert "fused loop over (x__n0,): subtract, log, nan_to_num, multiply, clip, add" in src
    with np.errstate(all="ignore"):
        ref = n2n(x)
        got = f(x)
    np.testing.assert_allclose(got, ref, rtol=1e-15)
    assert f.last_tier == "compiled"
