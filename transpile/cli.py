"""The `transpile` command: print (or write out) the source transpile generates for a file's functions.

    transpile show model.py                                  # every function decorated with @grad, @jit, ...
    transpile show model.py --function loss --transform grad
    transpile show model.py -f loss -t jit,grad --args "np.ones(3), 2.0"
    transpile show model.py -f loss -t grad --out generated/  # files for an IDE
    transpile list model.py                                  # the functions it can show

The file is imported as a module (its directory first on sys.path), so code under
`if __name__ == "__main__":` does not run.
"""
import argparse
import importlib.util
import inspect
import os
import re
import sys
import uuid
from transpile.api.autodiff import Transform
import transpile
from transpile.api import autodiff as api
from transpile import show
from transpile.errors import TranspileError
import numpy as np

TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "vmap", "jit")

_NOTES = {
    "jacfwd": "jacfwd(f) calls this generated jvp once per input element (one column each).",
    "jacrev": "jacrev(f) calls this generated vjp once per output element (one row each).",
    "hessian": "hessian(f) = jacfwd(grad(f)): this generated jvp of the gradient runs once per "
               "input element.",
}

_EPILOG = """\
transforms (--transform, comma-separated chains are applied outermost first, so
"jit,grad" means jit(grad(f))):
  grad, value_and_grad   reverse mode: the gradient of a scalar function
  jvp, vjp               forward / reverse products with a tangent / cotangent argument
  jacfwd, jacrev         shows the generated jvp / vjp that the Jacobian loops over
  hessian                shows the generated jvp of the gradient (jacfwd of grad)
  vmap                   the batched function (mapped over axis 0 of every argument)
  jit                    the lowered source that Numba compiles (give shapes with --args)

examples:
  transpile show examples/quickstart.py
  transpile show model.py --function loss --transform grad
  transpile show model.py -f predict -t jit --args "np.ones((8, 3)), np.ones(3)"
  transpile show model.py -f loss -t value_and_grad --out generated/
  transpile list model.py

Generated files also live in $TRANSPILE_CACHE_DIR (default ~/.cache/transpile).
"""


class CLIError(Exception):
    """A user mistake: printed as 'transpile: error: ...' with exit status 2."""


# ---- loading the user's file ------------------------------------------------------------------


def load_module(path):
    """Import `path` as a fresh module (not __main__); its directory goes first on sys.path."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise CLIError(f"no such file: {path}")
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"_transpile_cli_{stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot import {path} (is it a Python file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        raise CLIError(f"importing {path} called sys.exit({e.code}); put script code under "
                       "`if __name__ == \"__main__\":`") from None
    return module


def _innermost(obj):
    """The user's Python function under any number of transforms."""
    seen = 0
    while seen < 50:
        inner = getattr(obj, "fun", None) or getattr(obj, "__wrapped__", None)
        if inner is None or inner is obj:
            break
        obj = inner
        seen += 1
    return obj


def is_transformed(obj):
    """Made by one of our transforms (grad, jit, vmap, pmap, ...)?"""
    if isinstance(obj, Transform) or hasattr(obj, "__transpile_core__") or hasattr(obj, "show_source"):
        return True
    return type(obj).__module__.split(".")[0] == "transpile" and callable(obj) and \
        inspect.isfunction(_innermost(obj))


def _defined_here(obj, module):
    fn = _innermost(obj)
    return getattr(fn, "__module__", None) == module.__name__


def decorated_functions(module):
    """name -> object for module-level objects made by our transforms from this file's functions."""
    out = {}
    for name, obj in vars(module).items():
        if name.startswith("__") or inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        try:
            if is_transformed(obj) and _defined_here(obj, module):
                out[name] = obj
        except Exception:
            continue
    return out


def plain_functions(module):
    return {name: obj for name, obj in vars(module).items()
            if inspect.isfunction(obj) and obj.__module__ == module.__name__
            and not name.startswith("_")}


def _line(obj):
    fn = _innermost(obj)
    code = getattr(fn, "__code__", None)
    return code.co_firstlineno if code is not None else 0


