"""The normalizer's model of array memory: which names share a buffer, and what a write does.

Core Python is functional: `y[i] = v` becomes `y_1 = rt.setitem(y, i, v)`, a new value. NumPy
is not: the write is seen through every name that shares `y`'s buffer. This module keeps the
two in step while the normalizer reads user code:

  * names that hold the same core variable share a buffer (`c = b`, arguments passed to an
    inlined function, items of tuples/lists/dicts);
  * a *view* is a core variable made from another by an operation that NumPy answers with a
    view: basic indexing (`y[:2]`, `y[i]` with an integer `i`, `y[::2]`), `.T`/`np.transpose`,
    `np.asarray`, and `reshape`/`ravel`/`squeeze`/`expand_dims` of a contiguous array;
  * a write `v[idx] = value` (or `v += value`) makes a new version of `v`, writes it back into
    every buffer `v` is a view of (`y_1 = rt.setitem(y, np.s_[:2], v_1)`), re-derives the
    other views of that base from its new version, and rebinds every name (in every inlined
    frame) that held an old version, so all of them see the write exactly as in NumPy;
  * the user's array arguments are tracked under a hidden name; the generated function copies
    their final version back into the caller's arrays (`rt.write_back`), as NumPy would have
    mutated them;
  * where the aliasing is not known when the code is generated (a value that is a view on one
    path of an `if` and not on the other, an index that may be an integer array, `np.diagonal`
    and other read-only views, arrays from globals), a write through it, or a read of a view
    whose base was written, raises a clear error instead of giving a wrong number.

Control flow: `transpile.frontend.normalize.branches` joins the alias facts of both paths of an `if`
and `transpile.frontend.normalize.loops` those of a loop's entry and back edge (`join_relation`); the
loops find the names a loop body changes through aliases by reading the body once ahead
(`loop_changes`).
"""
import gast
import numpy as np

from transpile.frontend.normalize import aliasing_scalars as S
from transpile.frontend.normalize.aliasing_scalars import _stem, leaves  # noqa: F401 (shared with aliasing_scalars)
from transpile.errors import ShapesNeeded, TranspileError, UnsupportedSyntax
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.primitives import by_name
from transpile.frontend.normalize.values import Struct
from transpile.primitives.numpy.nondiff import attr_shape
from transpile.primitives.numpy.structure import getitem

PARAM_PREFIX = ".param."     # hidden env entries: the current version of an argument's buffer

class Stale:
    """A name whose value may have changed through a write the normalizer cannot follow."""

    def __init__(self, why):
        self.why = why


class Opaque:
    """A view whose relation to its base is not one we can write back through."""

    def __init__(self, what):
        self.what = what

    def __eq__(self, other):
        return isinstance(other, Opaque) and other.what == self.what

    def __hash__(self):
        return hash(self.what)


def _by_name(name):
    return by_name(name)




def replace_leaves(value, fn):
    if isinstance(value, Var):
        return fn(value)
    if isinstance(value, Struct):
        items = [replace_leaves(v, fn) for v in value.items]
        if all(a is b for a, b in zip(items, value.items)):
            return value
        return Struct(value.kind, items, value.keys)
    return value


