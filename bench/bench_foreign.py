"""The foreign-style corpus side by side: jit vs plain NumPy vs numba.njit of the same code.

    python bench/bench_foreign.py [scale] [name ...]   # scale 1 (default): ~15 minutes
    python bench/bench_foreign.py --shard 0/4 --json rows0.json   # every 4th kernel
    python bench/bench_foreign.py --merge rows0.json rows1.json ...   # the summary of shards

Every kernel of tests/foreign_kernels.py runs at its `bench_size` (times `scale` where the size
is a length): plain NumPy (the function itself), `transpile.jit` after a warm-up call, and
`numba.njit` of the same unmodified function after a warm-up call ("n/a" where Numba does not
compile it). Each time is the best of 3 to 20 runs (about 0.15 s of runs) on fresh arguments
(argument construction not timed). On a shared machine, rerun before trusting a single ratio. Columns:

    jit/np    < 1: jit faster than NumPy       jit/nb   < 1: jit faster than numba.njit
    status    ok / FALLBACK (a TranspileWarning: jit ran NumPy) / WRONG (differs from NumPy)
              / ERROR (jit raised)

The last lines: how many kernels jit compiled without fallback and got right, how many Numba
compiles and gets right, and geometric means of the ratios (over kernels where both sides ran
and jit's result was right; the fallback rows are excluded from the jit/np mean and counted).
"""
import json
import math
import os
import sys
import time
import warnings

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # steady-state times: calls wait for the compiler

os.environ.setdefault("TRANSPILE_CACHE_DIR", "/tmp/tp-bench-foreign")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import foreign_kernels as fk  # noqa: E402
import transpile as tp  # noqa: E402
from transpile.errors import TranspileWarning  # noqa: E402

try:
    import numba
except ImportError:          # pragma: no cover
    numba = None

# per-kernel sizes for timing: Python loops under NumPy must stay around 0.1 s per call
SIZES = {
    "jacobi_loops": 100, "nbody_loops": 120, "wave_1d_loops": 20000, "box_blur_loops": 100,
    "convolve_1d": 50000, "pdist_loops": 120, "neighbours_within": 100,
    "histogram_counts": 200000, "fibonacci_mod": 300000, "weighted_fibonacci": 200000,
    "iir_biquad": 100000, "cumulative_max": 200000, "ewma_int_start": 200000,
    "logistic_orbit": 300000, "metropolis_gaussian": 50000, "popcount_loop": 10000,
    "gauss_seidel": 300, "math_scalars": 200000, "chained_assignment": 200000,
    "ndindex_fill": 30000, "gather_scatter": 200000, "int_then_float_acc": 200000,
    "raise_on_bad": 200000, "nbody_energy_leapfrog": 100,
    "polyline_lengths": 200,     # a list of tuples is written out: at most 256 items
}
BUDGET = 0.15          # seconds of timed runs per kernel and variant (at least one run)


