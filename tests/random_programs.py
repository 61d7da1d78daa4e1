"""Random NumPy programs for differential testing of every transform.

A program is a module-level function `f(x)` of a float64 vector of length 4 returning a scalar.
Its body is drawn from the statements users write: straight-line arithmetic, branches on data,
`for`/`while` loops with carried values, subscript writes (elements, slices, augmented), aliases
and views, and calls of a helper function; MUTATION_KINDS adds writes through views, second
names, into the function's argument, and element recurrences in loops; FOREIGN_KINDS adds the
constructs of code written by others (issue 22). `make_program(draw)` returns the source text; the
source is written to a real file and imported, so transforms can read it like user code.

The same program is also printed with `jnp` for JAX when it has no in-place write (JAX has
none), giving an independent oracle besides finite differences.
"""
import importlib.util
import itertools
import os
import tempfile

import numpy as np
from hypothesis import strategies as st

N = 4
UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))",
         "np.sqrt({0} * {0} + 1.0)", "np.log(1.0 + {0} * {0})", "({} * 0.5)", "np.abs({})"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "np.maximum({}, {})"]
_counter = itertools.count()
_DIR = []   # this process's directory for generated modules, made on first use


class Program:
    def __init__(self):
        self.lines = []
        self.vars = ["x"]
        self.writes = False
        self.helper = False

    def fresh(self):
        return f"t{len(self.vars)}"

    def emit(self, line, indent=1):
        self.lines.append("    " * indent + line)


def _pick(draw, prog):
    return draw(st.sampled_from(prog.vars))


def _expr(draw, prog):
    kind = draw(st.integers(0, 2))
    a = _pick(draw, prog)
    if kind == 0:
        return draw(st.sampled_from(UNARY)).format(a)
    if kind == 1:
        return draw(st.sampled_from(BINARY)).format(a, _pick(draw, prog))
    c = draw(st.sampled_from(["0.5", "1.5", "-0.75", "2.0"]))
    return f"{a} * {c} + {c}"


