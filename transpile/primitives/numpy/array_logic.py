"""Whole-array logic: np.isin (and invert=) and np.array_equal (np.allclose is written as
bool(np.all(np.isclose(...))) by ufunc_methods.rewrite)."""
import numpy as np

from transpile.core.ir import Var
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim


# ---- np.isin ---------------------------------------------------------------------------------------


def _isin_form(lw, eqn):
    if NF._const(eqn, "kind") is not None or NF._const(eqn, "invert", False) not in (True, False):
        return None
    a, b, out = eqn.args["element"], eqn.args["test_elements"], eqn.out
    av, bv = (lw.av(v) if isinstance(v, Var) else None for v in (a, b))
    if bv is None or av is None:
        return None
    hit = "not " if NF._const(eqn, "invert", False) else ""
    srt = f"{out}_t"
    lines = [f"{srt} = np.sort(np.ascontiguousarray({lw.fmt(b)}).ravel())"]
    find = (f"{out}_j = np.searchsorted({srt}, {{v}})",
            f"{{dst}} = {hit}({out}_j < {srt}.shape[0] and {srt}[min({out}_j, {srt}.shape[0] - "
            f"1)] == {{v}})")
    if not av.shape:
        return lines + [find[0].format(v=lw.fmt(a)),
                        find[1].format(v=lw.fmt(a), dst=out)]
    return lines + [f"{out} = np.empty({NF._shape(av.shape)}, np.bool_)",
                    f"{out}_f = {out}.ravel()",
                    f"for {out}_k, {out}_v in enumerate(np.ascontiguousarray({lw.fmt(a)}).ravel()):",
                    "    " + find[0].format(v=f"{out}_v"),
                    "    " + find[1].format(v=f"{out}_v", dst=f"{out}_f[{out}_k]")]


defprim("isin", np.isin, "np.isin", "element, test_elements, assume_unique=False, invert=False, "
        "*, kind=None", nondiff=True, batch=per_example, numba=_isin_form, bool_result=True,
        sized_by=())


# ---- np.allclose, np.array_equal ------------------------------------------------------------------


# np.allclose(a, b, ...) is written bool(np.all(np.isclose(a, b, ...))), as NumPy computes it
# (`rewrite`)


def _array_equal_form(lw, eqn):
    a, b, out = eqn.args["a1"], eqn.args["a2"], eqn.out
    sa = lw.av(a).shape if isinstance(a, Var) else np.shape(a.value)
    sb = lw.av(b).shape if isinstance(b, Var) else np.shape(b.value)
    if sa != sb:
        return "False"      # shapes differ: False, as in NumPy
    nan = NF._const(eqn, "equal_nan", False)
    if nan not in (True, False):
        return None
    x, y = f"{out}_x", f"{out}_y"
    same = f"{x} == {y}" + (f" or ({x} != {x} and {y} != {y})" if nan else "")
    it = (f"zip(np.ascontiguousarray({lw.fmt(a)}).ravel(), "
          f"np.ascontiguousarray({lw.fmt(b)}).ravel())") if sa else \
        f"(({lw.fmt(a)}, {lw.fmt(b)}),)"
    return [f"{out} = True", f"for {x}, {y} in {it}:", f"    if not ({same}):",
            f"        {out} = False", "        break"]


defprim("array_equal", np.array_equal, "np.array_equal", "a1, a2, equal_nan=False",
        nondiff=True, batch=per_example, numba=_array_equal_form, bool_result=True,
        scalar_result=True, sized_by=())
