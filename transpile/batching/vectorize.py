"""Batching (vmap): core Python for one example -> core Python for a batch of examples.

Design
------
* The batch axis of every batched value is axis 0. Values that do not depend on a mapped
  argument stay unbatched (they are never broadcast unless an operation needs it).
* Ranks are static. vmap specializes on the rank (ndim) of every argument leaf (and of the
  global arrays the function reads), and the sweep propagates the *per-example* rank of every
  name through the body with a small rank rule per primitive (`Rule.rank` in
  primitives/batching/rules.py). Knowing ranks lets the generated code stay plain NumPy:
  a batched operand of an elementwise op whose example rank is lower than the other operand's
  gets `np.expand_dims(x, 1)` (NumPy broadcasts from the right, the batch axis sits at the
  left), reductions and transposes get shifted axes, and products become one `np.matmul`,
  `np.dot` or `np.einsum` call.
* When vmap is inlined by an outer transform (grad(vmap(f)), a vmapped function called inside
  another transformed function) the argument ranks are not part of that transform's
  specialization, so they are unknown (None). Rules then use rank-agnostic forms where one
  exists (negative axes, `rt.batch_align`, `rt.batch_axes`), and otherwise fall back to a loop.
* Loop fallback: a statement with no rule for its case becomes an explicit loop over the
  batch (`for i in range(0, batch_size, 1): ...` with per-example slices `x_i = x[i]`, results
  collected with rt.batch_set and stacked), visible in the generated source.
* Control flow: an `If` on an unbatched predicate stays an `If` (names that end up batched in
  only one branch are broadcast there); an `If` on a batched predicate becomes `np.where` over
  both branches when both are safe to evaluate for every example, else a loop. `ForRange`
  and `While` with unbatched bounds/conditions stay loops (names carried around the loop that
  become batched are broadcast before it, found by iterating to a fixed point).
"""
from transpile.core import ir
from transpile.errors import TranspileError
from transpile.core.ir import Const, Eqn, IndexArg, SliceArg, TupleArg, Var
from transpile.frontend.normalize.normalizer import Builder
from transpile.primitives import by_name
from transpile.primitives.batching.rules import NoRule, Rule, elementwise
from transpile.frontend.templates import instantiate, rule_env
from transpile.batching.branches import RaggedBranches, check_sides, side_ranks
from transpile.batching import weak
from transpile.batching.while_loops import can_mask, masked_while
from transpile.batching.names import (  # noqa: F401  (re-exported)
    _atom_names, live_in, loop_live, reads, rename_branch, rename_stmt, tapes_used, writes)
from transpile.ad.reverse import core_namer
from transpile.primitives.internal.batch_helpers import batch_any
from transpile.primitives.internal.control import assign, tape_pop, write_back
from transpile.primitives.numpy.generators import generator_draw, legacy_draw
from transpile.primitives.numpy.nondiff import attr_shape, logical_not, shape
from transpile.primitives.numpy.structure import getitem
import numpy as np