def _stmt(draw, prog, kinds):
    kind = draw(st.sampled_from(kinds))
    t = prog.fresh()
    if kind == "assign":
        prog.emit(f"{t} = {_expr(draw, prog)}")
    elif kind == "if":
        a = _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.3", "-0.2"]))
        prog.emit(f"if np.sum({a}) > {c}:")
        prog.emit(f"{t} = {_expr(draw, prog)}", 2)
        if draw(st.booleans()):
            prog.emit("else:")
            prog.emit(f"{t} = {_expr(draw, prog)}", 2)
        else:   # no else: the variable must exist before
            prog.lines.insert(len(prog.lines) - 2, f"    {t} = {_pick(draw, prog)} * 1.0")
    elif kind == "for":
        a, b = _pick(draw, prog), _pick(draw, prog)
        n = draw(st.integers(1, 3))
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"for i in range({n}):")
        prog.emit(f"{t} = {t} * 0.5 + np.sin({b})", 2)
    elif kind == "while":
        a = _pick(draw, prog)
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit("k = 0")
        prog.emit(f"while np.sum(np.abs({t})) < 20.0 and k < 3:")
        prog.emit(f"{t} = {t} * 1.5 + 0.25", 2)
        prog.emit("k = k + 1", 2)
    elif kind == "break":         # a loop left early on a data condition
        a, b = _pick(draw, prog), _pick(draw, prog)
        n = draw(st.integers(1, 4))
        c = draw(st.sampled_from(["0.0", "0.5", "1.5"]))
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"for i in range({n}):")
        prog.emit(f"{t} = {t} * 0.5 + np.sin({b})", 2)
        prog.emit(f"if np.sum({t}) > {c}:", 2)
        prog.emit("break", 3)
    elif kind == "early_return":  # return from the middle of the function on a data condition
        a = _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.3", "-0.2"]))
        prog.emit(f"if np.sum({a}) > {c}:")
        prog.emit(f"return np.sum(np.sin({a}) * {a})", 2)
        prog.emit(f"{t} = {_expr(draw, prog)}")
    elif kind == "write":
        a = _pick(draw, prog)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        form = draw(st.integers(0, 3))
        b = _pick(draw, prog)
        if form == 0:
            j = draw(st.integers(0, N - 1))
            prog.emit(f"{t}[{j}] = np.sin({b}[{j}])")
        elif form == 1:
            prog.emit(f"{t}[1:3] = {b}[0:2] * 2.0")
        elif form == 2:
            prog.emit(f"{t}[::2] += {b}[1::2]")
        else:
            prog.emit(f"for i in range({N}):")
            prog.emit(f"{t}[i] = {t}[i] * {b}[i]", 2)
    elif kind == "alias":
        a = _pick(draw, prog)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"v{t} = {t}[:2]")
        prog.emit(f"v{t} *= 3.0")
    elif kind == "view":          # a write through a view reaches its base
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        form = draw(st.integers(0, 2))
        if form == 0:
            prog.emit(f"v{t} = {t}[1:3]")
            prog.emit(f"v{t} += {b}[0:2]")
        elif form == 1:
            prog.emit(f"v{t} = {t}.reshape(2, 2)")
            prog.emit(f"v{t}[0] = np.sin({b}[2:])")
        else:
            prog.emit(f"v{t} = {t}[::2]")
            prog.emit(f"v{t}[:] = np.cos({b}[1::2])")
    elif kind == "alias_write":   # a write through a second name for the same array
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        j = draw(st.integers(0, N - 1))
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"u{t} = {t}")
        prog.emit(f"u{t}[{j}] = {b}[{j}] * 2.0")
        if draw(st.booleans()):
            prog.emit(f"u{t} *= 0.5")
    elif kind == "base_write":    # a view made before its base is written sees the write
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"w{t} = {a} * 1.0")
        prog.emit(f"v{t} = w{t}[1:]")
        prog.emit(f"w{t}[2] = np.sin({b}[0])")
        prog.emit(f"{t} = np.concatenate([v{t}, w{t}[:1]]) * 1.0")
    elif kind == "recurrence":    # each element written from the one before it
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"for i in range(1, {N}):")
        prog.emit(f"{t}[i] = np.tanh({t}[i - 1] * 0.5 + {b}[i])", 2)
    elif kind == "arg_write":     # the function writes into its own argument
        j = draw(st.integers(0, N - 1))
        prog.writes = True
        prog.emit(f"x[{j}] = np.cos(x[{(j + 1) % N}]) * 1.5")
        prog.emit(f"{t} = x * 1.0")
    elif kind == "scalar_acc":    # an element is a copied scalar: += rebinds it only
        a, b = _pick(draw, prog), _pick(draw, prog)
        j = draw(st.integers(0, N - 1))
        prog.emit(f"s{t} = {a}[{j}]")
        prog.emit(f"r{t} = s{t}")
        prog.emit(f"s{t} += np.sum({b} * {b})")
        prog.emit(f"{t} = {a} * s{t} + r{t}")
    elif kind == "view_loop":     # a view of a local, its base written after, updated in a loop
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        n = draw(st.integers(1, 3))
        prog.emit(f"w{t} = {a} * 1.0")
        prog.emit(f"v{t} = w{t}[1:3]")
        prog.emit(f"w{t}[0:2] = np.sin({b}[2:4])")
        prog.emit(f"for i in range({n}):")
        prog.emit(f"v{t} += {b}[0:2] * 0.5", 2)
        if draw(st.booleans()):
            prog.emit(f"w{t}[3] = w{t}[3] * 0.5 + v{t}[0]", 2)
        prog.emit(f"{t} = w{t} * 1.0")
    elif kind == "arg_slice_write":   # slice-writes into the function's argument
        b = _pick(draw, prog)
        prog.writes = True
        form = draw(st.integers(0, 3))
        if form == 0:
            prog.emit(f"x[1:] += np.sin({b}[:-1]) * 0.5")
        elif form == 1:
            prog.emit(f"x[...] = x * 0.5 + np.cos({b})")
        elif form == 2:
            n = draw(st.integers(1, 3))
            prog.emit(f"for i in range({n}):")
            prog.emit(f"x[1:] += 0.25 * x[:-1] * {b}[1:]", 2)
        else:
            n = draw(st.integers(1, 3))
            prog.emit(f"for i in range({n}):")
            prog.emit(f"x[:] = np.tanh(x + {b})", 2)
        prog.emit(f"{t} = x * 1.0")
    elif kind == "newaxis":       # broadcasting through [:, None] / np.newaxis, reduced back
        a, b = _pick(draw, prog), _pick(draw, prog)
        form = draw(st.integers(0, 2))
        if form == 0:
            prog.emit(f"{t} = np.sum(np.sin({a}[:, None] * {b}[None, :]), axis=0)")
        elif form == 1:
            prog.emit(f"{t} = np.mean(({a}[:, np.newaxis] - {b}[np.newaxis, :]) ** 2, axis=1)")
        else:
            prog.emit(f"{t} = ({a}[:, None] * np.cos({b})[None, :]).sum(axis=1) * 0.25 + {a}")
    elif kind == "int_index":     # subscripts by constant integer arrays
        a, b = _pick(draw, prog), _pick(draw, prog)
        idx = draw(st.lists(st.integers(0, N - 1), min_size=N, max_size=N))
        form = draw(st.integers(0, 2))
        if form == 0:
            prog.emit(f"{t} = {a}[np.array({idx})] * {b}")
        elif form == 1:
            prog.emit(f"i{t} = np.array({idx})")
            prog.emit(f"{t} = {a}[i{t}] + np.sin({b}[i{t}[::-1]])")
        else:                     # a write through an index array without repeats
            perm = draw(st.permutations(list(range(N))))
            prog.writes = True
            prog.emit(f"{t} = {a} * 1.0")
            prog.emit(f"{t}[np.array({list(perm[:2])})] = {b}[0:2] * 2.0")
    elif kind == "int_write":     # writes through an integer array that repeats an element
        a, b = _pick(draw, prog), _pick(draw, prog)
        idx = draw(st.lists(st.integers(-N, N - 1), min_size=2, max_size=N))
        k = len(idx)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"i{t} = np.array({idx})")
        if draw(st.booleans()):   # NumPy keeps the value written last at a repeated index
            prog.emit(f"{t}[i{t}] = np.sin({b}[:{k}]) * 2.0")
        else:                     # and adds once: t[i] += v reads t[i] before any write
            prog.emit(f"{t}[i{t}] += {b}[:{k}] * {a}[{N - k}:]")
    elif kind == "complex":       # complex values inside, a real value out
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"z{t} = ({a} + 2.0) * np.exp(1j * {b})")
        form = draw(st.integers(0, 1))
        if form == 0:
            prog.emit(f"{t} = z{t}.real * z{t}.imag + np.abs(z{t} * (0.5 - 1j))")
        else:
            prog.emit(f"{t} = np.real(z{t} * z{t} + 1.0) - np.imag(z{t}) * 0.5")
    elif kind == "fill_diag":     # np.fill_diagonal as a statement on a local matrix
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"M{t} = {a}[:, None] * np.sin({b})[None, :]")
        prog.emit(f"np.fill_diagonal(M{t}, {draw(st.sampled_from(['0.0', f'{a}[0]']))})")
        prog.emit(f"{t} = np.sum(M{t}, axis={draw(st.integers(0, 1))})")
    elif kind == "int_acc":       # an accumulator that starts as the int 0 and becomes a float
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"acc{t} = 0")
        if draw(st.booleans()):
            prog.emit(f"for i in range({N}):")
            prog.emit(f"acc{t} = acc{t} + {a}[i] * {b}[i]", 2)
        else:
            prog.emit(f"if np.sum({a}) > 0.0:")
            prog.emit(f"acc{t} = np.sum({b} * 0.5)", 2)
        prog.emit(f"{t} = {a} * acc{t} + {b}")
    elif kind == "bitmask":       # np.where on masks combined with &, |, ^, ~
        a, b = _pick(draw, prog), _pick(draw, prog)
        cond = draw(st.sampled_from([f"({a} > 0) & ({b} < 1)", f"({a} < -0.5) | ({b} > 0.5)",
                                     f"({a} > 0) ^ ({b} > 0)", f"~({a} > {b})",
                                     f"np.bitwise_and({a} > 0, ~({b} < -1))"]))
        prog.emit(f"m{t} = {cond}")
        prog.emit(f"{t} = np.where(m{t}, {a} * {b}, np.sin({b}))")
    elif kind == "elem_swap":     # an element read, then its array written (swap by a temp)
        a, b = _pick(draw, prog), _pick(draw, prog)
        j, k = draw(st.integers(0, N - 1)), draw(st.integers(0, N - 1))
        prog.writes = True
        prog.emit(f"w{t} = {a} * 1.0")
        if draw(st.booleans()):
            prog.emit(f"tmp{t} = w{t}[{j}]")
            prog.emit(f"w{t}[{j}] = w{t}[{k}] + {b}[{j}]")
            prog.emit(f"w{t}[{k}] = tmp{t}")
        else:
            prog.emit(f"for i in range({N - 1}):")
            prog.emit(f"if w{t}[i] > w{t}[i + 1]:", 2)
            prog.emit(f"tmp{t} = w{t}[i]", 3)
            prog.emit(f"w{t}[i] = w{t}[i + 1]", 3)
            prog.emit(f"w{t}[i + 1] = tmp{t} * np.cos({b}[i])", 3)
        prog.emit(f"{t} = w{t} * 1.0")
    elif kind == "tuple_row":     # rows of a 2-D array written from a tuple of numbers
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"M{t} = np.zeros(({N}, 2))")
        prog.emit(f"for i in range({N}):")
        prog.emit(f"M{t}[i] = ({a}[i] * 2.0, np.sin({b}[i]))", 2)
        prog.emit(f"{t} = M{t}[:, 0] - M{t}[:, 1] * {a}")
    elif kind == "or_draw":       # `a or b` / `a and b` whose right side draws or indexes
        a, b = _pick(draw, prog), _pick(draw, prog)
        op = draw(st.sampled_from(["or", "and"]))
        prog.emit(f"acc{t} = 0.0")
        if draw(st.booleans()):   # a draw only where Python evaluates the right side
            prog.emit(f"rng{t} = np.random.default_rng({draw(st.integers(0, 9))})")
            prog.emit(f"for i in range({N}):")
            prog.emit(f"if {a}[i] > 0.0 {op} rng{t}.random() < 0.5:", 2)
            prog.emit(f"acc{t} = acc{t} + {b}[i]", 3)
            prog.emit(f"{t} = {a} * acc{t} + rng{t}.random()")
        else:                     # an index past the end where Python never evaluates it
            cond = (f"i == {N - 1} or {a}[i + 1] > {a}[i]" if op == "or" else
                    f"i < {N - 1} and {a}[i + 1] > {a}[i]")
            prog.emit(f"for i in range({N}):")
            prog.emit(f"if {cond}:", 2)
            prog.emit(f"acc{t} = acc{t} + np.sin({b}[i])", 3)
            prog.emit(f"{t} = {a} * acc{t}")
    elif kind == "enum_start":    # enumerate(..., start=k), reversed(...) in for loops
        a, b = _pick(draw, prog), _pick(draw, prog)
        k0 = draw(st.integers(-2, 3))
        form = draw(st.integers(0, 2))
        prog.emit(f"acc{t} = 0.0")
        if form == 0:
            prog.emit(f"for k, v in enumerate({a}, start={k0}):")
            prog.emit(f"acc{t} = acc{t} * 0.5 + k * v", 2)
        elif form == 1:
            prog.emit(f"for k, (u, v) in enumerate(zip(reversed({a}), {b}), {k0}):")
            prog.emit(f"acc{t} = acc{t} + k * u * np.sin(v)", 2)
        else:
            prog.emit(f"for i in reversed(range({N})):")
            prog.emit(f"acc{t} = acc{t} * 0.5 + {a}[i] * (i + {k0})", 2)
        prog.emit(f"{t} = {b} * acc{t}")
    elif kind == "iter_write":    # the array a loop runs over (or a view of it) written inside
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"w{t} = {a} * 1.0")
        prog.emit(f"acc{t} = 0.0")
        if draw(st.booleans()):   # Python's iterator reads the array as it is then
            prog.emit(f"for v in w{t}:")
            prog.emit(f"w{t}[-1] = w{t}[-1] * 0.5 + v", 2)
            prog.emit(f"acc{t} = acc{t} + v", 2)
        else:                     # a view made before the loop sees the writes into its base
            prog.emit(f"v{t} = w{t}[1:]")
            prog.emit(f"for i in range({N - 1}):")
            prog.emit(f"w{t}[i + 1] = w{t}[i] * 0.5 + {b}[i]", 2)
            prog.emit(f"acc{t} = acc{t} + v{t}[i]", 2)
        prog.emit(f"{t} = w{t} * acc{t}")
    elif kind == "break_var":     # the loop variable (or a name the body binds) after a break
        a, b = _pick(draw, prog), _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.5", "-0.5"]))
        form = draw(st.integers(0, 2))
        if form == 2:             # first bound in the body: was "not defined" after the loop
            prog.emit(f"for i in range({N}):")
            prog.emit(f"q{t} = {b} * (i + 1.0)", 2)
            prog.emit(f"if {a}[i] > {c}:", 2)
            prog.emit("break", 3)
            prog.emit(f"{t} = q{t} * {a}")
        elif form == 0:
            prog.emit(f"for i in range({N}):")
            prog.emit(f"if {a}[i] > {c}:", 2)
            prog.emit("break", 3)
            prog.emit(f"{t} = {b} * (i + 1.0)")
        else:
            prog.emit(f"for k, v in enumerate({a}):")
            prog.emit(f"if v > {c}:", 2)
            prog.emit("break", 3)
            prog.emit(f"{t} = {b} * v + k")
    elif kind == "loop_return":   # a return from inside nested loops
        a, b = _pick(draw, prog), _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.5", "1.0"]))
        prog.emit(f"for i in range({N}):")
        prog.emit(f"for j in range(i + 1, {N}):", 2)
        prog.emit(f"if {a}[i] * {b}[j] > {c}:", 3)
        prog.emit(f"return np.sum(np.sin({a}) * {b}[j]) + i", 4)
        prog.emit(f"{t} = {_expr(draw, prog)}")
    elif kind == "neg_pow":       # a negative literal raised to a loop counter's power
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit(f"for i in range({N}):")
        prog.emit(f"{t}[i] = {t}[i] * (-1) ** i + (-0.5) ** (i + 1) * {b}[i]", 2)
    elif kind == "append_zip":    # a list appended in a zip loop, then read back
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"l{t} = []")
        prog.emit(f"for u, v in zip({a}, {b}):")
        prog.emit(f"l{t}.append(u * np.cos(v))", 2)
        prog.emit(f"{t} = np.array(l{t}) + {a}")
    elif kind == "comp_loop":     # a comprehension in a loop body that rebinds a carried value
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"{t} = {a} * 1.0")
        prog.emit("for k in range(2):")
        form = draw(st.integers(0, 2))
        if form == 0:
            prog.emit(f"{t} = sum(np.roll({t}, i) * j for i in (-1, 1) for j in (0.5, 0.25))", 2)
        elif form == 1:
            prog.emit(f"{t} = sum([np.sin({t}) * i for i in range(3) if i != 1]) + {b}", 2)
        else:
            prog.emit(f"{t} = np.stack([{t} * c for c in (0.5, -1.0)]).sum(axis=0) "
                      f"+ {b} * k", 2)
    elif kind == "tuple_index":   # a tuple of an integer and a slice, used as a whole index
        a, b = _pick(draw, prog), _pick(draw, prog)
        i = draw(st.integers(0, N - 1))
        prog.emit(f"M{t} = {a}[:, None] * {b}[None, :]")
        prog.emit(f"ix{t} = ({i}, slice(1, None))")
        prog.emit(f"{t} = {a} + np.sum(M{t}[ix{t}]) + M{t}[({i}, {N - 1 - i})]")
    elif kind == "alias_if":      # a name that holds another's value, then an if (no else)
        a, b = _pick(draw, prog), _pick(draw, prog)   # rebinds the other on one path
        c = draw(st.sampled_from(["0.0", "0.5", "-0.5"]))
        held = draw(st.sampled_from(["h{t}", "[h{t}]", "(h{t}, {b})"])).format(t=t, b=b)
        prog.emit(f"m{t} = {a} * 1.5")
        prog.emit(f"h{t} = m{t}")
        prog.emit(f"keep{t} = {held}")
        prog.emit(f"if {b}[0] > {c}:")
        prog.emit(f"m{t} = m{t} + {b}", 2)
        first = f"keep{t}" if held.startswith("h") else f"keep{t}[0]"
        prog.emit(f"{t} = {first} * 2.0 + m{t}")
    elif kind == "loop_rebound":  # a value the loop rebinds before reading it, through a
        a, b = _pick(draw, prog), _pick(draw, prog)   # rule that moves axes (its reverse-mode
        c = draw(st.sampled_from(["0.0", "0.5", "-0.5"]))   # adjoint was the scalar 0.0)
        form = draw(st.integers(0, 3))
        prog.emit(f"y{t} = {a} * 0.0")
        prog.emit(f"for i in range({draw(st.integers(1, 3))}):")
        if form == 0:
            prog.emit(f"y{t} = np.reshape({a} * {b}[i], (2, 2)).T.ravel()", 2)
        elif form == 1:
            prog.emit(f"y{t} = np.stack([{a}, {b} * {a}[i]])[1]", 2)
        elif form == 2:
            prog.emit(f"y{t} = (np.outer({a}, {b}) @ {a}) * {b}[i]", 2)
        else:                     # read only where a branch is taken
            prog.emit(f"z{t} = np.outer({a}, {b}) @ {b}", 2)
            prog.emit(f"if {a}[i] > {c}:", 2)
            prog.emit(f"y{t} = y{t} + np.sin(z{t})", 3)
        prog.emit(f"{t} = y{t} + {b}")
    elif kind == "array_method":  # array methods that write their array: sort, fill
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        if draw(st.booleans()):
            prog.emit(f"s{t} = {a} * 1.5")
            prog.emit(f"s{t}.sort()")
            prog.emit(f"{t} = s{t} * {b}")
        else:
            prog.emit(f"s{t} = np.empty_like({a})")
            prog.emit(f"s{t}.fill(0.5)")
            prog.emit(f"{t} = s{t} * {a} + {b}")
    elif kind == "take_dtype":    # np.take along an axis, reductions with dtype=
        a, b = _pick(draw, prog), _pick(draw, prog)
        idx = draw(st.lists(st.integers(-N, N - 1), min_size=2, max_size=3))
        if draw(st.booleans()):
            prog.emit(f"M{t} = {a}[:, None] * {b}[None, :]")
            prog.emit(f"{t} = np.take(M{t}, np.array({idx}), axis=1).sum(axis=1)")
        else:
            prog.emit(f"{t} = {a} * np.sum({b}, dtype=np.float64) + "
                      f"np.cumsum({b}, dtype=np.float64)")
    elif kind == "nested_write":  # writes through a nested subscript or a view expression
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.writes = True
        form = draw(st.integers(0, 2))
        prog.emit(f"M{t} = {a}[:, None] * {b}[None, :]")
        if form == 0:
            prog.emit(f"for i in range({N}):")
            prog.emit(f"M{t}[i][{draw(st.integers(0, N - 1))}] += {a}[i]", 2)
        elif form == 1:
            prog.emit(f"M{t}.T[{draw(st.integers(0, N - 1))}] = {b} * 0.5")
        else:
            prog.emit(f"M{t}.reshape(-1)[{draw(st.integers(0, N * N - 1))}] = {a}[0]")
        prog.emit(f"{t} = M{t}.sum(axis=0) + {b}")
    elif kind == "py_minmax":     # builtin min/max of several numbers (Python's order)
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"{t} = {a} * max({b}[0], {a}[1], 0.25) + min({a}[{N - 1}], {b}[1])")
    elif kind == "dict_comp":     # dicts copied, merged and comprehended over their keys
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"d{t} = {{'u': {a}, 'v': {b}}}")
        form = draw(st.integers(0, 1))
        if form == 0:
            prog.emit(f"e{t} = {{k: d{t}[k] * 2.0 for k in d{t}}}")
        else:
            prog.emit(f"e{t} = dict(d{t}, v={b} * 2.0)")
        prog.emit(f"{t} = e{t}['u'] + sum(np.sin(e{t}[k]) for k in e{t})")
    elif kind == "zip_range":     # zip of a list of arrays with a range (unrolled)
        a, b = _pick(draw, prog), _pick(draw, prog)
        prog.emit(f"s{t} = {a} * 0.0")
        prog.emit(f"for v, i in zip([{a}, {b}], range({draw(st.integers(1, 3))})):")
        prog.emit(f"s{t} = s{t} + v * (i + 1)", 2)
        prog.emit(f"{t} = s{t}")
    elif kind == "first_iter":    # a name the loop binds first on its first iteration
        a, b = _pick(draw, prog), _pick(draw, prog)
        c = draw(st.sampled_from(["i == 0", f"i == 0 or {b}[i] > 0.0"]))
        prog.emit(f"for i in range({N}):")
        prog.emit(f"if {c}:", 2)
        prog.emit(f"m{t} = {a} * {b}[i]", 3)
        prog.emit("else:", 2)
        prog.emit(draw(st.sampled_from([f"m{t} = np.maximum(m{t}, {a} * {b}[i])",
                                        f"m{t} = m{t} * 0.5 + {b}[i]"])), 3)
        prog.emit(f"{t} = m{t}")
    elif kind == "pair_while":    # a return using two counters of nested while loops
        a, b = _pick(draw, prog), _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.5"]))
        prog.emit(f"i{t} = 0")
        prog.emit(f"while i{t} < {N}:")
        prog.emit(f"j{t} = i{t} + 1", 2)
        prog.emit(f"while j{t} < {N}:", 2)
        prog.emit(f"if {a}[i{t}] * {b}[j{t}] > {c}:", 3)
        prog.emit(f"return np.sum(np.sin({a})) * (i{t} + 1) + j{t}", 4)
        prog.emit(f"j{t} += 1", 3)
        prog.emit(f"i{t} += 1", 2)
        prog.emit(f"{t} = {_expr(draw, prog)}")
    elif kind == "return_written":  # an early return in a loop that writes the argument
        a, b = _pick(draw, prog), _pick(draw, prog)
        c = draw(st.sampled_from(["0.0", "0.5", "1.0"]))
        prog.writes = True
        prog.emit(f"for i in range({N}):")
        prog.emit(f"if {b}[i] > {c}:", 2)
        prog.emit(f"return np.sum(x * {a})", 3)
        prog.emit(f"x[i] = x[i] * 0.5 + np.sin({b}[i])", 2)
        prog.emit(f"{t} = x * 1.0")
    elif kind == "rev_range":     # a range sliced backwards (the function ran in NumPy)
        a, b = _pick(draw, prog), _pick(draw, prog)
        stop = draw(st.sampled_from([str(N), f"len({b})", f"{N} - 1"]))
        prog.emit(f"s{t} = {a} * 0.0")
        prog.emit(f"for i in {draw(st.sampled_from(['range', 'np.arange']))}({stop})[::-1]:")
        prog.emit(f"s{t} = s{t} * 0.5 + {b}[i] * {a}", 2)
        prog.emit(f"{t} = s{t} + i")
    elif kind == "append_if":     # a list appended under an if on the data (a RunList)
        a, b = _appended_under_if(draw, prog, f"l{t}", "{b}[i] * 2.0")
        form = draw(st.integers(0, 1))
        if form == 0:
            prog.emit(f"{t} = {a} * (np.sum(np.array(l{t})) + len(l{t}))")
        else:
            prog.emit(f"{t} = {b} * (l{t}[-1] if l{t} else 0.5)")
    elif kind == "append_rows":   # a list of arrays appended under an if on the data
        a, b = _appended_under_if(draw, prog, f"r{t}", "{b} * {a}[i]")
        form = draw(st.integers(0, 2))
        if form == 0:
            prog.emit(f"{t} = {a} * len(r{t}) + (np.vstack(r{t}).sum(axis=0) if r{t} else {b})")
        elif form == 1:
            prog.emit(f"{t} = {b} + (np.stack(r{t}[::2] + r{t}[-1:], axis=1).sum(axis=1) "
                      f"if r{t} else {a})")
        else:
            prog.emit(f"{t} = {a} * (np.sum(np.concatenate(r{t})) if r{t} else 0.5) + "
                      f"(r{t}[0] if r{t} else {b})")
    elif kind == "shape_loop":    # a loop variable whose length changes in the loop
        a, b = _pick(draw, prog), _pick(draw, prog)
        k = draw(st.integers(1, N - 1))
        prog.emit(f"w{t} = {a}[:1]")
        prog.emit(f"for i in range({N}):")
        prog.emit(f"if w{t}.shape[0] < {k + 1}:", 2)
        prog.emit(f"w{t} = {a}[:w{t}.shape[0] + 1]", 3)
        prog.emit(f"{t} = {b} * np.sum(w{t}) + len(w{t})")
    elif kind == "call":
        prog.helper = True
        prog.emit(f"{t} = helper({_pick(draw, prog)}, {_pick(draw, prog)})")
    prog.vars.append(t)


