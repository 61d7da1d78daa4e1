"""np.random.Generator objects at run time: a Generator passed in (`rng.normal(0.0, 1.0, n)`)
and `np.random.default_rng(seed)` made in the function
(transpile/frontend/normalize/random.py).

A draw advances the generator's state, so these rows have effects (pure=False): they run at
run time, in the order the user's code draws, and never twice or early; a draw whose result
is unused is kept (the draws after it depend on it). The values are not differentiated.

jit compiles them: Numba's Generator methods use NumPy's algorithms on the same bit
generator, so compiled code draws the numbers NumPy draws, bit for bit, and leaves a
Generator argument in the state NumPy would. `default_rng(seed)` itself is made in object
mode (Numba cannot construct one). Methods Numba lacks run in NumPy (the function's other
statements stay compiled where they can).
"""
import numpy as np

from transpile.core.ir import Const, Var
from transpile.errors import TranspileError
from transpile.primitives.batching.axis_rules import per_example
from transpile.primitives.batching.rules import Rule
from transpile.primitives.registry import defprim
from transpile_runtime import helpers as _helpers

# Generator methods compiled by Numba with NumPy's algorithms (the same numbers, bit for bit):
# name -> the keyword arguments Numba accepts besides the positional ones
COMPILED = {name: ("size",) for name in (
    "random", "standard_normal", "normal", "uniform", "integers", "exponential",
    "standard_exponential", "gamma", "standard_gamma", "beta", "lognormal", "poisson",
    "binomial", "laplace", "logistic", "geometric", "chisquare")}
# every method transformed code may call on a Generator (rng.shuffle, which works in place, is
# refused where it is met)
METHODS = frozenset(COMPILED) | {
    "choice", "permutation", "permuted", "multivariate_normal", "dirichlet", "multinomial",
    "triangular", "weibull", "pareto", "rayleigh", "vonmises", "wald", "standard_cauchy",
    "standard_t", "f", "noncentral_chisquare", "noncentral_f", "gumbel", "hypergeometric",
    "logseries", "negative_binomial", "power", "zipf"}
IN_PLACE = {"shuffle": "x = rng.permutation(x)"}
_OBJECT = np.dtype(object)


def _items(args):
    """The draw's arguments (positional, then keyword values): Consts and Vars."""
    if isinstance(args, Const):
        return [Const(v) for v in args.value]
    return list(args.items)


def _split(names, items):
    cut = len(items) - len(names)
    return items[:cut], dict(zip(names, items[cut:]))


def _draw_aval(args, aval):
    """The draw's shape and dtype: the same call on a throwaway generator, with stand-ins for
    the arguments known only at run time (a location array, a bound read from an argument)."""
    values = []
    for i, item in enumerate(_items(args["args"])):
        if isinstance(item, Const):
            values.append(item.value)
            continue
        av = aval(item)
        if av is None:
            return None
        fill = i + 1 if av.dtype.kind in "biu" else 0.5
        values.append(np.full(av.shape, fill, av.dtype) if av.shape else av.dtype.type(fill))
    a, kw = _split(args["kwnames"].value, values)
    try:
        r = getattr(np.random.default_rng(0), args["method"].value)(*a, **kw)
    except Exception:
        return None
    if isinstance(r, (float, int, bool)):
        return (), np.dtype(type(r)), True
    return np.shape(r), np.asarray(r).dtype, False


def _arg_text(lw, atom):
    return _value_text(atom.value) if isinstance(atom, Const) else lw.fmt(atom)


def _value_text(v):
    """A constant argument as Numba reads it (None where it has no such text)."""
    if isinstance(v, tuple) and all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        return "(" + "".join(f"{i}, " for i in v) + ")"
    if isinstance(v, (bool, int, float)) or v is None:
        return repr(v)
    return None