class MemoryModel:
    def __init__(self, norm):
        self.norm = norm
        self.defs = {}          # core name -> the Eqn that bound it last
        self.rel = {}           # core name -> (parent Var, op) set by writes and joins
        self.maybe = {}         # core name -> set of root names it may alias (unknown view)
        self.int_vars = set()   # core names known to hold Python/NumPy integers (loop indices)
        self.scalar_vars = set()
        self.dtypes = {}        # core name -> (dtype, axes) of a join of values of one type
        self.dtypes_used = set()    # names whose entry in dtypes a decision relied on
        self.outside = set()    # roots that are globals/closure arrays/static arrays
        self.carried_from = {}  # a loop's join variable -> the name it held on entry
        self.events = None      # while reading a loop body ahead: the entries each write rebinds
        self.pins = {}          # core name -> (kind, why, hint): writes refused (pin)
        # a range loop's counter left unbound where it ran zero times -> (start, stop, step)
        self.unbound_unless_run = {}
        self.unbound_checked = set()    # (name, id(body)): reads of it checked there
        # arguments a reshape/ravel view was taken of, as if the caller's array were
        # C-contiguous (NumPy copies otherwise): checked when the function writes into them
        self.reshaped_arguments = set()

    # -- recording -----------------------------------------------------------------------------

    def note(self, eqn):
        self.defs[eqn.out] = eqn
        self.rel.pop(eqn.out, None)
        self.maybe.pop(eqn.out, None)
        self.unbound_unless_run.pop(eqn.out, None)    # (a later loop binding the same name)

    def renamed(self, old, new):
        eqn = self.defs.pop(old, None)
        if eqn is not None:
            self.defs[new] = eqn
        self.rel.pop(new, None)
        self.maybe.pop(new, None)
        self.unbound_unless_run.pop(new, None)
        if old in self.rel:
            self.rel[new] = self.rel.pop(old)
        if old in self.maybe:
            self.maybe[new] = self.maybe.pop(old)
        if old in self.pins:
            self.pins[new] = self.pins.pop(old)
        for numbers in (self.int_vars, self.scalar_vars):     # (`s = max(a, b)`: a number)
            if old in numbers:
                numbers.add(new)

    def mark_fresh(self, atom):
        """np.array(y), y.flatten(), y.copy(): the result owns a new buffer."""
        if isinstance(atom, Var):
            self.rel[atom.name] = None

    def is_int(self, atom, _seen=None):
        if isinstance(atom, Const):
            return isinstance(atom.value, (int,)) and not isinstance(atom.value, bool)
        if not isinstance(atom, Var):
            return False
        if atom.name in self.int_vars:
            return True
        avals = self.norm.b.avals       # (shapes known: `idx[k]` of an int vector is an int)
        av = avals.get(atom.name) if avals is not None else None
        if av is not None and not av.shape and av.dtype.kind in "iu":
            return True
        eqn = self.defs.get(atom.name)
        if eqn is None:
            return False
        if eqn.prim.int_result:
            return True
        if eqn.prim.int_closed:
            # a loop's variable may be defined from itself (j = j - 1): not known to be an int
            seen = set() if _seen is None else _seen
            if atom.name in seen:
                return False
            seen.add(atom.name)
            return all(self.is_int(a, seen) for a in eqn.args.values()
                       if isinstance(a, (Var, Const)))
        if eqn.prim is getitem and isinstance(eqn.args.get("x"), Var):
            src = self.defs.get(eqn.args["x"].name)
            return src is not None and src.prim is attr_shape
        return False

    # -- what a name is a view of --------------------------------------------------------------

    def view(self, name, _seen=None):
        """(parent Var, op) if `name` is a view; op is a tuple describing the view, or an
        Opaque when NumPy returns a view we cannot write back through; None for a root."""
        if name in self.rel:
            return self.rel[name]
        eqn = self.defs.get(name)
        if eqn is None or eqn.prim.view is None:
            return None
        x = eqn.args.get("x")
        if not isinstance(x, Var) or x.name == name:
            return None
        kind = eqn.prim.view
        if kind == "opaque":          # read-only or rare: not written back through
            return x, Opaque(eqn.prim.construct or eqn.prim.path)
        if kind == "same":            # rt.assign, np.asarray without a dtype
            dtype = eqn.args.get("dtype")
            if dtype is None or (isinstance(dtype, Const) and dtype.value is None):
                return x, ("identity",)
            return x, Opaque("np.asarray(..., dtype)")
        if kind == "index":
            index = eqn.args["index"]
            if self._picks_elements(x, index):
                return None
            for it in index.items:
                if isinstance(it, (SliceArg, type(None))) or it is Ellipsis:
                    continue
                if isinstance(it, Const) and isinstance(it.value, int):
                    continue
                if isinstance(it, Var) and self.is_int(it):
                    continue
                if isinstance(it, Const) and isinstance(it.value, bool):
                    return None
                if self._an_array_index(it):
                    return None     # y[[0, 2]], y[idx], y[mask]: NumPy copies
                # an array (or unknown) index: NumPy copies, unless it is an integer scalar
                return x, Opaque("indexing with a value that may be an integer array "
                                 "(a row view or a copy)")
            return x, ("index", index)
        if kind == "transpose":
            axes = eqn.args.get("axes", Const(None))
            if not isinstance(axes, Const):
                return x, Opaque("np.transpose with computed axes")
            return x, ("transpose", axes.value)
        op = ("reshape", eqn.prim, tuple(sorted((k, v) for k, v in eqn.args.items()
                                                if k != "x")))
        if kind == "axes":            # np.squeeze, np.expand_dims: a view of any array
            return x, op
        # reshape-like: a view when the base is contiguous
        if not self.contiguous(x.name):
            return x, Opaque(f"{eqn.prim.name} of an array that may not be contiguous")
        param = self._argument_of(self.root(x.name))
        if param is not None:         # a view only if the caller's array is C-contiguous
            self.reshaped_arguments.add(param)
        return x, op

    def _argument_of(self, root):
        """The user's argument whose buffer `root` is (its current version), or None."""
        for _, name, value in self.entries():
            if name.startswith(PARAM_PREFIX) and isinstance(value, Var) and value.name == root:
                return name[len(PARAM_PREFIX):]
        return None

    def _an_array_index(self, it):
        """An index item that is an integer or boolean array for certain: a list, an array
        constant, or a value of known non-zero rank."""
        if isinstance(it, TupleArg):
            return it.kind == "list"
        if isinstance(it, Const):
            return isinstance(it.value, (list, tuple, np.ndarray)) and np.ndim(it.value) > 0
        avals = self.norm.b.avals
        av = avals.get(it.name) if isinstance(it, Var) and avals is not None else None
        return av is not None and len(av.shape) > 0

    def _picks_elements(self, x, index):
        """x[i, j] with one index that is not a slice per axis of x (its number of axes known
        while normalizing, under jit): NumPy returns a copy (an element, or a gather by integer
        arrays), never a view, whatever the indices are."""
        avals = self.norm.b.avals
        av = avals.get(x.name) if avals is not None else None
        if av is None or not isinstance(index, IndexArg):
            return False
        items = index.items
        if any(isinstance(it, SliceArg) or it is None or it is Ellipsis for it in items):
            return False
        return len(items) == av.ndim and av.ndim > 0

    def contiguous(self, name):
        v = self.view(name)
        if v is None:
            return True
        parent, op = v
        if isinstance(op, Opaque):
            return False
        if op[0] in ("identity", "reshape"):
            return self.contiguous(parent.name)
        if op[0] == "index":
            seen_slice = False
            for it in op[1].items:
                if isinstance(it, SliceArg):
                    if it.step is not None or it.lower is not None or it.upper is not None:
                        if seen_slice:
                            return False
                    seen_slice = True
                elif it is None or it is Ellipsis:
                    return False
                elif seen_slice:
                    return False
            return self.contiguous(parent.name)
        return False

    def chain(self, name):
        """[(child name, parent Var, op)] from `name` up to its root buffer, and the root name."""
        out, seen = [], {name}
        while True:
            v = self.view(name)
            if v is None:
                return out, name
            parent, op = v
            if parent.name in seen:
                return out, name
            seen.add(parent.name)
            out.append((name, parent, op))
            name = parent.name

    def root(self, name):
        return self.chain(name)[1]

    # -- the env of every frame ----------------------------------------------------------------

    def entries(self):
        """(env, name, value) for every name of every frame being read."""
        seen = set()
        for frame in self.norm.frames:
            if id(frame.env) in seen:
                continue
            seen.add(id(frame.env))
            for name, value in list(frame.env.items()):
                yield frame.env, name, value

    def referenced(self, core, exclude=None):
        """Does any name (but `exclude`, an (env, name) pair) hold `core`, or a view of it?"""
        for env, name, value in self.entries():
            if exclude is not None and env is exclude[0] and name == exclude[1]:
                continue
            for leaf in leaves(value):
                if leaf.name == core or core in self.ancestors(leaf.name):
                    return True
        return False

    def ancestors(self, name):
        chain, root = self.chain(name)
        return {p.name for _, p, _ in chain}

    # -- writes --------------------------------------------------------------------------------

    def pin(self, name, kind, why, hint):
        """Refuse later writes into the memory of `name`: kind "shared", any write into its
        buffer (through the name, an alias, a view of it or its base); kind "through", a write
        into it or into a view made from it. `why` completes "writing into 'x', which is ..."."""
        self.pins[name] = (kind, why, hint)

    def _check_pins(self, target, chain, root, node, user):
        through = {target.name} | {c for c, _, _ in chain}
        for name, (kind, why, hint) in self.pins.items():
            if name in through or (kind == "shared" and self.root(name) == root):
                raise self.error(node, f"writing into {user!r}, which is {why}", hint=hint)

    def error(self, node, message, hint=None, cls=TranspileError):
        return self.norm.error(node, message, cls=cls, hint=hint)

    def write(self, target, index, value, node, user):
        """NumPy's `target[index] = value` (index None: `target[...] = value` with the
        destination's dtype, as an augmented assignment). Rebinds every alias."""
        N = self.norm
        if not isinstance(target, Var):
            raise self.error(node, f"cannot write into {user!r}: it is not an array")
        chain, root = self.chain(target.name)
        for child, parent, op in chain:
            if isinstance(op, Opaque):
                # (where the shapes are not known: `s = b[piv[i]]` of a vector b is a number,
                # which the shapes tell; the transform generates the code again with them)
                raise self.error(node, f"writing into {user!r}, which is a view made by "
                                 f"{op.what}: the transforms cannot tell which elements of its "
                                 "base this write changes",
                                 hint="make the copy explicit (np.copy(...)) or write into the "
                                      "base array with an index",
                                 cls=ShapesNeeded if N.b.avals is None else TranspileError)
        if root in self.maybe or any(c in self.maybe for c, _, _ in chain) \
                or target.name in self.maybe:
            # (where the shapes are not known, numbers look like arrays that may share
            # memory: `cur = x[i]` or `cur += x[i]` of a list of floats; with the shapes known
            # the transform generates the code again)
            raise self.error(node, f"writing into {user!r}, which may or may not share memory "
                             "with another array depending on the path taken (an if/loop binds "
                             "it to a view or an alias on one path only)",
                             hint="make the copy explicit (np.copy(...)) on every path, or write "
                                  "into the base array",
                             cls=ShapesNeeded if N.b.avals is None else TranspileError)
        if self.pins:
            self._check_pins(target, chain, root, node, user)
        if root in self.outside:
            raise self.error(node, f"writing into {user!r}, an array that comes from outside "
                             "the function (a global, closure or static value): mutating "
                             "global state is not supported",
                             hint=f"copy it first ({user} = np.copy(...)) or pass it in as an "
                                  "argument")
        b = N.b
        if index is None:
            new = b.emit(_by_name("cast_into"), {"x": value, "like": target}, base=user)
        else:
            new = b.emit(_by_name("setitem"), {"x": target, "index": index, "v": value},
                         base=user)
        _same_aval(N, new, target)
        mapping = {target.name: new}
        # `v op= e` with v perhaps a scalar: only v is rebound then (transpile/aliasing_scalars)
        maybe_scalar = index is None and not S.known_array(self, target.name)
        cur = new
        for child, parent, op in chain:
            if maybe_scalar and child == target.name:
                if op[0] == "index":
                    pnew = S.write_back_element(self, parent, op[1], cur, target,
                                                _stem(parent.name))
                else:
                    pnew = S.select(self, target, self._write_back(op, parent, cur), parent,
                                    _stem(parent.name))
            else:
                pnew = self._write_back(op, parent, cur)
            mapping[parent.name] = pnew
            self.rel[cur.name] = (pnew, op) if pnew != cur else None
            cur = pnew
        root_new = cur
        if chain:
            # the root's new version is a root, although it may be computed from the view
            # (a reshape or transpose back): no view relation through its definition
            self.rel[root_new.name] = None
        # other views of the same root: derive them again from its new version
        memo = dict(mapping)

        def rederive(name):
            if name in memo:
                return memo[name]
            v = self.view(name)
            if v is None or isinstance(v[1], Opaque):
                return None
            pnew = rederive(v[0].name)
            if pnew is None:
                return None
            new = self._derive(v[1], pnew, name)
            self.rel[new.name] = (pnew, v[1]) if new != pnew else None
            if v[1][0] == "index" and _integers_only(v[1][1]) and \
                    not S.known_array(self, name):
                # x[i] is a row view or, of a vector, an element NumPy copied: the read value
                # stays what it was when it is a scalar (decided when the code runs)
                derived = new
                new = S.select(self, Var(name), derived, Var(name), _stem(name))
                self.rel[new.name] = (derived, ("identity",))
            memo[name] = new
            return new

        stale = set()
        for _, _, value in list(self.entries()):
            for leaf in leaves(value):
                if leaf.name in memo:
                    continue
                r = self.root(leaf.name)
                if r == root:
                    if rederive(leaf.name) is None:
                        stale.add(leaf.name)
                elif root in self.maybe.get(leaf.name, ()) or root in self.maybe.get(r, ()):
                    stale.add(leaf.name)
        own = None
        if maybe_scalar:
            own = (self.norm.frame.env, user, memo)
            memo = S.guard_others(self, target, memo, own, {p.name for _, p, _ in chain})
        self.rebind(memo, stale, user, node, own)
        return root_new

    def rebind(self, mapping, stale, user, node, own=None):
        """Rebind every name holding an old version (`own`: (env, name, mapping) for the name
        written, when it is rebound differently from its aliases)."""
        loc = self.norm.frame.loc(node) if node is not None else None
        where = f" at line {loc[1]}" if loc and loc[1] else ""
        touched = []
        for env, name, value in list(self.entries()):
            if any(l.name in stale for l in leaves(value)):
                env[name] = Stale(f"{name!r} may share memory with {user!r}, which was written"
                                  f"{where} in a way the transforms cannot follow")
                continue
            m = own[2] if own is not None and env is own[0] and name == own[1] else mapping
            new = replace_leaves(value, lambda v: m.get(v.name, v))
            if new is not value:
                env[name] = new
                touched.append((id(env), name, tuple(l.name for l in leaves(new))))
        if self.events is not None:
            self.events.append(touched)

    def _write_back(self, op, parent, child_new):
        b = self.norm.b
        base = _stem(parent.name)
        kind = op[0]
        if kind == "identity":
            return child_new
        if kind == "index":
            new = b.emit(_by_name("setitem"), {"x": parent, "index": op[1], "v": child_new},
                         base=base)
            _same_aval(self.norm, new, parent)
            return new
        if kind == "transpose":
            axes = op[1]
            inv = None if axes is None else tuple(sorted(range(len(axes)), key=lambda i: axes[i]))
            return b.emit(_by_name("transpose"), {"x": child_new, "axes": Const(inv)}, base=base)
        shape = b.emit(_by_name("attr_shape"), {"x": parent}, base=base + "_shape")
        return b.emit(_by_name("reshape"), {"x": child_new, "shape": shape}, base=base)

    def _derive(self, op, parent_new, name):
        b = self.norm.b
        base = _stem(name)
        kind = op[0]
        if kind == "identity":
            return parent_new
        if kind == "index":
            return b.emit(_by_name("getitem"), {"x": parent_new, "index": op[1]}, base=base)
        if kind == "transpose":
            return b.emit(_by_name("transpose"), {"x": parent_new, "axes": Const(op[1])},
                          base=base)
        return b.emit(op[1], dict([("x", parent_new)] + list(op[2])), base=base)   # reshape

    # -- augmented assignment on a name --------------------------------------------------------

    def in_place(self, current):
        """Is `name op= v` on this value an in-place write (an array), not a rebinding?"""
        if not isinstance(current, Var):
            return False
        if current.name in self.int_vars or current.name in self.scalar_vars:
            return False
        avals = self.norm.b.avals
        av = avals.get(current.name) if avals is not None else None
        if av is not None and av.weak:
            return False        # a Python number (under jit, a float argument: `lr *= 0.5`)
        eqn = self.defs.get(current.name)
        if eqn is not None and (eqn.prim.scalar_result or self.is_int(current)):
            return False
        if eqn is not None and eqn.prim.reduction and _const_none(eqn.args.get("axis")):
            return False
        return True

    # -- joins ---------------------------------------------------------------------------------

    def loop_entry(self, j, leaf, joined):
        """The loop variable j starts as `leaf`: it keeps leaf's view relation (its parent
        replaced by the parent's own loop variable), checked again at the end of the body."""
        if isinstance(leaf, Var) and leaf.name != j:
            self.carried_from[j] = leaf.name
        if not isinstance(leaf, Var):
            self.rel[j] = None
            if isinstance(leaf, Const) and isinstance(leaf.value, np.generic):
                # s = np.float32(0.0) before `s += x[i]`: a NumPy scalar is rebound (and
                # widened, float32 + float64 is float64), never written in place
                self.scalar_vars.add(j)
            return
        if leaf.name in self.maybe:
            self.maybe[j] = set(self.maybe[leaf.name])
        v = self.view(leaf.name)
        if v is None:
            self.rel[j] = None
            return
        parent, op = v
        for (pre, _), pj in joined.items():
            if pre == parent.name:
                parent = Var(pj)
                break
        self.rel[j] = (parent, op)

    def is_number(self, name):
        """Is this value known to be a number (an int, a scalar, a Python number under jit)?"""
        if name in self.int_vars or name in self.scalar_vars:
            return True
        avals = self.norm.b.avals
        av = avals.get(name) if avals is not None else None
        return av is not None and av.weak      # (a 0-d array argument may alias)

    def _held_outside_the_join(self, name):
        """Is this buffer one the caller sees (an argument, or a loop's variable that took one
        on entry), so that a write into a value joined from it must reach it?"""
        seen = set()
        while name in self.carried_from and name not in seen:
            seen.add(name)
            name = self.carried_from[name]
        return any(a.name == name for a in getattr(self.norm, "arguments", ()))

    def join_relation(self, j, incoming, partners):
        """Alias facts of the join variable `j` that takes the value of `incoming[k]` on path k.
        `partners` maps a tuple of incoming names to the join variable that took it (other
        names joined at the same place)."""
        names = [a.name for a in incoming if isinstance(a, Var)]
        if len(names) != len(incoming) or all(self.is_number(n) for n in names):
            self.rel[j] = None          # (numbers share no memory)
            return
        views = [self.view(n) for n in names]
        if all(v is None for v in views):
            roots = set(names)
            if any(n in self.maybe for n in names):
                self.maybe[j] = set().union(*[self.maybe.get(n, {n}) for n in names])
            elif len(roots) > 1 and any(self._held_outside_the_join(n) for n in names):
                # `if c: a, b = b, a` on arguments: j is one caller's array or the other's
                self.maybe[j] = roots
                self.rel[j] = None
            else:
                self.rel[j] = None
            return
        if all(v is not None and not isinstance(v[1], Opaque) for v in views):
            parents = tuple(v[0].name for v in views)
            ops = [v[1] for v in views]
            pj = partners.get(parents)
            if pj is None and len(set(parents)) == 1:
                pj = parents[0]
            if pj is not None and all(op == ops[0] for op in ops[1:]):
                self.rel[j] = (Var(pj), ops[0])
                return
        roots = set()
        for n in names:
            roots |= self.maybe.get(n, set()) | {self.root(n)}
        self.maybe[j] = roots
        self.rel[j] = None


