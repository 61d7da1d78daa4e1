"""jit's dispatch fast path: one generated Python function per Jit for its latest signature.

A call of `jit(f)` with flat arguments (arrays, Python and NumPy scalars, static values) first
runs this entry, which checks in a few attribute reads that the arguments match the signature
it was generated for and that nothing the code was generated from was rebound, then calls the
compiled Numba dispatcher directly. For example, for `f(x, a)` with a float64 vector and a
float, reading the global helper `g`:

    def entry(*args):
        if len(args) == 2:
            a0, a1 = args
            if type(a0) is ND and a0.shape == S0 and a0.dtype is D0 and type(a1) is T1 \\
                    and G0.get('g', MISSING) is O0:
                try:
                    out = fn(a0, a1)
                except Exception as e:
                    return raised(e, [a0, a1], [])
                return out[0]
        return fallback(args)

Anything else (another signature, a pytree, keywords, a rebound global) goes to `fallback`,
the dictionary of fast runners and then jit's full path, which checks and rebuilds, so the
entry never serves stale code. Built by jit.py (Jit._install_fast) from a Compiled.
"""
import numpy as np

from transpile.dynamic_ints import LIMIT


def generated_entry(c, args, key, static, dynamic, fallback):
    """The entry for `c` (a Compiled that runs compiled code) and these positional `args`
    (whose fast key is `key`); None where it does not apply (free variables, statics)."""
    if c.eager or c.delegate is not None or not c.checked or c.statics or c.free:
        return None
    ns = {"ND": np.ndarray, "MISSING": object(), "fn": c.fn, "fallback": fallback,
          "raised": c.raised, "finish": c.fast_finish(), "LIMIT": LIMIT}
    n = len(args)
    names = [f"a{i}" for i in range(n)]
    conds = []
    for i, (a, k) in enumerate(zip(args, key)):
        v = names[i]
        if i in static or type(k) is tuple and k[0] == "static":
            ns[f"V{i}"] = a
            ns[f"T{i}"] = type(a)
            conds.append(f"type({v}) is T{i} and {v} == V{i}")
        elif type(a) is np.ndarray:
            ns[f"S{i}"], ns[f"D{i}"] = a.shape, a.dtype
            conds.append(f"type({v}) is ND and {v}.shape == S{i} and {v}.dtype is D{i}")
        elif k is int:
            conds.append(f"type({v}) is int and -LIMIT < {v} < LIMIT")
        else:
            ns[f"T{i}"] = type(a)
            conds.append(f"type({v}) is T{i}")
    for j, (where, obj) in enumerate(c.spec_deps):
        ns[f"O{j}"] = obj
        if where[0] == "global":
            ns[f"G{j}"] = where[1]
            conds.append(f"G{j}.get({where[2]!r}, MISSING) is O{j}")
        elif where[0] == "closure":
            ns[f"C{j}"] = where[1]
            conds.append(f"C{j}.cell_contents is O{j}")
        elif where[0] == "attr":
            ns[f"A{j}"] = where[1]
            conds.append(f"getattr(A{j}, {where[2]!r}, MISSING) is O{j}")
        else:
            return None
    passed = ", ".join(names[i] for i in range(n) if dynamic is None or i in dynamic)
    av = c.out_avals[0] if len(c.out_avals) == 1 else None
    single_array = getattr(c.core.out_tree, "kind", None) == "leaf" and av is not None and \
        bool(av.shape)
    ret = "out[0]" if single_array else "finish(out)"
    unpack = f"{', '.join(names)}, = args" if n else "pass"
    cond = " and ".join(conds) or "True"
    src = (f"def entry(*args):\n"
           f"    if len(args) == {n}:\n"
           f"        {unpack}\n"
           f"        if {cond}:\n"
           f"            try:\n"
           f"                out = fn({passed})\n"
           f"            except Exception as e:\n"
           f"                return raised(e, [{passed}], [])\n"
           f"            return {ret}\n"
           f"    return fallback(args)\n")
    exec(compile(src, f"<jit dispatch {c.core.name}>", "exec"), ns)
    entry = ns["entry"]
    entry.source = src
    return entry