ALL_KINDS = ["assign", "if", "for", "while", "break", "early_return", "write", "alias", "call"]
# in-place writes through views, aliases, arguments and loops (tests/test_mutation_random.py)
MUTATION_KINDS = ["assign", "if", "for", "write", "alias", "view", "alias_write", "base_write",
                  "recurrence", "arg_write", "scalar_acc"]

# the constructs of foreign code (issue 22): views of locals written through their base in
# loops, slice-writes into the argument, newaxis broadcasting, integer-array subscripts,
# int-to-float accumulators, bitwise masks; opt-in, so the lists above keep their meaning
FOREIGN_NEW_KINDS = ["view_loop", "arg_slice_write", "newaxis", "int_index", "int_acc",
                     "bitmask", "elem_swap", "tuple_row", "int_write"]
# the Python-language constructs bugs came from (session python): short-circuit operands that
# draw or index, enumerate's start and reversed(), loops over arrays written inside them,
# the loop variable after a break, returns from nested loops, negative literal powers, lists
# appended in zip loops, comprehensions in loop bodies (a loop once lost the value rebound
# after one), a tuple used as a whole index (once read as an integer-array index), a name
# holding another's value before an if that rebinds the other on one path (it once took the
# new value)
PYTHON_KINDS = ["or_draw", "enum_start", "iter_write", "break_var", "loop_return", "neg_pow",
                "append_zip", "comp_loop", "tuple_index", "alias_if"]
