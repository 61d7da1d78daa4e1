"""The primitive table: one entry per primitive, with every transform's rule side by side.

A rule is a *template*: a Python expression over the primitive's argument names and
  g      the cotangent of the result (reverse mode)
  ans    the primitive's result
  x_dot  the tangent of argument x (forward mode)
Templates are parsed once and instantiated by the same normalizer that reads user code, so
derivative code is again core Python, and transforms compose (grad of grad, jvp of grad, ...).

Entry fields:
  deriv   elementwise partial derivative per argument ("ans" for exp); gives both
          vjp (g * d, summed back over broadcast axes) and jvp (x_dot * d)
  vjp     explicit reverse rule per argument
  jvp     explicit forward rule per argument (contributions are summed)
  linear  arguments the primitive is linear in: jvp is the primitive applied to the tangent
  pure    False for primitives with effects (collectives, tapes): never evaluated early
  shape_args  arguments read only for their shape/dtype (no derivative flows through them)
  batch   batching rule or kind, used by vmap
  lower   scalar expression used when elementwise chains are fused into loops
  data_shape  the result's shape depends on the values (np.unique, np.argwhere): never
          inferred from stand-ins, so jit runs such a call's function with NumPy
  sized_by  the arguments whose integer values may decide the result's shape (np.zeros(n)'s
          n); None (the default): any integer argument may
  numba   the Numba CPU form of a whole call, where Numba has no such function or lacks an
          argument (transpile/primitives/numba_forms.py): eqn -> expression or statements
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
    def __init__(self, name, impl, path, sig, *, op=None, diff=None, deriv=None, vjp=None,
                 jvp=None, linear=(), batch=None, lower=None, nondiff=False, doc=None,
                 shape_args=(), pure=True, numba=None, data_shape=False, sized_by=None):
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
        self.lower = lower
        self.numba = numba
        self.data_shape = data_shape   # the result's shape depends on the values (np.unique)
        self.sized_by = None if sized_by is None else tuple(sized_by)   # ints that size it
        self.doc = doc
        self.shape_args = tuple(shape_args)   # read only for their shape: no derivative flows
        self.pure = pure   # False: must run at run time, never evaluated while generating code
        if self.deriv:
            self.diff = tuple(a for a in names if a in self.deriv)
        for table in (self.deriv, self.vjp, self.jvp):
            for k in table:
                if k not in names:
                    raise ValueError(f"primitive {name}: rule for unknown argument {k!r}")

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
    prim.aliases = getattr(prim, "aliases", ()) + (f"{module}.{attr}",)


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
    if prim is None and isinstance(obj, types.MethodType):
        prim = _BY_BOUND.get((id(obj.__self__), obj.__name__))
    return prim


def by_name(name):
    return _BY_NAME[name]


def all_primitives(builtin_only=False):
    """Every registered primitive; builtin_only leaves out rules users added with defrule."""
    prims = list(_BY_NAME.values())
    if builtin_only:
        prims = [p for p in prims if not getattr(p, "user_rule", False)]
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
