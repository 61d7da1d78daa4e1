"""How often each transform is right, wrong, refused or falls back on random NumPy programs.

    python bench/random_program_rates.py [count] [kinds]
        (kinds: a,b,c, "mutation", "foreign" or "python": the Python-language constructs)
    RATES_DUMP=errors.txt python bench/random_program_rates.py ...   (each error's, wrong
                                                                      number's or fallback's
                                                                      program)
    RATES_ONLY=jit,jit(vmap) python bench/random_program_rates.py ...  (those transforms only)

Draws `count` programs (tests/random_programs.py: branches, loops, writes, aliases, helper
calls) and runs NumPy, jit, grad, jit(grad), jvp, vmap, vmap(grad), grad(vmap), jit(vmap) and
jit(vmap(grad)) on each, comparing with NumPy, central finite differences and a per-example
loop. Prints, per transform: ok / wrong number / error / jit fallback, and the most common
error messages. A wrong number is the outcome that matters most.
"""
import collections
import os
import re
import sys
import warnings

import numpy as np

os.environ.setdefault("TRANSPILE_TIERS", "0")   # calls wait for the compiler: the compiled tier is what is counted

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
os.environ.setdefault("TRANSPILE_CACHE_DIR", "/tmp/tp-random-rates")

from hypothesis import HealthCheck, given, settings  # noqa: E402

import random_programs as rp  # noqa: E402
import transpile as tp  # noqa: E402
from transpile.errors import TranspileWarning  # noqa: E402


def close(a, b, tol=1e-6):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def batch_total(f):
    """z -> sum(vmap(f)(z)): its gradient is the stack of per-example gradients."""
    batched = tp.vmap(f)

    def total(z):
        return np.sum(batched(z))
    return total


def run_one(src, x, results, errors):
    mod = rp.load(src)
    f = mod.f
    want = f(x.copy())
    fd = rp.numgrad(lambda z: f(z.copy()), x)
    fd2 = rp.numgrad(lambda z: f(z.copy()), x, eps=1e-5)
    smooth = np.allclose(fd, fd2, rtol=1e-4, atol=1e-4)
    xs = np.stack([x, x * 0.5 - 0.1, x + 0.3])
    # the per-example gradients: central differences at two steps, extrapolated (Richardson);
    # a row where the two steps disagree (a kink, or curvature that swamps the step) is not
    # checked, as the first row is not where fd and fd2 disagree
    rows = []
    for r in xs:
        h1 = rp.numgrad(lambda z: f(z.copy()), r)
        h2 = rp.numgrad(lambda z: f(z.copy()), r, eps=5e-7)
        smooth = smooth and np.allclose(h1, h2, rtol=1e-3, atol=1e-4)
        rows.append((4 * h2 - h1) / 3)
    rows = np.stack(rows)
    checks = {
        "jit": (lambda: tp.jit(f)(x.copy()), want),
        "grad": (lambda: tp.grad(f)(x.copy()), fd),
        "jit(grad)": (lambda: tp.jit(tp.grad(f))(x.copy()), fd),
        "jvp": (lambda: tp.jvp(f, (x.copy(),), (np.ones_like(x),))[1], np.sum(fd)),
        "vmap": (lambda: tp.vmap(f)(xs.copy()), np.array([f(r.copy()) for r in xs])),
        "vmap(grad)": (lambda: tp.vmap(tp.grad(f))(xs.copy()), rows),
        "grad(vmap)": (lambda: tp.grad(batch_total(f))(xs.copy()), rows),
        "jit(vmap)": (lambda: tp.jit(tp.vmap(f))(xs.copy()),
                      np.array([f(r.copy()) for r in xs])),
        "jit(vmap(grad))": (lambda: tp.jit(tp.vmap(tp.grad(f)))(xs.copy()), rows),
    }
    only = os.environ.get("RATES_ONLY")
    for name, (fn, expect) in checks.items():
        if only and name not in only.split(","):
            continue
        if "grad" in name or name == "jvp":
            if not smooth:
                continue
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always", TranspileWarning)
            try:
                got = fn()
            except Exception as e:   # noqa: BLE001 - we tally every failure kind
                results[name]["error"] += 1
                errors[name][f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"] += 1
                if os.environ.get("RATES_DUMP"):       # the program and the whole error
                    with open(os.environ["RATES_DUMP"], "a") as dump:
                        dump.write(f"==== {name}: {type(e).__name__}: {e}\n{src}\n")
                continue
        fell_back = any(issubclass(m.category, TranspileWarning) for m in w)
        tol = 1e-4 if "grad" in name or name == "jvp" else 1e-8
        if not close(got, expect, tol):
            results[name]["WRONG"] += 1
            errors[name]["WRONG: " + src.replace("\n", " | ")[:300]] += 1
            if os.environ.get("RATES_DUMP"):
                with open(os.environ["RATES_DUMP"], "a") as dump:
                    dump.write(f"==== {name}: WRONG at x = {x.tolist()}\n{src}\n")
        elif fell_back:
            results[name]["fallback"] += 1
            msg = str([m.message for m in w if issubclass(m.category, TranspileWarning)][0])
            msg = re.sub(r"/\S*/tp_random_\d+\.py:\d+", "<program>:<line>", msg)
            errors[name]["fallback: " + msg[:110]] += 1
            if os.environ.get("RATES_DUMP"):
                with open(os.environ["RATES_DUMP"], "a") as dump:
                    dump.write(f"==== {name}: fallback: {msg}\n{src}\n")
        else:
            results[name]["ok"] += 1


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    kinds = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else tuple(rp.ALL_KINDS)
    if kinds == ("mutation",):
        kinds = tuple(rp.MUTATION_KINDS)
    elif kinds == ("foreign",):
        kinds = tuple(rp.FOREIGN_KINDS)
    elif kinds == ("python",):
        kinds = tuple(rp.PYTHON_ALL_KINDS)
    results = collections.defaultdict(collections.Counter)
    errors = collections.defaultdict(collections.Counter)
    rng = np.random.default_rng(0)

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(rp.programs(kinds=kinds))
    def drive(prog):
        src, _ = prog
        run_one(src, rng.normal(size=rp.N), results, errors)

    drive()
    print(f"{count} random programs, statement kinds: {', '.join(kinds)}")
    print(f"{'transform':16} {'ok':>5} {'WRONG':>6} {'error':>6} {'fallback':>9}")
    for name, c in results.items():
        print(f"{name:16} {c['ok']:5d} {c['WRONG']:6d} {c['error']:6d} {c['fallback']:9d}")
    for name, c in errors.items():
        print(f"\n{name}:")
        for msg, k in c.most_common(6):
            print(f"  {k:3d}  {msg}")


if __name__ == "__main__":
    main()
