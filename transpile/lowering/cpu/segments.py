"""Functions compiled in parts: split at their collectives (psum, pmean, pmax, pmin,
axis_index under pmap), or at the statements Numba cannot compile (a graph break).

A collective waits for every shard at a barrier (runtime/collectives.py), which compiled code
cannot do. So the lowered module has one @njit function per stretch of code between
collectives, and the entry function is plain Python that calls them in turn, with each
collective in between:

    def f__jit(x):
        y, = f__jit__part0(x)              # compiled (nogil: the shards run in parallel)
        s = rt.psum(y, 'i')                # the barrier, in Python
        out, = f__jit__part1(x, y, s)      # compiled
        return (out,)

A part takes the names it reads that were bound before it and returns the names it binds
that are read after it. A collective inside a loop or a branch is not split (Unlowerable).

A statement of the function's body that has no Numba lowering (a loop, if one statement in it
has none) runs the same way: its NumPy code in the entry function, between compiled parts
(`breaks` collects why). The function falls back to NumPy as a whole only when no statement
compiles.
"""
import ast
import copy

from transpile.core import ir
from transpile.core.ir import Eqn
from transpile.core.codegen import fmt_expr, Printer
from transpile.optimize.fusion import FusedGroup
from transpile.lowering.cpu.text import Unlowerable
from transpile.primitives.internal import control as C
import numpy as np


def is_collective(st):
    return isinstance(st, Eqn) and st.prim.batch == "collective"


def _nested_collective(body):
    for st in body:
        for f in ("body", "orelse", "cond_body"):
            inner = getattr(st, f, None) or []
            if any(is_collective(s) for s in inner) or _nested_collective(inner):
                return True
    return False


def has_collectives(body):
    return any(is_collective(st) for st in ir.walk_eqns(body))


def _names(lines):
    """(names read, names bound) by some lines of a function body, in order of appearance."""
    tree = ast.parse("def _part():\n" + "\n".join(lines) + "\n    pass\n")
    loads, stores = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stores if isinstance(node.ctx, ast.Store) else loads)[node.id] = True
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            loads[node.target.id] = True
    return list(loads), list(stores)


def segmented_main(lw, body, outs, signature, header, decorator, breaks=None):
    """The module text of a function split at its collectives, and (when `breaks` is a list)
    at the statements that have no Numba lowering."""
    if _nested_collective(body):
        st = next(s for s in ir.walk_eqns(body) if is_collective(s))
        raise Unlowerable(st, "a collective inside a loop or a branch",
                          construct=f"{st.prim.path}(...)")
    lowered, code = [], []

    def close_code():
        if code and not all(line.lstrip().startswith("#") for line in code):
            loads, stores = _names(code)
            lowered.append(("code", list(code), loads, stores))
        code.clear()

    for st in body:
        if is_collective(st):
            close_code()
            note = []
            lw.last_loc = None
            lw.comment(st.loc, "", note)
            text = f"{st.out} = {fmt_expr(st)}"
            lowered.append(("collective", note + [text], st.vars_read(), [st.out]))
            continue
        lines, kernels, shared = [], len(lw.kernels), dict(lw.shared_kernels)
        try:
            lw._block([st], "    ", lines)
        except Unlowerable as e:
            if breaks is None:
                raise
            del lw.kernels[kernels:]
            lw.shared_kernels = shared
            close_code()
            python = numpy_lines(lw, st)
            loads, stores = _names(python)
            unbound = [n for n in loads if n in lw.core.statics and n not in lw.params]
            if unbound:
                # a value captured from the user's code (a function, an object) that the
                # lowered module does not hold: the whole function runs its NumPy version
                raise e
            lowered.append(("python", python, loads, stores))
            breaks.append(e)
            lw.last_loc = None
            continue
        code += lines
    close_code()
    if breaks and not any(kind == "code" for kind, *_ in lowered):
        raise breaks[0]         # nothing compiles: the whole function runs NumPy
    rets = [lw.fmt(o) for o in outs]
    defined = set(lw.params)
    later = []            # names read by each piece and after it
    acc = set(r for r in rets if r.isidentifier())
    for kind, lines, loads, stores in reversed(lowered):
        later.append(set(acc))
        acc |= set(loads)
    later.reverse()
    text = header.replace("\nimport numpy as np\n",
                          "\nimport numpy as np\nimport transpile_runtime as rt\n", 1)
    part_avals = {}
    for k in lw.kernels:
        text += "\n\n" + k
    driver = []
    count = 0
    for k, (kind, lines, loads, stores) in enumerate(lowered):
        if kind == "collective":
            driver += ["    " + line for line in lines]
            defined |= set(stores)
            continue
        if kind == "python":
            driver.append("    # runs in NumPy: no Numba lowering")
            driver += lines
            defined |= set(stores)
            continue
        ins = [n for n in loads if n in defined]
        outs_k = [n for n in stores if n in later[k]]
        part = f"{lw.name}__part{count}"
        count += 1
        sig = []
        for n in ins:
            av = lw.avals.get(n)
            if av is None:
                if breaks is None:
                    raise Unlowerable(None, f"unknown shape of {n}",
                                      construct="a function with collectives")
                sig = None          # (a shape known only at run time: compiled when called)
                break
            sig.append((tuple(av.shape), av.dtype.name, bool(av.weak)))
        if sig is not None:
            part_avals[part] = tuple(sig)
        between = "collectives" if breaks is None else "statements run in NumPy"
        nogil = "nogil=True, " if "objmode" not in "\n".join(lines) else ""
        text += "\n\n" + decorator.replace("nogil=True, ", nogil) + f"\ndef {part}({', '.join(ins)}):\n"
        text += f'    """{lw.core.name}, part {count - 1} (between {between})"""\n'
        text += "\n".join(lines) + "\n"
        text += f"    return ({', '.join(outs_k)},)\n" if outs_k else "    return None\n"
        call = f"{part}({', '.join(ins)})"
        driver.append(f"    {', '.join(outs_k)}, = {call}" if outs_k else f"    {call}")
        defined |= set(stores)
    text += f"\n\ndef {lw.name}({', '.join(lw.params)}):\n"
    split = "its collectives" if breaks is None else "statements Numba cannot compile"
    text += (f'    """{lw.core.name} lowered for Numba in parts split at {split}; '
             f'{signature}"""\n')
    text += "\n".join(driver) + "\n"
    text += f"    return ({', '.join(rets)},)\n" if rets else "    return ()\n"
    # compiled before the first call (a shard must not compile while the others wait for it
    # at a barrier): (shape, dtype, Python scalar?) of each part's arguments
    text += f"\n\nPARTS = {part_avals!r}\n"
    return text


