"""The primitive table: one entry per primitive, with every transform's rule side by side.

A rule is a *template*: a Python expression over the primitive's argument names and
  g      the cotangent of the result (reverse mode)
  ans    the primitive's result
  x_dot  the tangent of argument x (forward mode)
Templates are parsed once and instantiated by the same normalizer that reads user code, so
derivative code is again core Python, and transforms compose (grad of grad, jvp of grad, ...).

Entry fields:
  name    the row's own name (unique; by_name(name) finds it)
  impl    the callable it stands for (np.exp), run while specializing; None for rt.* helpers
          that only run in generated code
  path    how generated code names it: "np.exp", "rt.unbroadcast"
  params  its signature, parsed ([Param]): how call arguments bind (`bind`)
  op      operator form for printing: "+", "neg", "getitem", "attr:shape", "method:pop"
  nondiff  no derivative flows through it (comparisons, shapes, integer results)
  diff    the arguments a derivative flows through (default: the first, or deriv's keys)
  doc     a line for the docs tables
  deriv   elementwise partial derivative per argument ("ans" for exp); gives both
          vjp (g * d, summed back over broadcast axes) and jvp (x_dot * d)
  vjp     explicit reverse rule per argument
  jvp     explicit forward rule per argument (contributions are summed)
  linear  arguments the primitive is linear in: jvp is the primitive applied to the tangent
  pure    False for primitives with effects (collectives, tapes): never evaluated early
  effect_aval  a row with effects (pure=False): (eqn.args, atom -> its AVal or None) -> its
          result's (shape, dtype, weak) known without running it (rng.normal(0.0, 1.0, n)), or
          None
  shape_args  arguments read only for their shape/dtype (no derivative flows through them)
  discrete  arguments read only for their truth value (where's condition): no derivative
              flows through them, even from a value that depends on the input
  batch   batching rule or kind, used by vmap
  data_shape  the result's shape depends on the values (np.unique, np.argwhere): never
          inferred from stand-ins, so jit runs such a call's function with NumPy
  sized_by  the arguments whose integer values may decide the result's shape (np.zeros(n)'s
          n); None (the default): any integer argument may
  numba   the Numba CPU form of a whole call, where Numba has no such function or lacks an
          argument (transpile/primitives/numba_forms.py): eqn -> expression or statements
  numba_unsized  its `numba` form also serves arguments or a result of run-time length (their
          lengths read at run time: np.linalg.lstsq's residuals and their rules' helpers)
  shape_from  the result has this argument's shape whatever the run-time lengths of the
          others (rt.residual_weights: a row of y, whatever the residuals' length)

Lowerings (the scalar form of a row in each backend's fused loops; None: not lowered there, so
the call runs as a whole-array operation; forms and their helpers: primitives/scalar_forms.py):
  lower       Numba CPU: a template over {arg} placeholders (T(...) is a constant in the result
              dtype), or eqn -> template (None: not for these arguments). A row with one is
              elementwise for jit's loop fusion (runtime helpers such as rt.clip_mask included)
  lower_loop  Numba CPU inside a fused loop, where it differs from `lower`: {dtype name:
              template} (np.exp -> exp32/exp64, which vectorize)
  lower_py    Numba CPU where every operand is a Python scalar (int, float: weak), where
              Python's semantics differ from NumPy's: 7 // 0 raises ZeroDivisionError (NumPy
              gives 0), 2 ** -1 is a float
  cuda_c      CUDA C (backend='cupy'): (a, m, eqn) -> C expression; `a` maps argument names to
              operands already in the compute dtype (and one/half/zero), m('exp') is the math
              function for that dtype ('expf' for float32), m.float says it is a float dtype
  numba_cuda  numba.cuda (backend='cuda'): (a, eqn) -> Python expression, `a` as for cuda_c
  operands    the arguments that are data, cast to the compute dtype (None: all of them); the
              others (astype's dtype, a broadcast's shape) must be constants
  uncast      arguments read as loaded, without that cast (where's condition)
  (truth      not a field: a `bool_result` row with a scalar form gives its truth value as a
              bool (comparisons, logical ops, isnan), which Numba loops store without a cast)
  logical     the operands are truth values: GPU forms compute in the (bool) result dtype
  reduce      the accumulation a fused loop does for this reduction: 'sum', 'mean', 'max',
              'min' or 'prod' (GPU kernels do 'sum' and 'mean')
  bcast_operand  a broadcast helper (rt.sum_grad, rt.broadcast_like): this argument is loaded
              with broadcast indexing and is the value; the others give only the shape
  shape_only  the result depends only on shapes and dtypes: GPU plans fold it to a constant
  writes_arg  writes into an argument's buffer: a fused loop is never moved past it
Flags: what the passes ask of a row (each set in the row's own `defprim` call, or next to it in
the row's module; api/custom_rules.py passes them for user rows). Every field is declared in `__init__`
(`__slots__`): setting an undeclared one fails.
  fresh   the result is always a new buffer (creation functions, ufuncs, setitem's copy);
          default: rows with an elementwise `deriv` (optimize/inplace.py)
  returns_arg  the result is (a view of) this argument's buffer, written in place:
          rt.add_at -> "acc" (optimize/inplace.py)
  no_buffer  the result holds no array buffer: shapes, lengths, Python scalars, tapes
  meta    reads only its arguments' shape/dtype, never their values (x.shape, len(x))
  subscript_write  `x[index] = v` on a copy of x, which may become a write in place
  view    NumPy returns a view of argument x (transpile/frontend/normalize/aliasing.py): "same" (the array
          itself), "index" (x[index]), "transpose", "reshape" (a view when x is contiguous),
          "axes" (adds or removes axes of length 1: a view of any array), or "opaque" (a
          view not written back through: np.diagonal, x.real)
  int_result  the result is an integer scalar (len, int, np.argmax)
  int_closed  integer operands give an integer result (+, -, *, //, %, min, max)
  scalar_result  the result is a Python/NumPy scalar, never a buffer (float(), x.item())
  array_result  the result is always an ndarray, never a scalar (np.zeros, np.stack)
  reduction  reduces over `axis`; axis=None gives a scalar (np.sum, np.mean, ...)
  bool_result  the result is boolean (comparisons, logical ops, np.isnan, np.any)
  unsafe_in_select  never run for the examples of a batched branch they were not in (vmap
          computes both sides of an `if` and selects): checks, conversions, effects
  keep    never removed as dead code (writes in place, tapes, printing)
  check   an assert or raise of the user's code: a message with run-time values
  shows_values  prints or raises the values of its `values` argument (compile/dynamic_ints.py)
  product  the operands' shapes alone decide whether they fit (np.matmul, np.dot)
  shape_safe  the result's shape follows from the arguments' shapes while compiling, so a
          value of a run-time shape may flow through it (optimize/specialize_control.py)
  query   the result depends only on shapes/dtypes: folded to a constant when they are known
  refusal  a derivative that raises when it runs (rt.refuse_norm_third: not supported); dropped
          where its result is not used (ad/modes.py)
  multi   a call with several results (np.linalg.eigh): (bound, const) -> [(part row name,
          params)], or one name for a call whose result is one part
  jvp_joint  forward mode in one write: ((arguments), template) replaces their separate jvps
  fusable  fused into loops like an elementwise row (its `lower` form), though not one
  opaque  no derivative flows through it: differentiating it raises (opaque_hint says why)
  opaque_hint  the hint of the error `opaque` raises
  user_rule  a rule the user added (transpile.custom): left out of the built-in tables
  user_path  how messages name a user's function (opaque user rows)
  diff_primal  the row whose result stands for this one's where a derivative flows through
          the call (custom_vjp: fwd's output, custom_jvp: the rule's primal output, as in
          JAX); the sweeps (transpile/ad/sweep.py) put it in the call's place
  aliases  other names of the function ("scipy.special.erf"), for the docs (defalias)
  construct  how the user names the construct the row comes from, in messages ("subscript
          assignment" for rt.setitem); default: the call, `np.exp(...)`
  canonical_args  bound arguments -> the same call in its canonical form (np.einsum's
          sublist form -> the subscripts string)
  printed_defaults  parameters generated code passes even at their default (np.clip needs
          both bounds, None included)
"""
import inspect
import sys
import types