def _same_aval(norm, new, target):
    """A write's result has the shape and dtype of the array written (known while normalizing
    under jit even where the written value's is not: an element read in a loop)."""
    avals = norm.b.avals
    if avals is not None and isinstance(new, Var) and isinstance(target, Var) and \
            new.name not in avals and target.name in avals:
        avals[new.name] = avals[target.name]


def _const_none(a):
    return a is None or (isinstance(a, Const) and a.value is None)




def param_entry(name):
    return PARAM_PREFIX + name


def stale_error(norm, node, value):
    return norm.error(node, f"reading a stale value: {value.why}", cls=TranspileError,
                      hint="make the copy explicit (np.copy(...)) before the write, or read the "
                           "array again after it")


def writes_in(stmts):
    """Could these statements write into an array (subscript stores, augmented assignments,
    or calls that may write into their arguments)?"""
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.AugAssign):
                return True
            if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
                return True
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
                return True
            if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
                return True     # a call for its effect: y.sort(), np.add.at(y, i, v), ...
            if isinstance(n, gast.keyword) and n.arg == "out":
                return True     # np.exp(y, out=y)
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    n.func.attr in ("append", "extend", "insert", "pop", "remove") and \
                    isinstance(n.func.value, gast.Name):
                return True     # a list changed in place (runlists.py)
    return False