# (session 40) a value a loop rebinds before reading it, through rules that move axes (grad
# crashed on the reset adjoint); array methods that write (refused); np.take along an axis
# and reductions with dtype= (jit fell back)
PYTHON_KINDS += ["loop_rebound", "array_method", "take_dtype"]
# (session 41) writes through nested subscripts and view expressions (refused), builtin
# min/max (np.minimum's NaN order), dict copies and comprehensions over keys (refused), zip of
# a list with a range (a stacked list gave wrong-shaped gradients)
PYTHON_KINDS += ["nested_write", "py_minmax", "dict_comp", "zip_range"]
# (session 42) a name bound first inside a loop and read there before its binding on later
# iterations (`if i == 0: m = ... else: m = f(m)`: refused as "not defined")
PYTHON_KINDS += ["first_iter"]
# (session 43) a return from nested while loops reading both counters (a join of the counter
# `j = 1` and a flag `True` once shared one variable: refused or floats), an early return in a
# loop that writes into the argument (refused as a stale read)
PYTHON_KINDS += ["pair_while", "return_written"]
# (session 44) `for i in range(n)[::-1]` (the whole function ran in NumPy), its counter read
# after the loop
PYTHON_KINDS += ["rev_range"]
FOREIGN_NEW_KINDS += PYTHON_KINDS
# values whose length depends on the data: lists (of numbers or arrays) appended under an if
# (not under vmap: each example's list has its own length) and a loop variable whose length
# changes in the loop (Numba has no lowering for some of these: jit runs them in NumPy with a
# warning)
PYTHON_DATA_KINDS = ["append_if", "shape_loop", "append_rows"]
PYTHON_ALL_KINDS = ["assign", "if", "for", "write"] + PYTHON_KINDS + PYTHON_DATA_KINDS
FOREIGN_KINDS = ["assign", "if", "for", "write", "view"] + FOREIGN_NEW_KINDS
# complex values between real input and output (jit(grad) of them once returned a complex
# gradient): jit still runs some of their adjoints in NumPy (a cotangent that becomes complex)
COMPLEX_KINDS = ["assign", "if", "for", "write", "complex"]
# np.fill_diagonal as a statement among branches, loops and writes
FILL_KINDS = ["assign", "if", "for", "write", "view", "newaxis", "fill_diag"]