def _close(got, want):
    if want is None:
        return got is None
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(
            _close(g, w) for g, w in zip(got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(
            _close(got[key], want[key]) for key in want)
    if isinstance(want, (str, bytes)):
        return got == want
    if isinstance(want, np.random.Generator):
        return got.bit_generator.state == want.bit_generator.state
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype.kind != w.dtype.kind:
        return False
    if w.dtype.kind in "biu":
        return bool(np.array_equal(g, w))
    return bool(np.allclose(g, w, rtol=1e-7, atol=1e-9, equal_nan=True))


def _same_run(fn, k, n, want, want_args):
    """Run fn on fresh arguments; True when its result and argument writes equal NumPy's."""
    args = k.args(n)
    got = fn(*args)
    return _close(got, want) and _close(list(args), list(want_args))


def _best(fn, k, n):
    times = []
    spent = 0.0
    while len(times) < 3 or (spent < BUDGET and len(times) < 20):
        args = k.args(n)
        t0 = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t0
        times.append(dt)
        spent += dt
    return min(times)


def _fmt_t(t):
    return "n/a" if t is None else (f"{t * 1e3:9.3f}ms" if t >= 1e-4 else f"{t * 1e6:8.1f}us")


def _fmt_r(r):
    return "n/a" if r is None else f"{r:7.2f}"


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def bench(k, scale):
    n = SIZES.get(k.name, k.bench_size)
    if n > 1 and scale != 1:
        n = max(2, int(n * scale))
    want_args = k.args(n)
    want = k.fn(*want_args)
    t_np = _best(k.fn, k, n)
    row = {"name": k.name, "n": n, "np": t_np, "jit": None, "nb": None}

    jitted = tp.jit(k.fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TranspileWarning)
        try:
            right = _same_run(jitted, k, n, want, want_args)
            fell_back = any(issubclass(w.category, TranspileWarning) for w in caught)
            row["status"] = "WRONG" if not right else ("FALLBACK" if fell_back else "ok")
            row["jit"] = _best(jitted, k, n)
        except Exception as e:          # noqa: BLE001 - a benchmark reports every failure
            row["status"] = f"ERROR {type(e).__name__}"
            print(f"{k.name}: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
    if numba is not None:
        try:
            nb = numba.njit(k.fn)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                nb_right = _same_run(nb, k, n, want, want_args)
                row["nb_status"] = "ok" if nb_right else "WRONG"
                row["nb"] = _best(nb, k, n)
        except Exception as e:          # noqa: BLE001 - Numba refuses: n/a
            row["nb_status"] = f"n/a ({type(e).__name__})"
    else:
        row["nb_status"] = "n/a (no numba)"
    return row


def summary(rows):
    total = len(rows)
    ok = [r for r in rows if r["status"] == "ok"]
    nb_ok = [r for r in rows if r["nb_status"] == "ok"]
    print(f"\njit compiled without fallback and right: {len(ok)}/{total}; "
          f"fell back: {sum(r['status'] == 'FALLBACK' for r in rows)}; "
          f"wrong: {sum(r['status'] == 'WRONG' for r in rows)}; "
          f"error: {sum(r['status'].startswith('ERROR') for r in rows)}")
    print(f"numba.njit of the same code compiles and is right: {len(nb_ok)}/{total}")
    print("not compiled or not right: "
          + str([(r["name"], r["status"]) for r in rows if r["status"] != "ok"]))
    slower = [r["name"] for r in ok if r["jit_np"] > 1.0]
    print(f"compiled kernels slower than NumPy: {len(slower)} {slower}")
    print(f"geomean jit/numpy  (compiled, right, {len(ok)}): "
          f"{_geomean([r['jit_np'] for r in ok]):.3f}")
    both = [r for r in ok if r["jit_nb"] is not None]
    print(f"geomean jit/njit   (both compiled and right, {len(both)}): "
          f"{_geomean([r['jit_nb'] for r in both]):.3f}")
    print(f"geomean njit/numpy (njit compiled and right, {len(nb_ok)}): "
          f"{_geomean([r['nb_np'] for r in nb_ok]):.3f}")


def main():
    """Options: --shard I/N runs every N-th kernel from the I-th (0-based); --json PATH writes
    the rows (after every kernel, so a shard stopped by a time limit keeps what it finished);
    --reverse runs the kernels last to first; --merge PATH... prints the summary of rows written
    by several shards."""
    argv = sys.argv[1:]
    if argv[:1] == ["--merge"]:
        rows = [r for path in argv[1:] for r in json.load(open(path))]
        summary(rows)
        return
    shard = json_path = None
    reverse = False
    while argv[:1] and argv[0] in ("--shard", "--json", "--reverse"):
        if argv[0] == "--reverse":
            reverse = True
            argv = argv[1:]
            continue
        if argv[0] == "--shard":
            i, n = argv[1].split("/")
            shard = (int(i), int(n))
        else:
            json_path = argv[1]
        argv = argv[2:]
    scale = float(argv[0]) if argv else 1.0
    names = argv[1:]
    kernels = [fk.BY_NAME[n] for n in names] if names else fk.KERNELS
    if reverse:
        kernels = kernels[::-1]
    if shard is not None:
        kernels = kernels[shard[0]::shard[1]]
    t_start = time.perf_counter()
    print(f"{'kernel':26} {'n':>7} {'numpy':>11} {'jit':>11} {'njit':>11} {'jit/np':>7} "
          f"{'jit/nb':>7} {'nb/np':>7}  jit status / njit status")
    rows = []
    for k in kernels:
        r = bench(k, scale)
        rows.append(r)
        good = r["status"] in ("ok", "FALLBACK") and r["jit"] is not None
        r["jit_np"] = r["jit"] / r["np"] if good else None
        r["jit_nb"] = r["jit"] / r["nb"] if good and r["nb"] and r["nb_status"] == "ok" else None
        r["nb_np"] = r["nb"] / r["np"] if r["nb"] and r["nb_status"] == "ok" else None
        print(f"{r['name']:26} {r['n']:7d} {_fmt_t(r['np']):>11} {_fmt_t(r['jit']):>11} "
              f"{_fmt_t(r['nb']):>11} {_fmt_r(r['jit_np']):>7} {_fmt_r(r['jit_nb']):>7} "
              f"{_fmt_r(r['nb_np']):>7}  {r['status']} / {r['nb_status']}", flush=True)
        if json_path:
            with open(json_path, "w") as out:
                json.dump(rows, out)
    summary(rows)
    print(f"({time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