__all__ = ["MemoryModel", "Stale", "Opaque", "PARAM_PREFIX", "param_entry", "stale_error",
           "writes_in", "leaves", "replace_leaves", "UnsupportedSyntax", "Eqn", "TupleArg",
           "IndexArg"]


def write_back_arguments(norm, frame, params):
    """At the end of the user's function: every argument it wrote into receives its final
    value (`rt.write_back(x, x_2)`), as NumPy's in-place writes would have left it."""
    norm.b.loc = frame.loc(frame.parsed.node) if frame.parsed is not None else None
    for p in params:
        final = frame.env.get(param_entry(p))
        if p in norm.mem.reshaped_arguments and isinstance(final, Var) and final.name != p:
            # `r = a.ravel(); r[0] = 7` took r as a view: true only of a C-contiguous `a`
            # (jit runs other calls as plain Python: compile/specialization.py, refuse_overlap)
            flag = norm.b.emit(_by_name("attr_c_contiguous"), {"x": Var(p)},
                               base=f"{p}_c_contiguous")
            message = (f"the function writes into argument {p!r} or through a reshape/ravel "
                       f"of it, which is a view only of a C-contiguous array: pass "
                       f"np.ascontiguousarray({p})")
            norm.apply(_by_name("check_assert"), [flag, Const(message)], {}, None, "check")
    for p in params:
        final = frame.env.get(param_entry(p))
        if isinstance(final, Stale):
            raise TranspileError(f"the argument {p!r} was written through a view the transforms "
                                 f"cannot follow: {final.why}")
        av = norm.b.avals.get(p) if norm.b.avals is not None else None
        if av is not None and av.weak:
            continue        # a Python number: nothing the caller holds can change
        if isinstance(final, Var) and final.name != p:
            norm.b.emit(_by_name("write_back"), {"dest": Var(p), "value": final},
                        base=f"{p}_written")