def _appended_under_if(draw, prog, name, item):
    """`name = []; for i in range(N): if a[i] > c: name.append(item)` with two values drawn
    (`item` a format string over {a} and {b}); returns (a, b)."""
    a, b = _pick(draw, prog), _pick(draw, prog)
    c = draw(st.sampled_from(["0.0", "0.5", "-0.5"]))
    prog.emit(f"{name} = []")
    prog.emit(f"for i in range({N}):")
    prog.emit(f"if {a}[i] > {c}:", 2)
    prog.emit(f"{name}.append({item.format(a=a, b=b)})", 3)
    return a, b


@st.composite
def programs(draw, kinds=tuple(ALL_KINDS), max_stmts=5):
    prog = Program()
    for _ in range(draw(st.integers(1, max_stmts))):
        _stmt(draw, prog, list(kinds))
    last = prog.vars[-1]
    ret = draw(st.sampled_from([f"np.sum({last})", f"np.sum({last} * {last})",
                                f"np.sum(np.sin({last}))"]))
    prog.emit(f"return {ret}")
    head = ["import numpy as np", ""]
    if prog.helper:
        head += ["def helper(a, b):", "    return np.tanh(a) * b + a", ""]
    src = "\n".join(head + ["def f(x):"] + prog.lines) + "\n"
    return src, prog.writes


def load(src):
    """Import the program from a real file (transforms read source through inspect)."""
    if not _DIR:
        _DIR.append(tempfile.mkdtemp(prefix="tp-random-"))
    d = _DIR[0]
    name = f"tp_random_{next(_counter)}"
    path = os.path.join(d, name + ".py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jax_version(src):
    """The same program over jax.numpy (only for programs without in-place writes)."""
    return src.replace("import numpy as np", "import jax.numpy as np")


def numgrad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g