class BatchSweep:
    def __init__(self, core, batched, ranks, size=None, namer=None):
        self.core = core
        self.namer = namer or core_namer(core)
        self.bld = Builder(self.namer)
        self.bat, self.rk, self.tlen, self.bools = {}, {}, {}, set()
        for p, bt, r in zip(core.params, batched, ranks):
            self.bat[p], self.rk[p] = bool(bt), r
        self.B = Const(size) if size is not None else None
        self.cur = None
        # reverse-mode tapes (vmap of grad): tape name -> [batched, example rank of its values]
        self.tapes = {}
        self.batched_tapes = set()      # tapes found (by an earlier attempt) to hold batched values
        self.own_any = set()            # rt.batch_any results of this sweep's masked while loops
        self.differentiated = False     # built for an outer transform that may differentiate it
        self.weak = {}                  # unbatched names holding a Python int/float
        self.mapped = [p for p, bt in zip(core.params, batched) if bt]

    # -- the context that rules use -------------------------------------------------------------

    def P(self, name):
        return by_name(name) if isinstance(name, str) else name

    def b(self, atom):
        """Is this atom batched?"""
        return isinstance(atom, Var) and self.bat.get(atom.name, False)

    def r(self, atom):
        if isinstance(atom, Var):
            return self.rk.get(atom.name)
        if isinstance(atom, Const):
            v = atom.value
            if v is None or isinstance(v, (str, type)):
                return 0
            try:
                return int(np.ndim(v))
            except Exception:
                return None
        return None

    def tuple_len(self, atom):
        if isinstance(atom, Var):
            return self.tlen.get(atom.name)
        if isinstance(atom, TupleArg):
            return len(atom.items)
        if isinstance(atom, Const) and isinstance(atom.value, tuple):
            return len(atom.value)
        return None

    def dtype_kind(self, atom):
        return "b" if isinstance(atom, Var) and atom.name in self.bools else None

    def emit(self, prim, args, base="t", batched=True, rank=None):
        prim = self.P(prim)
        name = self.namer.fresh(base)
        self.bld.body.append(Eqn(name, prim, dict(args), self.bld.loc))
        self.bat[name], self.rk[name] = batched, rank
        return Var(name)

    def final(self, prim, args, batched=True, rank="same"):
        """Bind the current equation's output name (ends a rule)."""
        prim = self.P(prim)
        out = self.cur.out
        self.bld.body.append(Eqn(out, prim, dict(args), self.cur.loc))
        self.bat[out] = batched
        self.rk[out] = self.cur_rank if rank == "same" else rank
        if prim.bool_result:
            self.bools.add(out)
        else:
            self.bools.discard(out)
        return Var(out)

    def align(self, atom, target):
        """A batched atom with example rank r < target gets unit axes after the batch axis."""
        r = self.r(atom)
        if r is None:
            raise NoRule("rank unknown")
        if r >= target:
            return atom
        axis = Const(1) if target - r == 1 else Const(tuple(range(1, 1 + target - r)))
        return self.emit("expand_dims", {"x": atom, "axis": axis}, base=atom.name, rank=target)

    def broadcast(self, atom):
        """An unbatched value as a batched one (a broadcast view)."""
        base = atom.name if isinstance(atom, Var) else "const"
        return self.emit("batch_broadcast", {"x": atom, "size": self.B}, base=base + "_b",
                         rank=self.r(atom))

    def flatten(self, atom):
        base = (atom.name if isinstance(atom, Var) else "t") + "_flat"
        if self.b(atom):
            return self.emit("reshape", {"x": atom, "shape": TupleArg((self.B, Const(-1)))},
                             base=base, rank=1)
        return self.emit("ravel", {"x": atom}, base=base, batched=False, rank=1)

    def expand(self, eqn, text):
        """Rewrite eqn as the per-example template `text`, then batch that."""
        tmp = Builder(self.namer)
        res = instantiate(text, rule_env(eqn), self.namer, tmp, eqn.loc, eqn.out)
        if isinstance(res, Var) and tmp.body and tmp.body[-1].out == res.name:
            tmp.body[-1].out = eqn.out
        else:
            tmp.body.append(Eqn(eqn.out, by_name("identity"), {"x": res}, eqn.loc))
        saved = self.cur, self.cur_rank
        for e in tmp.body:
            self.eqn(e)
        self.cur, self.cur_rank = saved

    # -- the sweep ------------------------------------------------------------------------------

    def start(self, first_batched):
        if self.B is None:
            self.bld.loc = None
            name = self.namer.fresh("batch_size")
            self.bld.body.append(Eqn(name, by_name("len"), {"x": Var(first_batched)}))
            self.bat[name], self.rk[name] = False, 0
            self.B = Var(name)

    def run(self, body, live_out=frozenset()):
        live = set(live_out)
        after = []
        for st in reversed(body):
            after.append(frozenset(live))
            live |= reads([st])
        after.reverse()
        for st, live_after in zip(body, after):
            self.stmt(st, live_after)

    def stmt(self, st, live):
        if isinstance(st, Eqn):
            self.eqn(st)
        elif isinstance(st, ir.If):
            self.if_(st, live)
        elif isinstance(st, (ir.ForRange, ir.While)):
            self.loop(st, live)
        elif isinstance(st, ir.Push):
            self.push(st)
        elif isinstance(st, (ir.Comment, ir.Break, ir.Continue)):
            self.bld.body.append(st)
        else:
            loc = getattr(st, "loc", None) or (None, None)
            raise TranspileError(f"vmap does not support the statement {type(st).__name__}",
                                 filename=loc[0], lineno=loc[1], construct=type(st).__name__)

    def push(self, st):
        """tape.push(v): a tape holds batched values when any value pushed on it is batched
        (every example runs the same pushes: control flow that differs per example never
        reaches here, see loop_fallback). Unbatched values pushed on such a tape are broadcast."""
        name = st.tape.name
        value = st.value
        known = self.tapes.get(name)
        if self.b(value) and name not in self.batched_tapes:
            self.batched_tapes.add(name)
            if known is not None:        # an earlier push on this tape was emitted unbatched
                raise RestartSweep(name)
        batched = name in self.batched_tapes
        self.bld.loc = st.loc
        if batched and not self.b(value):
            value = self.broadcast(value)
        rank = self.r(value)
        if known is not None and known[1] != rank:
            rank = None
        self.tapes[name] = [batched, rank if known is None or known[1] == rank else None]
        self.bld.body.append(ir.Push(st.tape, value, st.loc))

    def eqn(self, e):
        self.weak.pop(e.out, None)
        rule = e.prim.batch
        if e.prim is assign:        # a copy (branch joins, loop-carried values)
            rule = elementwise
        if e.prim is logical_not and self.b(e.args["x"]):
            # Python's `not` (a loop's break flag, say) per example: np.logical_not
            e = Eqn(e.out, by_name("batch_not"), dict(e.args), e.loc)
            rule = elementwise
        if e.prim is batch_any and e.out in self.own_any:   # this sweep's masked while
            self.bld.body.append(e)
            self.bat[e.out], self.rk[e.out] = False, 0
            return
        self.bld.loc = e.loc
        if e.prim is tape_pop and e.args["tape"].name in self.batched_tapes:
            self.bld.body.append(e)
            self.bat[e.out] = True
            self.rk[e.out] = (self.tapes.get(e.args["tape"].name) or [True, None])[1]
            self.bools.discard(e.out)
            return
        rank = None
        if isinstance(rule, Rule):
            try:
                rank = rule.rank(self, e)
            except (NoRule, KeyError, TypeError):
                rank = None
        if not any(self.b(a) for a in ir.iter_atoms(e.args.values())):
            self.bld.body.append(e)
            self.bat[e.out], self.rk[e.out] = False, rank
            weak.note(self, e)
            if e.prim in (shape, attr_shape):
                self.tlen[e.out] = self.r(e.args["x"])
            self.bools.add(e.out) if e.prim.bool_result else self.bools.discard(e.out)
            return
        self.cur, self.cur_rank = e, rank
        mark = len(self.bld.body)
        reason = f"no batching rule for {e.prim.path}"
        if isinstance(rule, Rule):
            try:
                rule(self, e)
                return
            except NoRule as why:
                reason += f" ({why})"
                del self.bld.body[mark:]
        self.loop_fallback([e], {e.out}, reason, {e.out: rank})

    # -- control flow ---------------------------------------------------------------------------

    def state(self):
        return dict(self.bat), dict(self.rk), dict(self.weak)

    def set_state(self, st):
        self.bat, self.rk, self.weak = dict(st[0]), dict(st[1]), dict(st[2])

    def branch(self, body, live):
        saved_body = self.bld.body
        self.bld.body = []
        self.run(body, live)
        out = self.bld.body
        self.bld.body = saved_body
        return out

    def if_(self, st, live):
        if self.b(st.cond):
            if self.differentiated or not (_safe(st.body) and _safe(st.orelse)):
                # differentiated (grad of vmap): a select would run the untaken side too, and
                # its 0 * inf/nan partials would reach the gradient
                sides = side_ranks(self, st, live)
                if sides:
                    check_sides(self, st, live, *sides, unknown=True)
                outs = writes([st]) & live
                ranks = {v: (sides[0].get(v) if sides and sides[0].get(v) == sides[1].get(v)
                             else None) for v in outs}
                return self.loop_fallback([st], outs, "branch on a batched value inside a "
                                          "derivative" if self.differentiated else
                                          "branch on a batched value with side conditions",
                                          ranks)
            return self.select(st, live)
        before = self.state()
        then = self.branch(st.body, live)
        s_then = self.state()
        self.set_state(before)
        other = self.branch(st.orelse, live)
        s_else = self.state()
        for v in sorted(writes([st])):
            if s_then[2].get(v) != s_else[2].get(v):
                self.weak.pop(v, None)
            bt, be = s_then[0].get(v, False), s_else[0].get(v, False)
            rt_, re_ = s_then[1].get(v), s_else[1].get(v)
            if bt and not be and v in s_else[0]:
                other.append(Eqn(v, by_name("batch_broadcast"), {"x": Var(v), "size": self.B}))
            elif be and not bt and v in s_then[0]:
                then.append(Eqn(v, by_name("batch_broadcast"), {"x": Var(v), "size": self.B}))
            self.bat[v] = bt or be
            self.rk[v] = rt_ if rt_ == re_ else None
        self.bld.body.append(ir.If(st.cond, then, other, st.loc))

    def select(self, st, live):
        """if c: A else: B  with c batched  ->  both branches, then v = np.where(c, vA, vB)."""
        names = sorted(writes([st]) & (live | set()))
        # A name bound in one branch only (and not before) is read afterwards only where that
        # branch ran (reverse mode reads a branch's intermediates under the same condition):
        # both sides run for every example here, so that branch's value serves everywhere.
        one_sided = {v for v in names if v not in self.bat
                     and (v not in writes(st.body) or v not in writes(st.orelse))}
        self.bld.body.append(ir.Comment("branch on a batched value: evaluate both sides, "
                                      "then select with np.where"))
        picks = {}
        for tag, body in (("then", st.body), ("else", st.orelse)):
            mapping = {}
            renamed = rename_branch(body, mapping,
                                    lambda v, t=tag: Var(self.namer.fresh(f"{v}_{t}")), self.bat)
            self.run(renamed, {m.name for m in mapping.values()})
            picks[tag] = {v: mapping.get(v, Var(v)) for v in names}
        check_sides(self, st, live, self.rk, self.rk,
                    {t: {v: p.name for v, p in picks[t].items() if isinstance(p, Var)}
                     for t in picks})
        for v in sorted(one_sided):
            side = "then" if v in writes(st.body) else "else"
            self.eqn(Eqn(v, by_name("assign"), {"x": picks[side][v]}, st.loc))
        reshaped = _may_change_shape(st.body) or _may_change_shape(st.orelse)
        for v in names:
            if v in one_sided:
                continue
            sides = [picks["then"][v], picks["else"][v]]
            if reshaped and all(isinstance(p, Var) and self.b(p) for p in sides):
                # a side that changed a length must not be broadcast against the other
                checked = Var(self.namer.fresh(f"{sides[0].name}_same"))
                where = Const(f"{st.loc[0]}:{st.loc[1]}") if st.loc and st.loc[0] else \
                    Const(None)
                self.bld.body.append(Eqn(checked.name, by_name("batch_same_shape"),
                                         {"x": sides[0], "other": sides[1], "where": where},
                                         st.loc))
                self.bat[checked.name], self.rk[checked.name] = True, self.r(sides[0])
                sides[0] = checked
            e = Eqn(v, by_name("where"), {"condition": st.cond, "x": sides[0],
                                          "y": sides[1]}, st.loc)
            numbers = [weak.python_number(self, picks[t][v]) for t in ("then", "else")]
            self.eqn(e)
            if None not in numbers:
                weak.cast_like_inputs(self, v, numbers)

    def loop(self, st, live):
        if isinstance(st, ir.ForRange):
            if any(self.b(a) for a in (st.start, st.stop, st.step)):
                return self.loop_fallback([st], writes([st]) & live,
                                          "loop bounds depend on the mapped axis")
            self.bat[st.var], self.rk[st.var] = False, 0
        carried = writes([st])
        inner_live = loop_live(st, live)
        for _ in range(len(carried) + 2):
            before = self.state()
            saved_body = self.bld.body
            self.bld.body = []
            if isinstance(st, ir.While):
                cond = {st.cond.name} if isinstance(st.cond, Var) else set()
                self.run(st.cond_body, inner_live | live_in(st.body, inner_live) | cond)
                cond_batched = self.b(st.cond)
                cond_body = self.bld.body
                self.bld.body = []
            self.run(st.body, inner_live)
            # a carried name batched on entry that the body rebinds to a value the same for
            # every example (a reverse-mode adjoint reset to 0.0): broadcast at the end of the
            # body, so that the next iteration reads it batched as well
            for v in sorted(carried):
                if before[0].get(v) and v in self.bat and not self.bat[v]:
                    self.cur, self.cur_rank = Eqn(v, None, {}), self.rk.get(v)
                    self.bld.loc = st.loc
                    self.final("batch_broadcast", {"x": Var(v), "size": self.B})
            new_body = self.bld.body
            self.bld.body = saved_body
            if isinstance(st, ir.While) and cond_batched:
                self.set_state(before)
                if can_mask(st, _safe, tapes_used) and not self.differentiated:
                    start, masked = masked_while(self, st)
                    self.bld.body.append(ir.Comment(
                        "while condition depends on the mapped axis: run until every example "
                        "stops, masking the stopped ones"))
                    for e in start:
                        self.eqn(e)
                    return self.loop(masked, live)
                return self.loop_fallback([st], writes([st]) & live,
                                          "while condition depends on the mapped axis")
            grew = [v for v in sorted(carried) if v in before[0]
                    and self.bat.get(v) and not before[0][v]]
            rank_changed = [v for v in sorted(carried) if v in before[1]
                            and self.rk.get(v) != before[1][v]]
            if not grew and not rank_changed:
                break
            self.set_state(before)
            for v in grew:
                number = weak.python_number(self, Var(v))
                self.cur, self.cur_rank = Eqn(v, None, {}), self.rk.get(v)
                self.bld.loc = st.loc
                self.final("batch_broadcast", {"x": Var(v), "size": self.B})
                weak.cast_like_inputs(self, v, [number])
            for v in rank_changed:
                self.rk[v] = None
        if isinstance(st, ir.ForRange):
            self.bld.body.append(ir.ForRange(st.var, st.start, st.stop, st.step, new_body, st.loc))
        else:
            self.bld.body.append(ir.While(cond_body, st.cond, new_body, st.loc))

    # -- the loop fallback ----------------------------------------------------------------------

    def loop_fallback_whole(self, body, outs, why):
        """The whole function body, once per example (its tapes become per-example tapes)."""
        where = ""
        if why.loc:
            where = f" at {why.loc[0]}:{why.loc[1]}"
        keep = writes(body) | {n for n in reads(body) if self.bat.get(n)}
        plain = why.loc is None and getattr(why, "plain", False)
        reason = why.reason if plain or isinstance(why, RaggedBranches) else \
            f"{why.reason}{where}, with a reverse-mode tape"
        self.loop_fallback(body, set(outs) & keep, reason, whole=plain)

    def refuse_shared_draws(self, stmts, wr):
        """A loop over the batch would have the examples draw in turn from one generator made
        outside the loop (each example of the user's function has its own)."""
        for e in ir.walk_eqns(stmts):
            if e.prim is generator_draw or e.prim is legacy_draw:
                gen = e.args["rng" if e.prim is generator_draw else "rs"]
                if isinstance(gen, Var) and gen.name not in wr and not self.b(gen):
                    where = f"{e.loc[0]}:{e.loc[1]}: " if e.loc else ""
                    raise TranspileError(
                        f"{where}vmap: this draw runs for each example in turn (in a branch or "
                        "loop that differs per example), from one random generator: the "
                        "examples would get different numbers than separate calls",
                        construct=e.prim.construct,
                        hint="draw the numbers before the branch or loop (for every example), "
                             "or run the examples one by one")

    def loop_fallback(self, stmts, outs, reason, out_ranks=None, whole=False):
        """for i in range(batch_size): the statements on example i; results stacked. whole:
        the statements are the whole function, compiled by jit (no None placeholders)."""
        out_ranks = out_ranks or {}
        loc = getattr(stmts[0], "loc", None)
        outer_tapes = tapes_used(stmts) - writes(stmts)
        if outer_tapes:
            # per-example pushes/pops on a shared tape would interleave the examples
            raise WholeFunctionLoop(reason, loc)
        rd, wr = reads(stmts), writes(stmts)
        self.refuse_shared_draws(stmts, wr)
        branch_writes = writes([st for st in stmts if not isinstance(st, Eqn)])
        batched_reads = sorted(n for n in rd if self.bat.get(n))
        i = self.namer.fresh("i")
        where = f" (line {loc[1]})" if loc and len(loc) > 1 and loc[1] and \
            "reverse-mode tape" not in reason else ""
        self.bld.body.append(ir.Comment(reason if whole else
                                        f"{reason}{where}: loop over the batch"))
        parts = {}
        for o in sorted(outs):
            parts[o] = Var(self.namer.fresh(f"{o}_rows"))
            self.bld.body.append(Eqn(parts[o].name, by_name("batch_slots"), {"n": self.B}, loc))
        mapping, body = {}, []
        for n in batched_reads:
            mapping[n] = Var(self.namer.fresh(f"{n}_i"))
            body.append(Eqn(mapping[n].name, by_name("getitem"),
                            {"x": Var(n), "index": IndexArg((Var(i),))}, loc))
        for n in sorted(wr - set(batched_reads)):
            # a name the statements may leave unwritten on some path keeps its value
            mapping[n] = Var(self.namer.fresh(f"{n}_i"))
            if n in self.bat and self.bat[n]:
                body.append(Eqn(mapping[n].name, by_name("getitem"),
                                {"x": Var(n), "index": IndexArg((Var(i),))}, loc))
            elif n in self.bat:
                body.append(Eqn(mapping[n].name, by_name("identity"), {"x": Var(n)}, loc))
            elif (n in outs or n in branch_writes) and not whole:
                # bound on some paths only: defined (None) on the others, so that code which
                # saves every name of the loop body (reverse mode's tape) can read it; a range
                # loop's counter, unbound where the loop runs zero times, is an int there
                # (the code after the loop reads the value the name held before it)
                unset = Const(0) if any(isinstance(st, ir.ForRange) and st.var == n
                                        for st in stmts) else Const(None)
                body.append(Eqn(mapping[n].name, by_name("identity"), {"x": unset}, loc))
        body += [rename_stmt(s, mapping) for s in stmts]
        for o in sorted(outs):
            store = {"parts": parts[o], "i": Var(i), "value": mapping[o], "n": self.B}
            if loc and len(loc) > 1 and loc[0] and loc[1]:
                store["where"] = Const(f"{loc[0]}:{loc[1]}")   # for the ragged-shape error
            body.append(Eqn(parts[o].name, by_name("batch_store"), store, loc))
        # the caller's array receives an example's writes when that example is done: after
        # its backward sweep, which still reads the argument's value on entry (as codegen
        # orders them for a whole function)
        backs = [st for st in body if isinstance(st, Eqn) and st.prim is write_back]
        body = [st for st in body if not any(st is b for b in backs)] + backs
        self.bld.body.append(ir.ForRange(i, Const(0), self.B, Const(1), body, loc))
        for o in sorted(outs):
            self.weak.pop(o, None)
            self.bld.body.append(Eqn(o, by_name("batch_stacked"), {"parts": parts[o],
                                                                   "n": self.B}, loc))
            self.bat[o] = True
            self.rk[o] = out_ranks.get(o, self.rk.get(o))
        for n in wr - set(outs):
            self.bat.pop(n, None)