def views_of_written_arguments(norm, frame, params, outs):
    """jit's results that are views of an argument the function wrote into (`v = a[1:];
    v[0] = 7; return v`, `return A.T`): taken again from the caller's array after its final
    value was written back, so that the caller gets a view of it as from NumPy (the
    functional value is a copy: a later write into the result would not reach `a`)."""
    written = {}
    for p in params:
        final = frame.env.get(param_entry(p))
        if isinstance(final, Var) and final.name != p:
            written[final.name] = p
    if not written:
        return outs
    avals = norm.b.avals or {}
    # (only arrays: the code takes the view where it likes, before or after the write-back,
    # and a view sees it either way; an element read must stay the functional value)
    chains = []
    for o in outs:
        chain, root = norm.mem.chain(o.name) if isinstance(o, Var) else ([], None)
        av = avals.get(o.name) if isinstance(o, Var) else None
        if chain and (av is None or not av.shape):
            chain, root = [], None
        chains.append((chain, root))
    if not any(chain and root in written for chain, root in chains):
        return outs     # (the argument itself returned: it is the caller's array already)
    out = []
    for o, (chain, root) in zip(outs, chains):
        if root in written and all(not isinstance(op, Opaque) and
                                   op[0] in ("identity", "index", "transpose", "reshape")
                                   for _, _, op in chain):
            o = Var(written[root])
            for name, _, op in reversed(chain):
                o = norm.mem._derive(op, o, name)
        out.append(o)
    return out