_BY_ID = {}        # id(callable) -> Primitive
_BY_NAME = {}      # name -> Primitive
_KEEPALIVE = []
METHODS = {}       # ndarray method/attribute name -> (Primitive, how the receiver binds)
_BY_BOUND = {}     # (id(instance), method name) -> Primitive: scipy.stats.norm.logpdf and the like
_PENDING = {}      # module name -> [(attribute path, Primitive)], bound once the module is imported


class Param:
    __slots__ = ("name", "default", "kind")

    def __init__(self, name, default, kind):
        self.name, self.default, self.kind = name, default, kind


REQUIRED = object()


def parse_signature(sig):
    """'x, axis=None, *, keepdims=False' -> [Param]; '*arrays' marks a variadic parameter."""
    params = []
    if not sig.strip():
        return params
    kw_only = False
    for part in _split_top(sig):
        part = part.strip()
        if part == "*":
            kw_only = True
            continue
        if part.startswith("*"):
            params.append(Param(part[1:], REQUIRED, "var"))
            kw_only = True
            continue
        if "=" in part:
            name, default = part.split("=", 1)
            params.append(Param(name.strip(), eval(default, {}), "kw" if kw_only else "pos"))
        else:
            params.append(Param(part, REQUIRED, "kw" if kw_only else "pos"))
    return params


