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

from transpile.core.ir import Const, Var, walk_eqns
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


def _draw_aval(args, aval, throwaway=None):
    """The draw's shape and dtype: the same call on a throwaway generator, with stand-ins for
    the arguments known only at run time (a location array, a bound read from an argument).
    An integer known only at run time may be a bound (`integers(0, i + 1)`) or a size
    (`standard_normal(n)`): the call is made with two stand-ins for it, and a shape that
    differs between them is not known (None)."""
    first = _draw_with(args, aval, throwaway, 1)
    if first is None or not any(
            not isinstance(item, Const) and aval(item) is not None and
            aval(item).dtype.kind in "iu" for item in _items(args["args"])):
        return first
    second = _draw_with(args, aval, None if throwaway is None else type(throwaway)(0), 7)
    return first if second is not None and second[0] == first[0] else None


def _draw_with(args, aval, throwaway, offset):
    values = []
    for i, item in enumerate(_items(args["args"])):
        if isinstance(item, Const):
            values.append(item.value)
            continue
        av = aval(item)
        if av is None:
            return None
        fill = i + offset if av.dtype.kind in "biu" else 0.5
        values.append(np.full(av.shape, fill, av.dtype) if av.shape else av.dtype.type(fill))
    a, kw = _split(args["kwnames"].value, values)
    try:
        gen = np.random.default_rng(0) if throwaway is None else throwaway
        r = getattr(gen, args["method"].value)(*a, **kw)
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
    raise TranspileError(f"{where}vmap: a random generator with a seed per example is not "
                         "supported", construct=f"np.random.{eqn.prim.path.split('.')[-1]}(seed)",
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


# ---- np.random.RandomState(seed) made in the function ----------------------------------------
#
# A run-time value like a Generator: rs.randn(3) is `rt.generator_draw(rs, 'randn', (3,), ())`
# in NumPy code. Numba has no RandomState objects, but its module functions (np.random.seed,
# np.random.randn, ...) are NumPy's legacy algorithms on the same Mersenne Twister, so compiled
# code seeds Numba's own generator where the function makes the RandomState and draws from it
# (Numba's state is not NumPy's: np.random.randn outside is unaffected). That holds only for
# one RandomState in the function, each of whose draws compiles; otherwise none of them
# compiles (they run in NumPy: the same numbers).

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
# every method transformed code may call on a RandomState
LEGACY_METHODS = frozenset(_LEGACY) | {"choice", "permutation", "gamma", "beta", "lognormal",
                                       "standard_exponential", "standard_gamma", "laplace",
                                       "logistic", "geometric", "chisquare", "random_integers"}


def _legacy_call(lw, eqn):
    """`np.random.normal(0.0, 2.0, 3)` for rs.normal(0.0, 2.0, 3), or None (no such form)."""
    method = eqn.args["method"].value
    a, kw = _split(eqn.args["kwnames"].value, _items(eqn.args["args"]))
    if method not in _LEGACY:
        return None
    for v in a + list(kw.values()):     # Numba's functions take scalar parameters
        if isinstance(v, Var) and (lw.av(v) is None or lw.av(v).shape):
            return None
    fn, params = _LEGACY[method]
    if params is None:
        if kw or not all(isinstance(d, Var) or isinstance(d.value, int) and not
                         isinstance(d.value, bool) for d in a):
            return None
        values = list(a)
    else:
        if len(a) > len(params) or set(kw) - {p for p, _ in params}:
            return None
        values = [a[i] if i < len(a) else kw.get(p, Const(d))
                  for i, (p, d) in enumerate(params)]
        if method == "randint":
            low, high, size = values
            values = [Const(0), low, size] if _is_none(high) else values
        while values and _is_none(values[-1]):      # trailing defaults left out (size=None)
            values.pop()
    texts = [_arg_text(lw, v) for v in values]
    if any(t is None or t == "None" for t in texts):
        return None
    return f"np.random.{fn}({', '.join(texts)})"


def _is_none(atom):
    return isinstance(atom, Const) and atom.value is None


def _legacy_compiles(lw):
    """One RandomState made in the function, of an int seed, each of its draws with a form."""
    makes = [e for e in walk_eqns(lw.core.body) if e.prim is make_random_state]
    if len(makes) != 1:
        return False
    seed = makes[0].args["seed"]
    if isinstance(seed, Const):
        if not isinstance(seed.value, (int, np.integer)) or isinstance(seed.value, bool):
            return False     # RandomState(None): a seed from the OS, no numbers to match
    elif lw.av(seed) is None or lw.av(seed).shape or lw.av(seed).dtype.kind not in "iu":
        return False
    return all(_legacy_call(lw, e) is not None for e in walk_eqns(lw.core.body)
               if e.prim is legacy_draw)


def _legacy_draw_numba(lw, eqn):
    return _legacy_call(lw, eqn) if _legacy_compiles(lw) else None


def _make_state_numba(lw, eqn):
    """np.random.seed(seed) on Numba's generator; the name holds a placeholder."""
    if not _legacy_compiles(lw):
        return None
    return [f"np.random.seed({lw.fmt(eqn.args['seed'])})  # np.random.RandomState(seed): "
            "Numba's generator", f"{eqn.out} = 0  # (a placeholder: no RandomState object)"]


legacy_draw = defprim(
    "legacy_draw", _helpers.legacy_draw, "rt.legacy_draw", "rs, method, args, kwnames",
    nondiff=True, pure=False, keep=True, unsafe_in_select=True, batch=per_example,
    effect_aval=lambda args, aval: _draw_aval(args, aval, np.random.RandomState(0)),
    numba=_legacy_draw_numba, construct="a draw from np.random.RandomState(seed)")
make_random_state = defprim(
    "make_random_state", np.random.RandomState, "np.random.RandomState", "seed",
    nondiff=True, pure=False, unsafe_in_select=True, no_buffer=True,
    batch=Rule("generator", _seeds_batch, lambda s, eqn: 0),
    effect_aval=lambda args, aval: ((), _OBJECT, False), numba=_make_state_numba)
