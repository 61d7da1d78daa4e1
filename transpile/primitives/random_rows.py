"""transpile.random inside transformed code: one row per function (transpile_runtime/random.py).

Shapes come from the function's `shapes` twin (its checks that do not look at values, on the
stand-ins); generated NumPy code calls the function itself (rt.random.normal), and Numba code
the same Threefry kernels of transpile_runtime/prng.py, so a key gives the same numbers in
every mode. Random values carry no derivative; under vmap a batch of keys draws example by
example.
"""
import numpy as np

from transpile_runtime import random as rt_random
from transpile.core.ir import Const, TupleArg
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.registry import defalias, defprim

_MASK64 = (1 << 64) - 1


def _const(eqn, name, default):
    a = eqn.args.get(name)
    if a is None:
        return default
    return a.value if isinstance(a, Const) else _NOT_CONST


_NOT_CONST = object()


def _scalar(lw, eqn, name):
    """The argument's text when it is a scalar (a number, or a value of rank 0), else None."""
    a = eqn.args.get(name)
    if isinstance(a, Const):
        v = a.value
        return None if np.ndim(v) or isinstance(v, (str, bytes)) else lw.fmt(a)
    av = lw.av(a)
    return lw.fmt(a) if av is not None and not av.shape else None


def _shape(lw, eqn, name="shape"):
    """The shape argument as tuple text, or None when it is not a shape."""
    a = eqn.args.get(name)
    if a is None:
        return "()"
    if isinstance(a, Const):
        v = a.value
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return f"({int(v)},)"
        if isinstance(v, tuple) and all(isinstance(d, (int, np.integer)) for d in v):
            return f"({', '.join(str(int(d)) for d in v)}{',' if len(v) == 1 else ''})"
        return None
    if isinstance(a, TupleArg):
        return lw.fmt(a)
    s = _scalar(lw, eqn, name)
    return f"({s},)" if s is not None else None


def _result(lw, eqn, call):
    """`call` makes an array of the result's shape; a 0-d result is a scalar in Numba code."""
    return f"{call}[()]" if not lw.avals[eqn.out].shape else call


def _key_text(lw, eqn):
    return lw.fmt(eqn.args["key"])


def _int_text(lw, eqn, name, default):
    v = _const(eqn, name, default)
    if v is _NOT_CONST:
        return _scalar(lw, eqn, name)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return f"np.uint64({int(v) & _MASK64})" if not -2**63 <= int(v) < 2**63 else str(int(v))
    return None


def key_form(lw, eqn):
    seed = _int_text(lw, eqn, "seed", None)
    return None if seed is None else f"prng.key_from_seed({seed})"


def split_form(lw, eqn):
    num = _int_text(lw, eqn, "num", 2)
    return None if num is None else f"prng.split({_key_text(lw, eqn)}, {num})"


def fold_in_form(lw, eqn):
    data = _int_text(lw, eqn, "data", None)
    return None if data is None else f"prng.fold_in({_key_text(lw, eqn)}, {data})"


def _float_kind(eqn):
    dtype = _const(eqn, "dtype", np.float64)
    if dtype is _NOT_CONST:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def normal_form(lw, eqn):
    shape, dtype = _shape(lw, eqn), _float_kind(eqn)
    if shape is None or dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        return None
    cast = ".astype(np.float32)" if dtype == np.float32 else ""
    return _result(lw, eqn, f"prng.normal({_key_text(lw, eqn)}, {shape}){cast}")


def uniform_form(lw, eqn):
    shape, dtype = _shape(lw, eqn), _float_kind(eqn)
    lo = _scalar(lw, eqn, "minval") if "minval" in eqn.args else "0.0"
    hi = _scalar(lw, eqn, "maxval") if "maxval" in eqn.args else "1.0"
    if shape is None or lo is None or hi is None or \
            dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        return None          # bounds per element, float16: NumPy code
    kernel = "uniform32" if dtype == np.float32 else "uniform64"
    return _result(lw, eqn, f"prng.{kernel}({_key_text(lw, eqn)}, {shape}, {lo}, {hi})")