def _split_top(s):
    depth, cur, out = 0, "", []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


class Primitive:
    __slots__ = ("name", "impl", "path", "params", "op", "nondiff", "diff", "deriv", "vjp",
                 "jvp", "linear", "batch", "lower", "numba", "data_shape", "doc", "shape_args",
                 "discrete",
                 "pure", "effect_aval",
                 # lowerings
                 "lower_loop", "lower_py", "cuda_c", "numba_cuda", "operands", "uncast",
                 "logical",
                 "reduce", "bcast_operand", "shape_only", "writes_arg",
                 # flags
                 "fresh", "returns_arg", "no_buffer", "meta", "subscript_write", "view",
                 "int_result", "int_closed", "scalar_result", "array_result", "reduction",
                 "bool_result", "unsafe_in_select", "keep", "check", "shows_values", "product",
                 "shape_safe", "query", "refusal", "multi", "jvp_joint", "fusable",
                 "opaque", "opaque_hint", "user_rule", "user_path", "diff_primal", "aliases",
                 "canonical_args", "construct", "sized_by", "numba_unsized", "shape_from",
                 "printed_defaults")

    def __init__(self, name, impl, path, sig, *, op=None, diff=None, deriv=None, vjp=None,
                 jvp=None, linear=(), batch=None, nondiff=False, doc=None,
                 shape_args=(), discrete=(), pure=True, effect_aval=None, numba=None,
                 data_shape=False,
                 # lowerings
                 lower=None, lower_loop=None, lower_py=None, cuda_c=None, numba_cuda=None, operands=None,
                 uncast=(), logical=False, reduce=None, bcast_operand=None,
                 shape_only=False, writes_arg=False,
                 # flags (documented in the module docstring)
                 fresh=None, returns_arg=None, no_buffer=False, meta=False,
                 subscript_write=False, view=None, int_result=False, int_closed=False,
                 scalar_result=False, array_result=False, reduction=False, bool_result=False,
                 unsafe_in_select=False, keep=False, check=False, shows_values=False,
                 product=False, shape_safe=False, query=False, refusal=False, multi=None,
                 jvp_joint=None, fusable=False, opaque=False, opaque_hint=None,
                 user_rule=False, user_path=None, diff_primal=None, aliases=(), canonical_args=None,
                 construct=None, sized_by=None, numba_unsized=False, shape_from=None,
                 printed_defaults=()):
        self.name = name
        self.impl = impl
        self.path = path                   # how generated code names it: 'np.exp', 'rt.unbroadcast'
        self.params = parse_signature(sig)
        self.op = op                       # operator form for printing: '+', 'neg', 'getitem', ...
        self.nondiff = nondiff
        names = [p.name for p in self.params]
        self.diff = tuple(diff if diff is not None else ([] if nondiff else names[:1]))
        self.deriv = deriv or {}
        self.vjp = vjp or {}
        self.jvp = jvp or {}
        self.linear = tuple(linear)
        self.batch = batch
        self.numba = numba
        self.data_shape = data_shape   # the result's shape depends on the values (np.unique)
        self.sized_by = None if sized_by is None else tuple(sized_by)   # ints that size it
        self.numba_unsized = numba_unsized
        self.shape_from = shape_from
        self.doc = doc
        self.discrete = tuple(discrete)       # read for their truth value: no derivative
        self.shape_args = tuple(shape_args)   # read only for their shape: no derivative flows
        self.pure = pure   # False: must run at run time, never evaluated while generating code
        self.effect_aval = effect_aval
        # lowerings (see the module docstring)
        self.lower = lower
        self.lower_loop = lower_loop or {}
        self.lower_py = lower_py
        self.cuda_c = cuda_c
        self.numba_cuda = numba_cuda
        self.operands = None if operands is None else tuple(operands)
        self.uncast = tuple(uncast)
        self.logical = logical
        self.reduce = reduce
        self.bcast_operand = bcast_operand
        self.shape_only = shape_only
        self.writes_arg = writes_arg
        if self.deriv:
            self.diff = tuple(a for a in names if a in self.deriv)
        for table in (self.deriv, self.vjp, self.jvp):
            for k in table:
                if k not in names:
                    raise ValueError(f"primitive {name}: rule for unknown argument {k!r}")
        # flags
        self.fresh = bool(self.deriv) if fresh is None else fresh
        self.returns_arg = returns_arg
        self.no_buffer = no_buffer
        self.meta = meta
        self.subscript_write = subscript_write
        if view not in (None, "same", "index", "transpose", "reshape", "axes", "opaque"):
            raise ValueError(f"primitive {name}: unknown view kind {view!r}")
        self.view = view
        self.int_result = int_result
        self.int_closed = int_closed
        self.scalar_result = scalar_result
        self.array_result = array_result
        self.reduction = reduction
        self.bool_result = bool_result
        self.unsafe_in_select = unsafe_in_select
        self.keep = keep
        self.check = check
        self.shows_values = shows_values
        self.product = product
        self.shape_safe = shape_safe
        self.query = query
        self.refusal = refusal
        self.multi = multi
        self.jvp_joint = jvp_joint
        self.fusable = fusable
        self.opaque = opaque
        self.opaque_hint = opaque_hint
        self.user_rule = user_rule
        self.user_path = user_path
        self.diff_primal = diff_primal
        self.aliases = tuple(aliases)
        self.canonical_args = canonical_args
        self.printed_defaults = tuple(printed_defaults)
        self.construct = construct

    @property
    def truth(self):
        """A boolean row with a scalar form: its forms give a bool (see `lower`)."""
        return self.bool_result and self.lower is not None

    @property
    def elementwise(self):
        return bool(self.deriv) or self.batch == "elementwise"

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def bind(self, args, kwargs):
        """Map call arguments onto the signature: returns {name: value} (values as given)."""
        bound = {}
        pos = list(args)
        for p in self.params:
            if p.kind == "var":
                bound[p.name] = tuple(pos)
                pos = []
            elif p.kind == "pos" and pos:
                bound[p.name] = pos.pop(0)
        if pos:
            raise TypeError(f"{self.path}() takes {len(self.params)} arguments, got more")
        for k, v in kwargs.items():
            if self.param(k) is None:
                raise TypeError(f"{self.path}() got an unexpected keyword argument {k!r}")
            if k in bound:
                raise TypeError(f"{self.path}() got multiple values for argument {k!r}")
            bound[k] = v
        for p in self.params:
            if p.name not in bound and p.default is REQUIRED:
                raise TypeError(f"{self.path}() missing required argument {p.name!r}")
        return bound

    def __repr__(self):
        return f"<primitive {self.name} ({self.path})>"


