"""Where each kernel of tests/foreign_kernels.py stands under jit, grad and jit(grad), and the
XFAIL tables of tests/test_foreign_kernels.py regenerated from it.

    python devtools/foreign_kernels_status.py [jit|grad|jit(grad)|all] [kernel ...]

Runs the same checks as tests/test_foreign_kernels.py (fallback as an error), prints one line
per kernel (ok, or the exception and its first line), then the XFAIL_JIT / XFAIL_GRAD tables
for the transforms run, to paste over the ones in the test file once the compiler changes.
"""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "tests")))
os.environ.setdefault("TRANSPILE_CACHE_DIR", "/tmp/tp-foreign-status")
os.environ.setdefault("TRANSPILE_TIERS", "0")      # as tests/conftest.py: calls compile first

import foreign_kernels as fk  # noqa: E402
import test_foreign_kernels as T  # noqa: E402
from transpile.errors import TranspileError  # noqa: E402

TESTS_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "tests")) + os.sep


def outcome(k, transform):
    try:
        if transform == "jit":
            T.test_jit_matches_numpy(k)
        else:
            T._check_grad(k, transform)
        return None
    except Exception as e:              # noqa: BLE001 - every failure is reported
        lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
        if isinstance(e, AssertionError):
            text = "WRONG: " + " | ".join(lines[:3])
        else:
            text = lines[0] if lines else ""
        cls = "TranspileError" if isinstance(e, TranspileError) else type(e).__name__
        text = text.replace(TESTS_DIR, "").replace('"', "'")
        return cls, f"{type(e).__name__}: {text[:300]}"


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    names = sys.argv[2:]
    kernels = [fk.BY_NAME[n] for n in names] if names else fk.KERNELS
    transforms = ["jit", "grad", "jit(grad)"] if which == "all" else [which]
    tables = {t: {} for t in transforms}
    for t in transforms:
        for k in kernels:
            if t != "jit" and k.loss is None:
                continue
            r = outcome(k, t)
            print(f"{t:10} {k.name:26} {'ok' if r is None else r[1]}", flush=True)
            if r is not None:
                tables[t][k.name] = r
    total = {t: sum(1 for k in kernels if t == "jit" or k.loss is not None) for t in transforms}
    for t in transforms:
        print(f"# {t}: {total[t] - len(tables[t])}/{total[t]} right without fallback")
    if "jit" in tables:
        print("XFAIL_JIT = {")
        for name, (cls, text) in tables["jit"].items():
            print(f'    "{name}": ({cls}, "{text}"),')
        print("}")
    grads = [t for t in transforms if t != "jit"]
    if grads:
        print("XFAIL_GRAD = {")
        for t in grads:
            for name, (cls, text) in tables[t].items():
                print(f'    ("{t}", "{name}"): ({cls}, "{text}"),')
        print("}")


if __name__ == "__main__":
    main()