def _draw_numba(lw, eqn):
    """`rng.normal(0.0, 0.8, 100)`: Numba's own method; choice(n or a, size) is NumPy's
    integers(0, n, size) (what Generator.choice draws with replace=True and no p)."""
    method = eqn.args["method"].value
    a, kw = _split(eqn.args["kwnames"].value, _items(eqn.args["args"]))
    rng = lw.fmt(eqn.args["rng"])
    if method == "choice":
        return _choice_numba(lw, rng, a, kw)
    if method not in COMPILED or set(kw) - set(COMPILED[method]):
        return None
    if any(isinstance(v, Const) and v.value is None for v in a):
        return None
    if any(isinstance(v, Var) and (lw.av(v) is None or lw.av(v).shape)
           for v in a + list(kw.values())):
        return None        # Numba's methods take scalar parameters (no array of locations)
    if method == "integers":
        if len(a) == 1:         # integers(high) is integers(0, high)
            a = [Const(0)] + a
        if len(a) < 2:
            return None
    texts = [_arg_text(lw, v) for v in a] + [
        f"{k}={_arg_text(lw, v)}" for k, v in kw.items() if not (
            isinstance(v, Const) and v.value is None)]
    if any(t is None or t.endswith("=None") for t in texts):
        return None
    return f"{rng}.{method}({', '.join(texts)})"


def _choice_numba(lw, rng, a, kw):
    """choice(a, size) with replace=True and no p: a[integers(0, len(a), size)] (NumPy's own
    way); a an int n: integers(0, n, size)."""
    if set(kw) - {"size", "replace"} or not a or len(a) > 2 or (len(a) == 2 and "size" in kw):
        return None
    replace = kw.get("replace", Const(True))
    if not (isinstance(replace, Const) and replace.value is True):
        return None
    size = kw.get("size", a[1] if len(a) > 1 else Const(None))
    pop = a[0]
    if isinstance(pop, Const):
        if not isinstance(pop.value, int) or isinstance(pop.value, bool) or pop.value <= 0:
            return None
        n = repr(pop.value)
    else:
        av = lw.av(pop)
        if av is None or av.ndim > 1 or (not av.shape and av.dtype.kind not in "iu"):
            return None
        n = f"{lw.fmt(pop)}.shape[0]" if av.shape else lw.fmt(pop)
    size_text = "" if isinstance(size, Const) and size.value is None else \
        ", " + (_arg_text(lw, size) or "None")
    if size_text.endswith("None"):
        return None
    draw = f"{rng}.integers(0, {n}{size_text})"
    return draw if isinstance(pop, Const) or not lw.av(pop).shape else f"{lw.fmt(pop)}[{draw}]"


# Numba's type of a Generator, as object mode reads a type from text
_NUMBA_GENERATOR = 'NumPyRandomGeneratorType("NumPyRandomGeneratorType")'


def _make_numba(lw, eqn):
    """default_rng(seed) in object mode: Numba takes the Generator over from there."""
    seed = eqn.args["seed"]
    return [f"with objmode({eqn.out}={_NUMBA_GENERATOR!r}):",
            f"    {eqn.out} = np.random.default_rng({lw.fmt(seed)})"]


def _seeds_batch(s, eqn):
    where = f"{eqn.loc[0]}:{eqn.loc[1]}: " if eqn.loc else ""
    raise TranspileError(f"{where}vmap: np.random.default_rng(seed) with a seed per example "
                         "is not supported", construct="np.random.default_rng(seed)",
                         hint="give the seed in_axes None, or draw the numbers before vmap")


generator_draw = defprim(
    "generator_draw", _helpers.generator_draw, "rt.generator_draw",
    "rng, method, args, kwnames",
    nondiff=True, pure=False, keep=True, unsafe_in_select=True, batch=per_example,
    effect_aval=_draw_aval, numba=_draw_numba, construct="a draw from a np.random.Generator")
make_generator = defprim(
    "make_generator", np.random.default_rng, "np.random.default_rng", "seed", nondiff=True,
    pure=False, unsafe_in_select=True, no_buffer=True,
    batch=Rule("generator", _seeds_batch, lambda s, eqn: 0),
    effect_aval=lambda args, aval: ((), _OBJECT, False), numba=_make_numba)