def defprim(name, impls, path, sig, **rules):
    """Register a primitive. `impls` is the callable (or list of aliases) it stands for."""
    impls = impls if isinstance(impls, (list, tuple)) else [impls]
    impls = [f for f in impls if f is not None]
    prim = Primitive(name, impls[0] if impls else None, path, sig, **rules)
    if name in _BY_NAME:
        raise ValueError(f"primitive {name!r} defined twice")
    _BY_NAME[name] = prim
    for f in impls:
        _BY_ID[id(f)] = prim
        _KEEPALIVE.append(f)
    return prim


def defimpl(prim, fn):
    """`fn` (math.sin for np.sin's row) also means `prim`."""
    _BY_ID[id(fn)] = prim
    _KEEPALIVE.append(fn)


def defmethod(method_name, prim, receiver="x"):
    """x.method(...) means prim(x, ...); the receiver binds to parameter `receiver`."""
    METHODS[method_name] = (prim, receiver)


def defalias(prim, module, attr):
    """`module.attr` (a dotted attribute path) also means prim, once `module` is imported:
    the table does not import SciPy itself. A bound method (scipy.stats.norm.logpdf is a new
    object at every access) is keyed by its instance and method name."""
    _PENDING.setdefault(module, []).append((attr, prim))
    prim.aliases = prim.aliases + (f"{module}.{attr}",)