def randint_form(lw, eqn):
    shape = _shape(lw, eqn)
    lo, hi = _scalar(lw, eqn, "minval"), _scalar(lw, eqn, "maxval")
    dtype = _const(eqn, "dtype", np.int64)
    if shape is None or lo is None or hi is None or dtype is _NOT_CONST:
        return None
    dtype = np.dtype(dtype)
    cast = "" if dtype == np.int64 else f".astype(np.{dtype.name})"
    least, most = rt_random.int_range(dtype)
    return _result(lw, eqn, f"prng.randint({_key_text(lw, eqn)}, {shape}, {lo}, {hi}, "
                            f"{least}, {most}){cast}")


def permutation_form(lw, eqn):
    key, x = _key_text(lw, eqn), eqn.args["x"]
    xs = lw.av(x) if not isinstance(x, Const) else None
    if isinstance(x, Const) or (xs is not None and not xs.shape):
        n = _int_text(lw, eqn, "x", None)
        return None if n is None else f"prng.permutation({key}, {n})"
    if xs is None or _const(eqn, "axis", 0) not in (0, -xs.ndim):
        return None
    return f"{lw.fmt(x)}[prng.permutation({key}, {lw.fmt(x)}.shape[0])]"


def bernoulli_form(lw, eqn):
    p = eqn.args.get("p", Const(0.5))
    given = eqn.args.get("shape", Const(None))
    given = not (isinstance(given, Const) and given.value is None)
    shape = _shape(lw, eqn) if given else None
    if given and shape is None:
        return None
    key = _key_text(lw, eqn)
    ps = _scalar(lw, eqn, "p") if "p" in eqn.args else "0.5"
    if ps is not None:
        return _result(lw, eqn, f"prng.bernoulli({key}, {shape or '()'}, np.float64({ps}))")
    pa = lw.av(p)
    if pa is None:
        return None
    if shape is None:
        shape = f"{lw.fmt(p)}.shape"
    return f"prng.bernoulli_array({key}, {shape}, {lw.fmt(p)})"


def choice_form(lw, eqn):
    key, a = _key_text(lw, eqn), eqn.args["a"]
    shape = _shape(lw, eqn)
    replace = _const(eqn, "replace", True)
    if shape is None or replace is _NOT_CONST:
        return None
    p = eqn.args.get("p", Const(None))
    if isinstance(p, Const) and p.value is None:
        weights = "np.zeros(0)"
    elif lw.av(p) is not None and len(lw.av(p).shape) == 1:
        weights = f"np.asarray({lw.fmt(p)}).astype(np.float64)"
    else:
        return None
    flag = "True" if replace else "False"
    av = lw.av(a) if not isinstance(a, Const) else None
    if isinstance(a, Const) or (av is not None and not av.shape):
        n = _int_text(lw, eqn, "a", None)
        return None if n is None else \
            _result(lw, eqn, f"prng.choice({key}, {shape}, {n}, {flag}, {weights})")
    if av is None:
        return None
    x = lw.fmt(a)
    idx = f"prng.choice({key}, {shape}, {x}.shape[0], {flag}, {weights})"
    if len(lw.avals[eqn.out].shape) - (av.ndim - 1) == 1:
        return f"{x}[{idx}]"
    # Numba indexes with one axis of indices: rows taken flat, then shaped
    return _result(lw, eqn, f"{x}[{idx}.ravel()].reshape({shape} + {x}.shape[1:])")


def _row(name, sig, form, sized_by):
    fn = getattr(rt_random, name)
    prim = defprim(f"random_{name}", [rt_random.SHAPES[fn], fn], f"rt.random.{name}", sig,
                   nondiff=True, batch=per_example, numba=form, sized_by=sized_by)
    defalias(prim, "transpile.random", name)      # how user code spells it (the docs' tables)
    return prim


# sized_by: a seed, fold_in's data or randint's bounds computed at run time (a loop index)
# never change the result's shape
_row("key", "seed", key_form, ())
_row("split", "key, num=2", split_form, ("num",))
_row("fold_in", "key, data", fold_in_form, ())
_row("normal", "key, shape=(), dtype=float", normal_form, ("shape",))
_row("uniform", "key, shape=(), dtype=float, minval=0.0, maxval=1.0", uniform_form, ("shape",))
_row("randint", "key, shape, minval, maxval, dtype=int", randint_form, ("shape",))
_row("permutation", "key, x, axis=0", permutation_form, ("x", "axis"))
_row("bernoulli", "key, p=0.5, shape=None", bernoulli_form, ("shape",))
_row("choice", "key, a, shape=(), replace=True, p=None", choice_form, ("a", "shape"))
