"""Functions with collectives (psum, pmean, pmax, pmin, axis_index under pmap), compiled in
parts split at the collectives.

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
"""
import ast
import sys

from transpile import ir
from transpile.ir import Eqn


def is_collective(st):
    return isinstance(st, Eqn) and getattr(st.prim, "batch", None) == "collective"


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


def segmented_main(lw, body, outs, signature, header, decorator):
    """The module text of a function split at its collectives."""
    from transpile.codegen import fmt_expr
    if _nested_collective(body):
        st = next(s for s in ir.walk_eqns(body) if is_collective(s))
        raise sys.modules[type(lw).__module__].Unlowerable(
            st, "a collective inside a loop or a branch", construct=f"{st.prim.path}(...)")
    pieces, cur = [], []
    for st in body:
        if is_collective(st):
            pieces.append(("code", cur))
            pieces.append(("collective", st))
            cur = []
        else:
            cur.append(st)
    pieces.append(("code", cur))
    lowered = []
    for kind, x in pieces:
        if kind == "code":
            lines = []
            if x:
                lw.block(x, "    ", lines)
            if lines:
                loads, stores = _names(lines)
                lowered.append(("code", lines, loads, stores))
        else:
            note = []
            lw.last_loc = None
            lw.comment(x.loc, "", note)
            text = f"{x.out} = {fmt_expr(x)}"
            lowered.append(("collective", note + [text], x.vars_read(), [x.out]))
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
    for k, (kind, lines, loads, stores) in enumerate(lowered):
        if kind == "collective":
            driver += ["    " + line for line in lines]
            defined |= set(stores)
            continue
        ins = [n for n in loads if n in defined]
        outs_k = [n for n in stores if n in later[k]]
        part = f"{lw.name}__part{len(part_avals)}"
        sig = []
        for n in ins:
            av = lw.avals.get(n)
            if av is None:
                raise sys.modules[type(lw).__module__].Unlowerable(
                    None, f"unknown shape of {n}", construct="a function with collectives")
            sig.append((tuple(av.shape), av.dtype.name, bool(av.weak)))
        part_avals[part] = tuple(sig)
        text += f"\n\n{decorator}\ndef {part}({', '.join(ins)}):\n"
        text += f'    """{lw.core.name}, part {len(part_avals) - 1} (between collectives)"""\n'
        text += "\n".join(lines) + "\n"
        text += f"    return ({', '.join(outs_k)},)\n" if outs_k else "    return None\n"
        call = f"{part}({', '.join(ins)})"
        driver.append(f"    {', '.join(outs_k)}, = {call}" if outs_k else f"    {call}")
        defined |= set(stores)
    text += f"\n\ndef {lw.name}({', '.join(lw.params)}):\n"
    text += (f'    """{lw.core.name} lowered for Numba in parts split at its collectives; '
             f'{signature}"""\n')
    text += "\n".join(driver) + "\n"
    text += f"    return ({', '.join(rets)},)\n" if rets else "    return ()\n"
    # compiled before the first call (a shard must not compile while the others wait for it
    # at a barrier): (shape, dtype, Python scalar?) of each part's arguments
    text += f"\n\nPARTS = {part_avals!r}\n"
    return text


def compile_parts(ns):
    """Compile every part of a split module for its argument types (typing only: nothing
    runs). Returns True when the module has parts."""
    if "PARTS" not in ns:
        return False
    parts = ns["PARTS"]
    import numba
    import numpy as np
    for name, sig in parts.items():
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
