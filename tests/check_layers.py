"""Check the import layering of transpile/ and runtime/ (installed as transpile_runtime).

Builds the import graph from the source with ``ast``: every ``import`` statement, including
the ones inside functions (a lazy upward import is still a cycle). Relative imports are
resolved; ``transpile_runtime`` maps to the runtime/ folder. Exits non-zero, printing the
offenders, when runtime/ imports anything from transpile/ or when the graph has a cycle.

It also checks the package order: transpile/ is the pipeline, and a module imports only from
its own layer or the layers below it in LAYERS (a new upward import fails). A layer is a list of
module prefixes; a module belongs to the layer of its longest matching prefix.

Usage: python tests/check_layers.py [repo_root]
"""
import ast
import os
import sys

PACKAGES = {"transpile": "transpile", "transpile_runtime": "runtime"}


def module_files(root):
    """Map dotted module name -> file path for every .py under the packages."""
    mods = {}
    for pkg, folder in PACKAGES.items():
        base = os.path.join(root, folder)
        for dirpath, _dirs, files in os.walk(base):
            if "__pycache__" in dirpath:
                continue
            rel = os.path.relpath(dirpath, base)
            parts = [pkg] + ([] if rel == "." else rel.split(os.sep))
            for f in files:
                if not f.endswith(".py"):
                    continue
                name = parts if f == "__init__.py" else parts + [f[:-3]]
                mods[".".join(name)] = os.path.join(dirpath, f)
    return mods


def _resolve(mods, name):
    """Longest known module prefix of a dotted name (None if outside our packages)."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in mods:
            return cand
        parts.pop()
    return None


def _canonical(name):
    """runtime.x (the folder's name) and transpile_runtime.x (the installed name) are one module."""
    if name.split(".")[0] == "runtime":
        return "transpile_runtime" + name[len("runtime"):]
    return name


def import_graph(root):
    mods = module_files(root)
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        is_pkg = path.endswith("__init__.py")
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # `from pkg import sub` needs pkg.sub (pkg itself is initialised first in any
                # case); `from pkg import name` for a name defined in pkg/__init__.py needs pkg
                subs = [prefix + "." + a.name for a in node.names]
                targets = [t for t in subs if _canonical(t) in mods]
                if len(targets) < len(subs):
                    targets.append(prefix)
            for t in targets:
                dep = _resolve(mods, _canonical(t))
                if dep and dep != mod:
                    graph[mod].add(dep)
    return graph


def find_cycles(graph):
    """Strongly connected components with more than one module (Tarjan), as cycles.

    `from pkg import submodule` is an edge to the submodule only (Python initialises pkg before
    any of its submodules anyway); a module that reads a name defined in its own package's
    __init__.py (`from transpile import grad`, `import transpile; transpile.x`) has an edge
    to that package, which is a cycle when the package imports the module.
    """
    edges = graph
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    cycles = []
    for comp in comps:
        cycles.append(_one_cycle(edges, comp))
    return comps, cycles


def _one_cycle(edges, comp):
    """A concrete cycle through the component's first module (breadth-first)."""
    start, members = comp[0], set(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v] & members):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


# bottom to top: the run time, the public leaves, core Python, the primitive table, what every
# stage shares, then the pipeline's stages in order, then the public modules built on them
LAYERS = [
    ["transpile_runtime"],
    ["transpile.version", "transpile.errors", "transpile.pytree"],
    ["transpile.core.ir"],
    ["transpile.primitives"],
    ["transpile.core"],
    ["transpile.frontend"],
    ["transpile.ad"],
    ["transpile.batching"],
    ["transpile.optimize"],
    ["transpile.lowering"],
    ["transpile.compile"],
    ["transpile.api"],
    ["transpile"],
]


def layer_of(mod, layers=LAYERS):
    """Index of the layer whose longest prefix matches `mod` (None: not in any layer)."""
    best, best_len = None, -1
    for i, prefixes in enumerate(layers):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def upward_imports(graph, layers=LAYERS):
    out = []
    for mod in sorted(graph):
        here = layer_of(mod, layers)
        for dep in sorted(graph[mod]):
            there = layer_of(dep, layers)
            if here is not None and there is not None and there > here:
                out.append(f"upward import: {mod} -> {dep} ({layers[here][0]} is below {layers[there][0]})")
    return out


def problems(root, layers=LAYERS):
    graph = import_graph(root)
    out = upward_imports(graph, layers)
    for mod in sorted(graph):
        if mod.startswith("transpile_runtime"):
            for dep in sorted(graph[mod]):
                if dep == "transpile" or dep.startswith("transpile."):
                    out.append(f"runtime imports transpile: {mod} -> {dep}")
    comps, cycles = find_cycles(graph)
    for comp, cyc in zip(comps, cycles):
        out.append(f"import cycle ({len(comp)} modules): " + " -> ".join(cyc))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = problems(root)
    for line in found:
        print(line)
    if not found:
        print("layers ok: no import cycles, no upward import, runtime/ imports nothing from transpile/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
