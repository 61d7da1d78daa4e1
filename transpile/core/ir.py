"""Core Python: the flat form every transform reads and writes.

A function body is a list of statements. The simple statement is an `Eqn`: one primitive
applied to atoms (names or constants), bound to one name:

    y = np.exp(x)          Eqn(out='y', prim=exp, args={'x': Var('x')})

Control flow statements (`If`, `ForRange`, `While`) hold nested bodies. Everything prints as
valid Python (see `transpile.core.codegen`).
"""
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Var:
    name: str

    def __repr__(self):
        return self.name


@dataclass(frozen=True)
class Const:
    """A literal known when the code is generated: number, bool, None, str, tuple, dtype."""
    value: Any

    def __repr__(self):
        return format_const(self.value)

    def __eq__(self, other):
        # typed: Const(1) is not Const(True) nor Const(1.0) nor Const(np.float64(1)) (a
        # join of `j = 1` and `flag = True` once shared one variable)
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (type(self.value), self.value) == (type(other.value), other.value)
        # (the dataclass still makes __hash__ from the value: equal values, equal hashes)


@dataclass(frozen=True, repr=False)     # (prints as its value: Const.__repr__)
class SizeConst(Const):
    """A count of elements folded while specializing (x.size, a mean's divisor): `value` is
    the product of the sizes `dims`, which compiled code reads at run time where it can
    (lowering/cpu/text.py), so the code does not depend on the batch size."""
    dims: tuple = ()


@dataclass(frozen=True, repr=False)
class ShapeConst(Const):
    """An array's shape folded while specializing (x.shape): an item taken from it is an
    ir.SizeConst, which compiled code reads at run time."""


@dataclass(frozen=True)
class SliceArg:
    lower: Any = None   # Atom or None
    upper: Any = None
    step: Any = None


@dataclass(frozen=True)
class IndexArg:
    """The index of a subscript: a tuple of Atom | SliceArg | None (newaxis) | Ellipsis."""
    items: tuple


@dataclass(frozen=True)
class TupleArg:
    """A literal sequence of atoms passed as one argument (np.stack([a, b]), shapes (n, -1))."""
    items: tuple
    kind: str = "tuple"   # or 'list'


Atom = (Var, Const)