def numpy_lines(lw, st):
    """The NumPy code of one statement of the body (its fused loops as the operations they
    fuse), for the entry function of a split module."""
    p = Printer(lw.core)
    p.stmt(_unfused(st, lw.in_place), "    ")
    return p.lines


def _unfused(st, in_place):
    """st as NumPy statements: a fused loop as its operations, then the stores it made into
    other arrays; a write the compiled code does in place (the caller's array, when the
    write-back was left out for it) done in place here too."""
    if isinstance(st, FusedGroup):
        stores = [Eqn(x, C.write_in_place, {"x": ir.Var(x), "index": index, "v": ir.Var(out)},
                      st.loc) for out, (x, index) in st.stores.items()]
        return _Seq(list(st.eqns) + list(st.reductions) + stores)
    if isinstance(st, Eqn) and id(st) in in_place and st.prim in _IN_PLACE_FORM:
        return Eqn(st.out, _IN_PLACE_FORM[st.prim], st.args, st.loc)
    for f in ("body", "orelse", "cond_body"):
        inner = getattr(st, f, None)
        if inner:
            new = []
            for s in inner:
                u = _unfused(s, in_place)
                new += u.stmts if isinstance(u, _Seq) else [u]
            st = copy.copy(st)
            setattr(st, f, new)
    return st


_IN_PLACE_FORM = {C.setitem: C.write_in_place, C.setitem_if_array: C.write_in_place_if_array}


class _Seq:
    """Statements that stand for one (a fused loop printed as its operations)."""

    def __init__(self, stmts):
        self.stmts = stmts

    def print_lines(self, printer, indent):
        sub = type(printer)(printer.core)
        for s in self.stmts:
            sub.stmt(s, indent)
        return [line[len(indent):] for line in sub.lines]


def compile_parts(ns):
    """Compile every part of a split module for its argument types (typing only: nothing
    runs). Returns True when the module has parts."""
    if "PARTS" not in ns:
        return False
    parts = ns["PARTS"]
    import numba   # (lazy: import transpile does not load Numba)
    for name, sig in parts.items():
        if any(np.dtype(dtype) == object for _, dtype, _ in sig):
            continue        # a np.random.Generator: typed from the value at the first call
        types = []
        for shape, dtype, weak in sig:
            if shape:
                types.append(numba.typeof(np.zeros(shape, dtype)))
            elif weak:
                types.append(numba.typeof(np.dtype(dtype).type(0).item()))
            else:
                types.append(numba.typeof(np.dtype(dtype).type(0)))
        ns[name].compile(tuple(types))
    return True