def describe_functions(module, path):
    dec, plain = decorated_functions(module), plain_functions(module)
    lines = []
    for name, obj in sorted(dec.items(), key=lambda kv: _line(kv[1])):
        lines.append(f"  {name:<24} line {_line(obj):<5} {_kind(obj)}")
    for name, obj in sorted(plain.items(), key=lambda kv: _line(kv[1])):
        if name not in dec:
            params = ", ".join(inspect.signature(obj).parameters)
            lines.append(f"  {name:<24} line {_line(obj):<5} def {name}({params})")
    if not lines:
        return f"{path} defines no functions."
    return f"functions in {path}:\n" + "\n".join(lines)


def _kind(obj):
    r = repr(obj)
    return r if len(r) < 60 else type(obj).__name__


# ---- building the transform chain -------------------------------------------------------------


def parse_chain(text):
    if text is None:
        return []
    names = [t.strip().lower().replace("-", "_") for t in text.split(",") if t.strip()]
    if not names:
        raise CLIError("--transform is empty; valid transforms: " + ", ".join(TRANSFORMS))
    for n in names:
        if n not in TRANSFORMS:
            raise CLIError(f"unknown transform {n!r}; valid transforms: " + ", ".join(TRANSFORMS)
                           + ' (chain them with commas, outermost first: "jit,grad")')
    return names


def _public(name, issue):
    obj = getattr(transpile, name, None)
    if obj is None or inspect.ismodule(obj):
        raise CLIError(f"the {name} transform is not available in this build of transpile "
                       f"(it comes with issue #{issue})")
    return obj


def apply_transform(name, fun, backend=None):
    """One CLI transform name -> a transformed object whose generated source `show` prints."""
    if name == "grad":
        return api.grad(fun)
    if name == "value_and_grad":
        return api.value_and_grad(fun)
    if name in ("jvp", "jacfwd"):
        return api.JVP(fun)
    if name in ("vjp", "jacrev"):
        return api.VJP(fun)
    if name == "hessian":
        return api.JVP(api.Grad(fun))
    if name == "vmap":
        return _public("vmap", 4)(fun)
    if name == "jit":
        jit = _public("jit", 5)
        return jit(fun, backend=backend) if backend else jit(fun)
    raise CLIError(f"unknown transform {name!r}")


def build(fun, chain, backend=None):
    if backend and "jit" not in chain:
        raise CLIError("--backend chooses where jit compiles; add jit to --transform "
                       '(e.g. --transform jit or "jit,grad")')
    obj = fun
    for name in reversed(chain):
        obj = apply_transform(name, obj, backend)
    return obj


def eval_args(text):
    """--args "np.ones(3), 2.0" -> (array, 2.0), evaluated with numpy as np."""
    if text is None or not text.strip():
        return ()
    env = {"np": np, "numpy": np, "__builtins__": __builtins__}
    try:
        value = eval(f"({text},)", env)
    except Exception as e:
        raise CLIError(f"could not evaluate --args {text!r}: {type(e).__name__}: {e} "
                       "(write Python expressions; numpy is available as np)") from None
    return tuple(value)


# ---- output -----------------------------------------------------------------------------------


def highlight(text, color):
    """Colour with pygments (an install dependency) when asked, or, with --color auto, when
    stdout is a terminal and NO_COLOR is not set; plain text when piped or redirected."""
    if color == "never" or (color == "auto" and (not sys.stdout.isatty() or
                                                  os.environ.get("NO_COLOR"))):
        return text
    try:
        from pygments import highlight as _hl   # (lazy: optional colour in a terminal)
        from pygments.formatters import TerminalFormatter   # (lazy: optional colour in a terminal)
        from pygments.lexers import PythonLexer   # (lazy: optional colour in a terminal)
    except ImportError:
        return text
    return _hl(text, PythonLexer(), TerminalFormatter())


def generated_source(obj, args):
    try:
        return show(obj, *args)
    except TranspileError:
        raise
    except Exception as e:
        if not args:
            raise CLIError(_args_hint(obj, e)) from e
        raise CLIError(f"could not generate the source: {type(e).__name__}: {e}") from e


