"""A library function without a rule (np.polynomial.polynomial.polyval) is inlined from its
own source; when that source uses something transformed code does not support, the error is
told at the user's call, naming the function and the piece its source needs, instead of at a
line inside NumPy's files."""
import os
import sys
import sysconfig

import numpy as np

from transpile.errors import NoRuleError, TranspileError

_LIBRARY_DIRS = tuple({os.path.abspath(p) + os.sep for p in (
    sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib"),
    sysconfig.get_paths().get("stdlib"),
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) if p})   # transpile/: .random, .optimizers


def is_library_file(filename):
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return path.startswith(_LIBRARY_DIRS) or "site-packages" in path or \
        "dist-packages" in path


def call_error(norm, fn, node, error):
    """The error to raise for `error`, raised while inlining library function `fn` called at
    `node` by the user's code: at the user's call. `error` itself when the call is not the
    user's (a library function calling another) or the error is already the user's."""
    if not isinstance(error, TranspileError) or not is_library_file(error.filename or ""):
        return error
    code = getattr(fn, "__code__", None)
    if code is None or not is_library_file(code.co_filename):
        return error
    here = norm.error(node, "")
    if not here.filename or is_library_file(here.filename):
        return error         # a library calling a library: the outermost call reports it
    module = getattr(fn, "__module__", "") or ""
    name = f"{module}.{fn.__qualname__}" if module else fn.__qualname__
    public = getattr(np, fn.__name__, None) if module.startswith("numpy") else None
    if public is not None and getattr(public, "_implementation", public) is fn:
        name = f"numpy.{fn.__name__}"     # (np.digitize, not np.lib._function_base_impl...)
    name = name.replace("numpy.", "np.", 1) if name.startswith("numpy.") else name
    first = str(error).split("\n")[0]
    where = f"{error.filename}:{error.lineno}: "
    reason = first[len(where):] if first.startswith(where) else first
    lib = os.path.relpath(error.filename, os.path.dirname(os.path.dirname(
        sys.modules[module.split(".")[0]].__file__))) if module.split(".")[0] in sys.modules \
        and getattr(sys.modules[module.split(".")[0]], "__file__", None) else error.filename
    cls = NoRuleError if isinstance(error, NoRuleError) else type(error)
    return cls(f"{name}(...) has no transpile rule, and its source cannot be transformed: "
               f"{reason} (in {error.construct or 'its code'}, {lib}:{error.lineno})",
               filename=here.filename, lineno=here.lineno, construct=here.construct,
               hint="compute it outside the transformed function, or give it a rule with "
               "transpile.defrule / custom_vjp (docs/custom_rules.md)")