# ---- np.random.RandomState(seed) made in the function: a stream of replayed draws ----------
#
# rt.random_draw(factory, seed, history, method, args) recreates the generator, replays the
# draws before this one and draws (transpile/frontend/normalize/random.py). Numba's module
# functions (np.random.seed, np.random.randn, ...) are NumPy's legacy algorithms on the same
# Mersenne Twister, so the compiled form does the same on Numba's own generator state: the same
# numbers, bit for bit. (Numba's state is not NumPy's: np.random.randn outside is unaffected.)

# RandomState method -> (Numba's np.random function, its parameters in order with defaults)
_LEGACY = {
    "randn": ("randn", None), "rand": ("rand", None),     # randn(d0, d1, ...)
    "standard_normal": ("standard_normal", (("size", None),)),
    "random_sample": ("random_sample", (("size", None),)),
    "random": ("random_sample", (("size", None),)),
    "normal": ("normal", (("loc", 0.0), ("scale", 1.0), ("size", None))),
    "uniform": ("uniform", (("low", 0.0), ("high", 1.0), ("size", None))),
    "randint": ("randint", (("low", None), ("high", None), ("size", None))),
    "exponential": ("exponential", (("scale", 1.0), ("size", None))),
    "poisson": ("poisson", (("lam", 1.0), ("size", None))),
    "binomial": ("binomial", (("n", None), ("p", None), ("size", None))),
}
_REQUIRED = object()


def _legacy_call(method, a, kw):
    """`np.random.normal(0.0, 2.0, 3)` for rs.normal(0.0, 2.0, 3), or None (no such form)."""
    if method not in _LEGACY:
        return None
    fn, params = _LEGACY[method]
    if params is None:
        if kw or not all(isinstance(d, int) and not isinstance(d, bool) for d in a):
            return None
        values = list(a)
    else:
        if len(a) > len(params) or set(kw) - {p for p, _ in params}:
            return None
        values = [a[i] if i < len(a) else kw.get(p, d) for i, (p, d) in enumerate(params)]
        if method == "randint":
            low, high, size = values
            values = [0, low, size] if high is None else values
        while values and values[-1] is None:      # trailing defaults left out (size=None)
            values.pop()
    texts = [_value_text(v) for v in values]
    if any(t is None or t == "None" for t in texts):
        return None
    return f"np.random.{fn}({', '.join(texts)})"


def _stream_aval(args, aval):
    """The draw's shape and dtype do not depend on the seed or the draws before it."""
    r = _helpers.random_draw(args["factory"].value, 0, (), args["method"].value,
                             args["args"].value)
    if isinstance(r, (float, int, bool)):
        return (), np.dtype(type(r)), True
    return np.shape(r), np.asarray(r).dtype, False


def _stream_numba(lw, eqn):
    """np.random.seed(seed), the earlier draws again, then this one (Numba's generator)."""
    a = eqn.args
    seed = a["seed"]
    if a["factory"].value != "RandomState" or (not isinstance(seed, Const) and not (
            lw.av(seed) is not None and lw.av(seed).dtype.kind in "iu" and not lw.av(seed).shape)):
        return None
    if isinstance(seed, Const) and (not isinstance(seed.value, (int, np.integer))
                                    or isinstance(seed.value, bool)):
        return None          # RandomState(None): a seed from the OS, no numbers to match
    calls = [_legacy_call(m, arg, dict(kw)) for m, arg, kw in a["history"].value]
    args, kwargs = a["args"].value
    this = _legacy_call(a["method"].value, args, dict(kwargs))
    if this is None or None in calls:
        return None
    note = f"# RandomState({lw.fmt(seed)}), its draw {len(calls) + 1}" + (
        f" (the {len(calls)} before it again)" if calls else "")
    return [note, f"np.random.seed({lw.fmt(seed)})"] + calls + [f"{eqn.out} = {this}"]


random_draw = defprim(
    "random_draw", _helpers.random_draw, "rt.random_draw", "factory, seed, history, method, args",
    nondiff=True, pure=False, batch=per_example, effect_aval=_stream_aval, numba=_stream_numba,
    construct="a draw from np.random.RandomState(seed)")