class RestartSweep(Exception):
    """A tape turned out to hold batched values after an unbatched push was emitted."""


class WholeFunctionLoop(Exception):
    """Control flow that differs per example uses a reverse-mode tape: only a loop over the
    batch around the whole function keeps each example's pushes and pops together."""

    def __init__(self, reason, loc):
        super().__init__(reason)
        self.reason, self.loc = reason, loc


# rows without a scalar form whose result has their operands' (broadcast) shape
_SHAPE_KEEPING = tuple(by_name(n) for n in ("assign", "identity", "where", "astype", "copy"))


def _may_change_shape(body):
    """Does a branch compute anything but elementwise operations (a join, a slice, a call
    whose result's length may differ from its inputs')?"""
    for e in ir.walk_eqns(body):
        if e.prim.lower is None and not any(e.prim is p for p in _SHAPE_KEEPING):
            return True
    return False


def _safe(body):
    """Can this branch be evaluated for every example, whatever its predicate?"""
    for st in body:
        if isinstance(st, ir.If):
            if not (_safe(st.body) and _safe(st.orelse)):
                return False
        elif isinstance(st, Eqn):
            if st.prim.unsafe_in_select:
                return False
            if st.prim is getitem and any(
                    not isinstance(it, SliceArg) and isinstance(it, Var)
                    for it in st.args["index"].items):
                return False
        elif not isinstance(st, ir.Comment):
            return False
    return True
