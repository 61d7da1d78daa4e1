"""Transform constructors the normalizer recognises in user code, registered from above.

User code may build a transform inside the function being transformed (`grad(inner)(x)`,
`Grad(f)`); the normalizer applies such a constructor to static values while generating code.
It must recognise them without importing the public API (which imports the normalizer), so
api.py registers its constructor functions and its Transform base class here.
"""

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