def defufunc_method(prim, ufunc, method):
    """`ufunc.method` (np.maximum.accumulate: a new bound method at every access) means prim."""
    _BY_BOUND[(id(ufunc), method)] = prim
    _KEEPALIVE.append(ufunc)
    prim.aliases = prim.aliases + (f"np.{ufunc.__name__}.{method}",)
    return prim


def _bind_pending():
    for module in [m for m in _PENDING if m in sys.modules]:
        for attr, prim in _PENDING.pop(module):
            obj = sys.modules[module]
            for part in attr.split("."):
                obj = getattr(obj, part)
            if isinstance(obj, types.MethodType):
                _BY_BOUND[(id(obj.__self__), obj.__name__)] = prim
                _KEEPALIVE.append(obj.__self__)
            else:
                _BY_ID[id(obj)] = prim
                _KEEPALIVE.append(obj)


def lookup(obj):
    """The primitive for a callable object, by identity, or None."""
    prim = _BY_ID.get(id(obj))
    if prim is None and _PENDING:
        _bind_pending()
        prim = _BY_ID.get(id(obj))
    if prim is None and isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        owner = getattr(obj, "__self__", None)      # (a ufunc's method: np.add.accumulate)
        if owner is not None:
            prim = _BY_BOUND.get((id(owner), getattr(obj, "__name__", None)))
    return prim


def by_name(name):
    return _BY_NAME[name]


def all_primitives(builtin_only=False):
    """Every registered primitive; builtin_only leaves out rules users added with defrule."""
    prims = list(_BY_NAME.values())
    if builtin_only:
        prims = [p for p in prims if not p.user_rule]
    return prims


def is_known(obj):
    try:
        return lookup(obj) is not None
    except Exception:
        return False


def describe_rules(prim):
    """For docs: which transforms have a rule for this primitive."""
    has_rev = prim.nondiff or bool(prim.deriv) or bool(prim.vjp)
    has_fwd = prim.nondiff or bool(prim.deriv) or bool(prim.jvp) or bool(prim.linear)
    return {"grad": has_rev, "jvp": has_fwd, "vmap": prim.batch is not None,
            "fusion": prim.lower is not None}


def source_of_impl(prim):
    try:
        return inspect.getsourcefile(prim.impl)
    except TypeError:
        return None