def _args_hint(obj, e):
    """The message for a transform that needs example arguments: the function's parameters
    and an --args line with one expression per required parameter."""
    fn = _innermost(obj)
    name = getattr(fn, "__name__", "the function")
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    required = [p.name for p in params if p.default is inspect.Parameter.empty and
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    shown = ", ".join(str(p) for p in params)
    example = ", ".join("np.ones(3)" for _ in required)
    return (f"{name}({shown}) needs example arguments for this transform: the generated code "
            f"depends on their shapes and dtypes. Pass one expression per parameter "
            f"({', '.join(required) or 'none required'}), numpy as np, e.g. "
            f"--args \"{example}\" (shapes as in your calls)." +
            ("" if isinstance(e, TypeError) else f"\n    ({type(e).__name__}: {e})"))


def _file_name(name, chain):
    suffix = "__".join(chain) if chain else "core"
    return f"{name}__{suffix}.py"


# ---- commands ---------------------------------------------------------------------------------


def cmd_list(ns, out):
    module = load_module(ns.file)
    out.write(describe_functions(module, ns.file) + "\n")
    return 0


def cmd_show(ns, out, err):
    chain = parse_chain(ns.transform)
    args = eval_args(ns.args)
    module = load_module(ns.file)
    if ns.function:
        targets = {}
        for name in ns.function:
            if not hasattr(module, name):
                raise CLIError(f"{ns.file} has no function {name!r}.\n"
                               + describe_functions(module, ns.file))
            obj = getattr(module, name)
            if not callable(obj):
                raise CLIError(f"{name!r} in {ns.file} is a {type(obj).__name__}, not a function")
            targets[name] = obj
    else:
        targets = decorated_functions(module)
        if not targets:
            raise CLIError(f"{ns.file} has no functions decorated with transpile transforms; "
                           "name one with --function NAME (and pick --transform).\n"
                           + describe_functions(module, ns.file))
    if ns.out:
        os.makedirs(ns.out, exist_ok=True)
    first = True
    for name, fun in targets.items():
        obj = build(fun, chain, ns.backend)
        text = generated_source(obj, args)
        note = _NOTES.get(chain[0]) if chain else None
        if note:
            text = f"# {note}\n" + text
        if not first:
            out.write("\n")
        first = False
        title = ",".join(chain) if chain else "as written" if is_transformed(fun) else "core form"
        out.write(highlight(f"# ==== {name} ({title}) ====\n" + text, ns.color))
        if not text.endswith("\n"):
            out.write("\n")
        if ns.out:
            dest = os.path.join(ns.out, _file_name(name, chain))
            with open(dest, "w") as f:
                f.write(text if text.endswith("\n") else text + "\n")
            err.write(f"wrote {dest}\n")
    return 0


def make_parser():
    parser = argparse.ArgumentParser(
        prog="transpile",
        description="Show the Python source that transpile generates for your functions "
                    "(gradients, batched and compiled versions), or write it to files.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    show = sub.add_parser(
        "show", help="print the generated source for functions in a file",
        description="Import FILE and print the generated source of its functions: those "
                    "decorated with transpile transforms, or the ones named with --function.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("file", metavar="FILE", help="a Python file (imported as a module)")
    show.add_argument("-f", "--function", action="append", metavar="NAME",
                      help="the function to show (repeatable); default: the decorated ones")
    show.add_argument("-t", "--transform", metavar="T[,T...]",
                      help="transform(s) to apply: " + ", ".join(TRANSFORMS)
                      + ' (a chain like "jit,grad" is jit(grad(f)))')
    show.add_argument("-b", "--backend", choices=("cpu", "cupy", "cuda"),
                      help="where jit compiles (needs jit in --transform)")
    show.add_argument("-a", "--args", metavar="EXPRS",
                      help='example arguments, e.g. "np.ones(3), 2.0" (numpy is np); needed by '
                           "transforms that specialize on shapes (jit); default: one array per "
                           "parameter, structure only")
    show.add_argument("-o", "--out", metavar="DIR",
                      help="also write each generated source to DIR/<name>__<transforms>.py")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="syntax highlighting with pygments (auto: when stdout is a terminal)")

    lst = sub.add_parser("list", help="list the functions in a file that `show` can print",
                         description="Import FILE and list its functions.")
    lst.add_argument("file", metavar="FILE")
    return parser


def main(argv=None):
    parser = make_parser()
    ns = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if ns.version:
        out.write(f"transpile {transpile.__version__}\n")
        return 0
    if ns.command is None:
        parser.print_help(out)
        return 2
    try:
        if ns.command == "list":
            return cmd_list(ns, out)
        return cmd_show(ns, out, err)
    except CLIError as e:
        err.write(f"transpile: error: {e}\n")
        return 2
    except TranspileError as e:
        err.write(f"transpile: cannot transform: {e}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
