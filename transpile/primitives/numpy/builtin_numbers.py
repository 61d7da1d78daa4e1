"""Python's builtins complex(a, b) and round(x[, n]) in transformed code."""
import numpy as np

from transpile.core.ir import Var
from transpile.primitives.batching import rules as BR
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.numpy.stats import is_none
from transpile.primitives import numba_forms as NF
from transpile.primitives.registry import defprim
from transpile_runtime import numpy_rows as NR


# ---- builtins complex(a, b) and round(x[, n]) ---------------------------------------------------

complex_ = defprim("complex", [NR.complex_of, complex], "rt.complex_of", "real=0.0, imag=0.0",
                   batch=BR.elementwise,
                   vjp={"real": "np.real(g)", "imag": "np.real(1j * g)"},
                   jvp={"real": "real_dot + 0j", "imag": "1j * imag_dot"},
                   lower="complex({real}, {imag})", uncast=("real", "imag"), fresh=True,
                   construct="complex(...)")


def _round_form(lw, eqn):
    """round(x): the nearest int, ties to even; round(x, n): NumPy's rounding of a NumPy
    scalar, Python's (correctly rounded decimal) of a Python float, in object mode."""
    x, out = eqn.args["x"], eqn.out
    av = lw.av(x) if isinstance(x, Var) else None
    xt = lw.fmt(x)
    if av is not None and av.shape:
        return None
    kind = av.dtype.kind if av is not None else np.asarray(x.value).dtype.kind
    weak = av.weak if av is not None else isinstance(x.value, (int, float))
    if kind not in "biuf":
        return None
    if is_none(eqn, "ndigits"):
        if kind in "biu":
            return xt
        # Python's errors where the int cannot be had (an int64 holds below 2**63)
        return [f"if {xt} != {xt}:",
                "    raise ValueError('cannot convert float NaN to integer')",
                f"if abs({xt}) == np.inf:",
                "    raise OverflowError('cannot convert float infinity to integer')",
                f"if abs({xt}) >= 9.223372036854775e18:",
                "    raise OverflowError('round(): the int is 2**63 or more, which compiled "
                "code cannot hold (Python gives a larger int)')",
                f"{out} = int(np.rint({xt}))"]
    n = NF._const(eqn, "ndigits")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        return None
    n = int(n)
    os_ = lw.avals[out]
    if weak:          # Python's round: exact decimal rounding (Numba's is not)
        typ = "int64" if kind in "biu" else "float64"
        return [f"with objmode({out}={typ!r}):", f"    {out} = round({xt}, {n})"]
    if kind in "biu":
        return f"{NF._dt(os_.dtype)}(np_round_down({xt}, {10.0 ** -n!r}))" if n < 0 else xt
    return f"{NF._dt(os_.dtype)}(np_round_up({xt}, {10.0 ** n!r}))" if n > 0 else \
        (f"{NF._dt(os_.dtype)}(np_rint_keep_int({xt}))" if n == 0 else
         f"{NF._dt(os_.dtype)}(np_round_down({xt}, {10.0 ** -n!r}))")


builtin_round = defprim("builtin_round", [NR.builtin_round, round], "rt.builtin_round",
                        "x, ndigits=None", nondiff=True, batch=per_example, numba=_round_form,
                        sized_by=(),
                        construct="round(...)")