def format_const(v):
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return f"float({str(v)!r})"
        return repr(v)
    if isinstance(v, type) and issubclass(v, np.generic):
        return f"np.{v.__name__}"
    if isinstance(v, np.dtype):
        return f"np.dtype({v.name!r})"
    if isinstance(v, tuple):
        inner = ", ".join(format_const(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if v is Ellipsis:
        return "..."
    if isinstance(v, np.generic) and type(v) is not np.bool_:
        # np.float32(0.5), np.int64(1): NumPy's scalar types are not weak as Python's
        # numbers are (int32 array + np.int64(1) is int64; + 1 stays int32)
        return f"np.{type(v).__name__}({format_const(v.item())})"
    if isinstance(v, np.generic):
        return repr(v.item())
    return repr(v)


def is_literal(v):
    """Can `v` be written into generated source as a literal?"""
    if v is None or v is Ellipsis or isinstance(v, (bool, int, float, complex, str)):
        return True
    if isinstance(v, np.generic) and not isinstance(v, np.void):
        return True
    if isinstance(v, type) and issubclass(v, np.generic):
        return True
    if isinstance(v, np.dtype):
        return True
    if isinstance(v, tuple):
        return all(is_literal(x) for x in v)
    return False


@dataclass
class Eqn:
    out: str
    prim: Any                  # transpile.primitives.registry.Primitive
    args: dict                 # parameter name -> Var | Const | TupleArg | IndexArg
    loc: Any = None            # (filename, lineno) of the user's source, or None

    def vars_read(self):
        return [a.name for a in iter_atoms(self.args.values()) if isinstance(a, Var)]


@dataclass
class If:
    cond: Any
    body: list
    orelse: list
    loc: Any = None


@dataclass
class ForRange:
    """for var in range(start, stop, step): body"""
    var: str
    start: Any
    stop: Any
    step: Any
    body: list
    loc: Any = None


@dataclass
class While:
    """while True: <cond_body>; if not cond: break; body"""
    cond_body: list
    cond: Any
    body: list
    loc: Any = None


@dataclass
class Break:
    loc: Any = None


@dataclass
class Continue:
    loc: Any = None


@dataclass
class Comment:
    text: str


@dataclass
class CoreFn:
    """A function in core Python form.

    params: flat parameter names (pytree leaves of the user's arguments, then free variables).
    outs: flat output atoms; out_tree: their pytree structure.
    """
    name: str
    params: list
    body: list
    outs: list
    out_tree: Any
    free: list = field(default_factory=list)     # [(param name, description)]
    statics: dict = field(default_factory=dict)  # name -> object bound in the generated module
    filename: str = "<unknown>"
    source_lines: dict = field(default_factory=dict)  # (filename, lineno) -> text
    notes: list = field(default_factory=list)    # header comment lines


def iter_atoms(values):
    for v in values:
        if isinstance(v, (Var, Const)):
            yield v
        elif isinstance(v, TupleArg):
            yield from iter_atoms(v.items)
        elif isinstance(v, IndexArg):
            for it in v.items:
                if isinstance(it, SliceArg):
                    yield from iter_atoms([x for x in (it.lower, it.upper, it.step) if x is not None])
                elif isinstance(it, (Var, Const)):
                    yield it
                elif isinstance(it, TupleArg):        # x[idx] with idx a tuple
                    yield from iter_atoms(it.items)


def map_atoms(value, fn):
    """Rebuild an argument value with every atom replaced by fn(atom)."""
    if isinstance(value, (Var, Const)):
        return fn(value)
    if isinstance(value, TupleArg):
        return TupleArg(tuple(map_atoms(v, fn) for v in value.items), value.kind)
    if isinstance(value, IndexArg):
        items = []
        for it in value.items:
            if isinstance(it, SliceArg):
                items.append(SliceArg(*[None if x is None else map_atoms(x, fn)
                                        for x in (it.lower, it.upper, it.step)]))
            elif isinstance(it, (Var, Const)):
                items.append(fn(it))
            elif isinstance(it, TupleArg):       # x[idx] with idx a tuple
                items.append(map_atoms(it, fn))
            else:
                items.append(it)
        return IndexArg(tuple(items))
    return value


def walk_eqns(body):
    """Yield every Eqn in a body, descending into control flow."""
    for st in body:
        if isinstance(st, Eqn):
            yield st
        elif isinstance(st, If):
            yield from walk_eqns(st.body)
            yield from walk_eqns(st.orelse)
        elif isinstance(st, ForRange):
            yield from walk_eqns(st.body)
        elif isinstance(st, While):
            yield from walk_eqns(st.cond_body)
            yield from walk_eqns(st.body)


@dataclass
class Push:
    """tape.push(value): save a value on a tape (runtime/tape.py) for the backward sweep.

    Added for control flow in reverse mode. The matching read is an Eqn of the primitive
    `tape_pop` (`x = tape.pop()`). `tape` and `value` are atoms (Var/Const). A Push binds no
    name; transforms pair it with the pops of the same tape (adjoint tapes in reverse mode,
    tangent tapes in forward mode)."""
    tape: Any
    value: Any
    loc: Any = None


def bound_names(body):
    """Every name a body binds (Eqn outputs and loop variables), in order, nested included."""
    out = []
    for st in body:
        if isinstance(st, Eqn):
            out.append(st.out)
        elif isinstance(st, If):
            out += bound_names(st.body) + bound_names(st.orelse)
        elif isinstance(st, ForRange):
            out.append(st.var)
            out += bound_names(st.body)
        elif isinstance(st, While):
            out += bound_names(st.cond_body) + bound_names(st.body)
    return out


def names_read(st):
    """Names a statement reads (nested bodies included)."""
    if isinstance(st, Eqn):
        return st.vars_read()
    if isinstance(st, Push):
        return [a.name for a in (st.tape, st.value) if isinstance(a, Var)]
    out = []
    if isinstance(st, If):
        out += [st.cond.name] if isinstance(st.cond, Var) else []
        for s in st.body + st.orelse:
            out += names_read(s)
    elif isinstance(st, ForRange):
        out += [a.name for a in (st.start, st.stop, st.step) if isinstance(a, Var)]
        for s in st.body:
            out += names_read(s)
    elif isinstance(st, While):
        out += [st.cond.name] if isinstance(st.cond, Var) else []
        for s in st.cond_body + st.body:
            out += names_read(s)
    return out


def has_control_flow(body):
    return any(not isinstance(st, (Eqn, Comment)) for st in body)


def construct_of(eqn):
    """How the user would name the construct an equation comes from (for messages)."""
    if eqn is None:
        return "a statement"
    if eqn.prim.construct is not None:
        return eqn.prim.construct
    path = eqn.prim.path
    return f"{path}(...)" if not path.startswith("rt.") else f"{eqn.prim.name}(...)"