class LoopPlan:
    """What reading a loop body ahead found: the names (in every frame) whose value changes,
    how their values end (entries that end holding the same variable stay one buffer), and
    whether a write split names that shared a buffer."""

    def __init__(self):
        self.changed = []       # (env, name) in order
        self.post = {}          # (id(env), name) -> tuple of leaf names at the end of the body
        self.post_values = {}   # (id(env), name) -> its value at the end of the body
        self.events = []
        self.split = None       # a message if a write was seen by names that end differently
        self.split_argument = False     # ... one of them the caller's array (an argument)

    def key(self, env, name, k):
        post = self.post.get((id(env), name))
        return post[k] if post is not None and k < len(post) else None


def read_ahead(norm, run):
    """Run `run` (which reads a loop body) and undo everything it did to the environments
    and the statement list; returns a LoopPlan."""
    mem = norm.mem
    frames = []
    for f in norm.frames:
        if all(f is not g for g in frames):
            frames.append(f)
    snap = [(f, dict(f.env), dict(f.core_names), f.returned) for f in frames]
    saved_body, saved_loc = norm.b.body, norm.b.loc
    saved_events, saved_rel, saved_maybe = mem.events, dict(mem.rel), dict(mem.maybe)
    saved_pins = dict(mem.pins)
    saved_unbound = dict(mem.unbound_unless_run)
    norm.b.body = []
    mem.events = []
    plan = LoopPlan()
    try:
        run()
    except TranspileError:
        pass        # reported when the body is read for real
    finally:
        posts = [(f, dict(f.env)) for f in frames]
        plan.events = mem.events
        for f, env, core_names, returned in snap:
            f.env.clear()
            f.env.update(env)
            f.core_names.clear()
            f.core_names.update(core_names)
            f.returned = returned
        norm.b.body, norm.b.loc = saved_body, saved_loc
        mem.events = saved_events
        mem.rel.clear()
        mem.rel.update(saved_rel)
        mem.maybe.clear()
        mem.maybe.update(saved_maybe)
        mem.pins.clear()
        mem.pins.update(saved_pins)
        mem.unbound_unless_run.clear()
        mem.unbound_unless_run.update(saved_unbound)
    for (f, pre, _, _), (_, post) in zip(snap, posts):
        for name, value in pre.items():
            after = post.get(name)
            if after is value:
                continue
            plan.changed.append((f.env, name))
            plan.post[(id(f.env), name)] = tuple(l.name for l in leaves(after)) \
                if after is not None else ()
            plan.post_values[(id(f.env), name)] = after
    here = id(norm.frame.env)
    for touched in plan.events:
        by_new = {}
        # the names of the loop's own frame first, the user's before hidden ones (the name a
        # refusal reports: `a` in the function written, not the caller's `z` it was called with)
        for env_id, name, new in sorted(touched, key=lambda t: (t[0] != here,
                                                                t[1].startswith("."))):
            end = plan.post.get((env_id, name))
            if end is not None:
                by_new.setdefault(new, []).append((name, end))
        for group in by_new.values():
            split = _split_by_write(group)
            if split is not None:
                plan.split = split
                plan.split_argument = any(n.startswith(PARAM_PREFIX) for n, _ in group)
    return plan


def _split_by_write(group):
    """Of the names one write was seen through, one that ends the body holding another buffer
    than the others (None: they end together). A name holding one array ends with one leaf; a
    list or dict holding it ends with several (`params["w"] -= ...` beside `params["b"] = ...`):
    it ends together with the others where it still holds their last array."""
    singles = {end for _, end in group if len(end) == 1}
    if len(singles) > 1:
        return group[0][0]
    if singles:
        (leaf,), = singles
        for name, end in group:
            if leaf not in end:
                return name
        return None
    common = set(group[0][1]).intersection(*[end for _, end in group[1:]])
    return None if common else group[0][0]


def _integers_only(index):
    """Is the index made of integers only (x[i], M[i, j]: an element or a row view)?"""
    return isinstance(index, IndexArg) and all(
        not isinstance(it, SliceArg) and it is not None and it is not Ellipsis
        for it in index.items)
