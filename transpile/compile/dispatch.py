"""jit's dispatch fast path: a generated Python function per signature of a Jit.

A call of `jit(f)` first runs the entry generated for its latest signature, which checks in a
few attribute reads that the arguments match that signature (types, shapes, dtypes, static
values, the keys of dicts and lengths of tuples in pytrees) and that nothing the code was
generated from was rebound, then calls the compiled Numba dispatcher directly with the flat
leaves. For example, for `f(p, x)` with p a dict of two float64 vectors and x a float, reading
the global `g`:

    def entry(*args):
        if len(args) == 2:
            a0, a1, = args
            if type(a0) is dict and len(a0) == 2 \\
                    and type(l0 := a0.get('b', MISSING)) is ND and l0.shape == S0 and l0.dtype is D0 \\
                    and type(l1 := a0.get('w', MISSING)) is ND and l1.shape == S1 and l1.dtype is D1 \\
                    and type(a1) is T2 and G0.get('g', MISSING) is O0:
                try:
                    out = fn(l0, l1, a1)
                except Exception as e:
                    return raised(e, [l0, l1, a1], [])
                return finish(out)
        return fallback(args)

Anything else (another signature, keywords, a rebound global) goes to `fallback`: the entries
of other flat signatures by the types of the arguments, then jit's full path, which checks and
rebuilds, so an entry never serves stale code. `run(args)` is the same check returning MISS
instead of falling back. Built by api/jit.py (Jit._install_fast) from a Compiled.
"""
import numpy as np

from transpile.compile.dynamic_ints import LIMIT, is_dynamic_int
from transpile.compile.specialization import contiguous_params
from transpile_runtime.argument_overlap import shares

MISS = object()

_SCALARS = (float, complex, np.float64, np.float32, np.float16, np.complex64, np.complex128,
            np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8,
            np.bool_)


class _Unsupported(Exception):
    pass


def generated_entry(c, args, trees, dynamic_ints, fallback, given=None, defaults=None):
    """The entry for `c` (a Compiled that runs compiled code) and positional `args` whose
    pytree structures are `trees` (Jit.flatten_args); None where it does not apply (the NumPy
    tier, free variables, arguments of other kinds). `given`: how many of `args` a call
    passes; the others are the parameters' defaults, held by the entry and checked as any
    argument (a default object changed in place to another type or shape takes the full
    path). `defaults`: (function, its __defaults__ tuple) the defaults came from: an entry
    that holds defaults checks that the function still has them (f.__defaults__ replaced:
    the full path)."""
    if c.eager or c.delegate is not None or not c.checked or c.statics or c.free:
        return None
    ns = {"ND": np.ndarray, "MISSING": object(), "fn": c.fn, "fallback": fallback,
          "raised": c.raised, "finish": c.fast_finish(), "LIMIT": LIMIT, "MISS": MISS,
          "SHARES": shares}
    conds, leaves = [], []
    counter = [0]

    def new(prefix, value):
        k = counter[0]
        counter[0] += 1
        ns[f"{prefix}{k}"] = value
        return f"{prefix}{k}"

    def emit(expr, value, tree):
        kind = tree.kind
        if kind == "static":
            conds.append(f"type({expr}) is {new('T', type(value))} and {expr} == "
                         f"{new('V', value)}")
        elif kind == "none":
            conds.append(f"{expr} is None")
        elif kind == "leaf":
            t = type(value)
            if t is np.ndarray and value.ndim:
                conds.append(f"type({expr}) is ND and {expr}.shape == {new('S', value.shape)} "
                             f"and {expr}.dtype is {new('D', value.dtype)}")
            elif t is int and dynamic_ints and is_dynamic_int(value):
                conds.append(f"type({expr}) is int and -LIMIT < {expr} < LIMIT")
            elif t in _SCALARS:
                conds.append(f"type({expr}) is {new('T', t)}")
            else:
                raise _Unsupported
            leaves.append(expr)
        elif kind in ("dict", "tuple", "list"):
            if type(value) is not {"dict": dict, "tuple": tuple, "list": list}[kind]:
                raise _Unsupported
            conds.append(f"type({expr}) is {kind} and len({expr}) == {len(tree.children)}")
            items = tree.keys if kind == "dict" else range(len(tree.children))
            for k, child in zip(items, tree.children):
                if kind == "dict" and type(k) not in (str, int):
                    raise _Unsupported
                local = new("l", None)
                if kind == "dict":
                    conds.append(f"({local} := {expr}.get({k!r}, MISSING)) is not MISSING")
                    child_value = value[k]
                else:
                    conds.append(f"({local} := {expr}[{k}]) is not MISSING")
                    child_value = value[k]
                emit(local, child_value, child)
        else:
            raise _Unsupported

    n = len(args)
    names = [f"a{i}" for i in range(n)]
    try:
        for name, a, tree in zip(names, args, trees):
            emit(name, a, tree)
    except _Unsupported:
        return None
    for where, obj in c.spec_deps:
        o = new("O", obj)
        if where[0] == "global":
            conds.append(f"{new('G', where[1])}.get({where[2]!r}, MISSING) is {o}")
        elif where[0] == "closure":
            conds.append(f"{new('C', where[1])}.cell_contents is {o}")
        elif where[0] == "attr":
            conds.append(f"getattr({new('A', where[1])}, {where[2]!r}, MISSING) is {o}")
        else:
            return None
    passed = ", ".join(leaves)
    for k in contiguous_params(c.core):
        if k < len(leaves):     # (other layouts: the full path runs the function itself)
            conds.append(f"{leaves[k]}.flags.c_contiguous")
    if c.writes_args and len(leaves) > 1:
        # arguments that share memory take the full path, which refuses them
        conds.append(f"not SHARES({passed})")
    av = c.out_avals[0] if len(c.out_avals) == 1 else None
    single_array = getattr(c.core.out_tree, "kind", None) == "leaf" and av is not None and \
        bool(av.shape)
    ret = "out[0]" if single_array else "finish(out)"
    given = n if given is None else given
    if given < n and defaults is not None:
        conds.append(f"{new('F', defaults[0])}.__defaults__ is {new('DT', defaults[1])}")
    unpack = f"{', '.join(names[:given])}, = args" if given else "pass"
    for i in range(given, n):
        unpack += f"\n        {names[i]} = {new('DEFAULT', args[i])}"
    cond = " \\\n                and ".join(conds) or "True"
    body = (f"    if len(args) == {given}:\n"
            f"        {unpack}\n"
            f"        if {cond}:\n"
            f"            try:\n"
            f"                out = fn({passed})\n"
            f"            except Exception as e:\n"
            f"                return raised(e, [{passed}], [])\n"
            f"            return {ret}\n")
    src = (f"def entry(*args):\n{body}    return fallback(args)\n\n\n"
           f"def run(args):\n{body}    return MISS\n")
    exec(compile(src, f"<jit dispatch {c.core.name}>", "exec"), ns)
    entry = ns["entry"]
    entry.run = ns["run"]
    entry.source = src
    entry.compiled = c
    return entry
