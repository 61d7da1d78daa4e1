"""Transform constructors the normalizer recognises in user code, registered from above.

User code may build a transform inside the function being transformed (`grad(inner)(x)`,
`Grad(f)`); the normalizer applies such a constructor to static values while generating code.
It must recognise them without importing the public API (which imports the normalizer), so
api/autodiff.py registers its constructor functions and its Transform base class here.
"""

class Ranked(tuple):
    """Specialization key of a vmap or Jacobian whose argument ranks are known (jit, or a call
    inside jitted code): (in_trees, leaf ranks, which parameters were passed)."""


_FUNCTIONS = []   # constructor functions (transpile.grad, value_and_grad)
_CLASSES = []     # base classes whose subclasses are transforms (api.Transform)


def register_transform_function(fn):
    """Mark `fn` as a transform constructor; returns fn (usable as a decorator)."""
    if not any(fn is f for f in _FUNCTIONS):
        _FUNCTIONS.append(fn)
    return fn


def register_transform_class(cls):
    """Mark `cls` and its subclasses as transform classes; returns cls."""
    if cls not in _CLASSES:
        _CLASSES.append(cls)
    return cls


def is_transform_factory(obj):
    """True for a registered constructor function or a subclass of a registered class."""
    if any(obj is f for f in _FUNCTIONS):
        return True
    return isinstance(obj, type) and bool(_CLASSES) and issubclass(obj, tuple(_CLASSES))


_VALUE_FUNCTIONS = {}   # name -> transpile's functions that return values (jvp, vjp, ...)
_JVP = []               # the JVP transform class (jvp inside transformed code)


def register_value_function(name, fn):
    """jvp/vjp/linearize/check_grads: called inside transformed code they are not inlined as
    Python (their source is transpile's own); the normalizer handles or refuses them."""
    _VALUE_FUNCTIONS[name] = fn
    return fn


def value_function_name(obj):
    for name, fn in _VALUE_FUNCTIONS.items():
        if obj is fn:
            return name
    return None


def register_jvp_class(cls):
    _JVP[:] = [cls]
    return cls


def jvp_class():
    return _JVP[0]


def example_avals(t, trees, avals):
    """The abstract values the innermost user function's parameters have when the chain of
    transforms t is called with arguments of these avals (grad, jvp, vjp and jit pass them on;
    vmap takes off the mapped axis), or None when some transform in the chain does not say."""
    while hasattr(t, "inner_avals"):
        avals = t.inner_avals(trees, avals)
        if avals is None:
            return None
        t = t.fun
    return avals
