"""Control flow in the normalizer: data-dependent `if`, loops, subscript writes, local functions.

`ControlFlowMixin` is a base class of `transpile.normalize.Normalizer`. It turns

  * `if`/`elif`/`else` and `a if c else b` on array data into `If` (the value of a variable
    after the `if` is copied into one name at the end of each branch),
  * `for` over `range(...)`/`np.arange(...)`, over an array's first axis, over `zip`/`enumerate`
    into `ForRange` index loops; `for` over a tuple/list of known structure (`for W, b in
    params:`) is unrolled while generating code,
  * `while` into `While`,
  * `break`/`continue` into flags (`_break_1 = True`, the rest of the body under
    `if not (_break_1 or _continue_1)`), so the transforms never see a jump,
  * `y[i] = v` (and `y[i] += v`, slices) into `y = rt.setitem(y, i, v)`,
  * nested `def`s and lambdas bound to names into functions inlined where they are called
    (closures read the enclosing variables' values at the call),
  * list comprehensions over sequences of known length into lists of known structure.

Loop-carried variables keep one name through the loop (copied into it before the loop when the
value came from elsewhere); the transforms' SSA pass (transforms/rename.py) gives each binding
its own name where a transform needs it.
"""
import gast

from transpile import ir
from transpile.errors import TranspileError
from transpile.aliasing import Stale, read_ahead, stale_error, writes_in
from transpile.ir import Const, Eqn, IndexArg, Var


class LocalFunction:
    """A `def` or lambda inside the function being transformed; inlined at each call."""

    def __init__(self, node, frame, defaults):
        self.node, self.frame, self.defaults = node, frame, defaults
        self.name = getattr(node, "name", "lambda")


def _N():
    from transpile import normalize
    return normalize


def _store_names(stmts):
    out = []
    for st in stmts:
        for n in gast.walk(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.append(n.id)
    return list(dict.fromkeys(out))


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _set_flag(flag, value, like):
    node = gast.Assign(targets=[_name(flag, True)], value=gast.Constant(value=value, kind=None),
                       type_comment=None)
    return gast.copy_location(node, like)


def _has_jump(stmts):
    """break/continue belonging to this loop (not to a nested one)."""
    for st in stmts:
        if isinstance(st, (gast.Break, gast.Continue)):
            return True
        if isinstance(st, gast.If) and (_has_jump(st.body) or _has_jump(st.orelse)):
            return True
        if isinstance(st, (gast.With,)) and _has_jump(st.body):
            return True
    return False


class ControlFlowMixin:

    # -- helpers -------------------------------------------------------------------------------

    def _sub_body(self, fn):
        saved = self.b.body
        self.b.body = []
        try:
            result = fn()
        finally:
            body, self.b.body = self.b.body, saved
        return body, result

    def _copy(self, out, atom):
        self.b.body.append(Eqn(out, _N().by_name("assign"), {"x": atom}, self.b.loc))
        return Var(out)

    def _leaves(self, value, node):
        N = _N()
        if isinstance(value, N.Struct):
            leaves, tree = [], []
            for item in value.items:
                l, t = self._leaves(item, node)
                leaves += l
                tree.append(t)
            return leaves, ("struct", value.kind, tuple(value.keys), tuple(tree))
        if isinstance(value, (Var, Const)):
            return [value], "leaf"
        return [], ("static", id(value), value)

    def _rebuild(self, tree, it):
        N = _N()
        if tree == "leaf":
            return next(it)
        if tree[0] == "struct":
            return N.Struct(tree[1], [self._rebuild(t, it) for t in tree[3]], tree[2])
        return tree[2]

    def _join_name(self, user, k, n):
        base = user if n == 1 else f"{user}_{k}"
        return self.namer.fresh(base) if n != 1 else self.core_name(user)

    def aliased(self, env, target, keep):
        for name, value in env.items():
            if name != keep and any(isinstance(l, Var) and l.name == target
                                    for l in self._leaves(value, None)[0]):
                return True
        return False

    def protect(self, env, target, keep):
        """Before `target` is overwritten: values of other names that alias it get copies."""
        for name, value in list(env.items()):
            if name == keep:
                continue
            leaves, tree = self._leaves(value, None)
            if any(isinstance(l, Var) and l.name == target for l in leaves):
                new = []
                for l in leaves:
                    if isinstance(l, Var) and l.name == target:
                        l = self._copy(self.namer.fresh(name), l)
                    new.append(l)
                env[name] = self._rebuild(tree, iter(new))

    # -- if ------------------------------------------------------------------------------------

    def dynamic_if(self, node, cond):
        cond = self.to_arg(cond, node)
        frame = self.frame
        loc = self.b.loc
        frames = []
        for f in self.frames:
            if all(f is not g for g in frames):
                frames.append(f)
        pres = [dict(f.env) for f in frames]
        results = []
        for stmts in (node.body, node.orelse):
            for f, pre in zip(frames, pres):
                f.env.clear()
                f.env.update(pre)
            frame.returned = None
            self.b.loc = loc
            body, _ = self._sub_body(lambda: self.run_body(stmts))
            results.append((body, [dict(f.env) for f in frames], frame.returned))
        (b1, envs1, r1), (b2, envs2, r2) = results
        for f, pre in zip(frames, pres):
            f.env.clear()
            f.env.update(pre)
        if (r1 is None) != (r2 is None):
            raise self.error(node, "a return inside an if on array data needs a return on the "
                             "other path too", construct="if ...: return ...",
                             hint="assign the result to a variable in both branches and return "
                             "it after the if (or use np.where)")
        bodies = [b1, b2]
        memo = {}
        # the current frame first (its names get the user's names), then inlined callers
        order = sorted(range(len(frames)), key=lambda i: frames[i] is not frame)
        for i in order:
            f, pre, e1, e2 = frames[i], pres[i], envs1[i], envs2[i]
            names = [n for n in dict.fromkeys(list(e1) + list(e2))
                     if e1.get(n) is not pre.get(n) or e2.get(n) is not pre.get(n)]
            for n in names:
                if n not in e1 or n not in e2:
                    f.env.pop(n, None)
                    continue
                if isinstance(e1[n], Stale) or isinstance(e2[n], Stale):
                    f.env[n] = e1[n] if isinstance(e1[n], Stale) else e2[n]
                    continue
                saved = self.frames[-1]
                f.env[n] = self._join_values(n, [e1[n], e2[n]], bodies, [e1, e2], node,
                                             memo=memo, own=f is frame)
        self._join_aliasing(memo, frames, [envs1, envs2])
        if r1 is not None:
            frame.returned = self._join_values("out", [r1, r2], bodies, [{}, {}], node)
        self.b.loc = loc
        self.b.body.append(ir.If(cond, b1, b2, loc))

    def _join_aliasing(self, memo, frames, branch_envs):
        """What the variables that join the paths of an if may share (transpile/aliasing.py)."""
        partners = {tuple(a.name for a in key if isinstance(a, Var)): j for key, j in memo.items()}
        for key, j in memo.items():
            self.mem.join_relation(j, list(key), partners)
            # a path's value also held by a name that does not join into j: j may alias it
            for k, envs in enumerate(branch_envs):
                leaf = key[k]
                if not isinstance(leaf, Var):
                    continue
                for f, env in zip(frames, envs):
                    for name, value in env.items():
                        if name not in f.env:
                            continue
                        if any(l == leaf for l in self._leaves(value, None)[0]) and not any(
                                l == Var(j) for l in self._leaves(f.env.get(name), None)[0]):
                            self.mem.maybe.setdefault(j, set()).add(self.mem.root(leaf.name))


    def _join_values(self, user, values, bodies, envs, node, memo=None, own=True):
        trees = []
        leaf_lists = []
        for v in values:
            l, t = self._leaves(v, node)
            leaf_lists.append(l)
            trees.append(t)
        if not all(_tree_eq(trees[0], t) for t in trees[1:]):
            raise self.error(node, f"{user!r} has a different structure (or a different Python "
                             "object) on the two paths of an if on array data",
                             construct=f"if ...: {user} = ...", cls=TranspileError,
                             hint="give it the same kind of value on both paths")
        out = []
        n = len(leaf_lists[0])
        for k in range(n):
            leaves = [l[k] for l in leaf_lists]
            if all(l == leaves[0] for l in leaves[1:]):
                out.append(leaves[0])
                continue
            key = tuple(leaves)
            if memo is not None and key in memo:
                out.append(Var(memo[key]))
                continue
            j = self._join_name(user, k, n) if own else self.namer.fresh(user.lstrip("."))
            if Var(j) not in leaves and memo is not None and self.mem.referenced(j):
                j = self.namer.fresh(j)     # the value before the if is still read in a branch
            for body, env, leaf in zip(bodies, envs, leaves):
                if leaf == Var(j):
                    continue
                saved = self.b.body
                self.b.body = body
                try:
                    self.protect(env, j, user)
                    self._copy(j, leaf)
                finally:
                    self.b.body = saved
            if memo is not None:
                memo[key] = j
            out.append(Var(j))
        return self._rebuild(trees[0], iter(out))

    def dynamic_ifexp(self, node, cond, base):
        cond = self.to_arg(cond, node)
        loc = self.b.loc
        out = self.namer.fresh(base)
        bodies = []
        for e in (node.body, node.orelse):
            body, value = self._sub_body(lambda: self.to_arg(self.expr(e, base), e))
            self.b.body, saved = body, self.b.body
            self._copy(out, value)
            self.b.body = saved
            bodies.append(body)
        self.b.body.append(ir.If(cond, bodies[0], bodies[1], loc))
        return Var(out)

    # -- loops ---------------------------------------------------------------------------------

    def lower_jumps(self, node):
        """Rewrite break/continue of this loop into flags. Returns the flag to test (or None)."""
        if not _has_jump(node.body):
            return None, None
        brk = self.namer.fresh("_break")
        cont = self.namer.fresh("_continue")

        def lower(stmts):
            out = []
            for k, st in enumerate(stmts):
                if isinstance(st, gast.Break):
                    out.append(_set_flag(brk, True, st))
                    return out
                if isinstance(st, gast.Continue):
                    out.append(_set_flag(cont, True, st))
                    return out
                if isinstance(st, gast.If) and (_has_jump(st.body) or _has_jump(st.orelse)):
                    new = gast.If(test=st.test, body=lower(st.body) or [gast.Pass()],
                                  orelse=lower(st.orelse))
                    out.append(gast.copy_location(new, st))
                    rest = stmts[k + 1:]
                    if rest:
                        test = gast.UnaryOp(op=gast.Not(), operand=gast.BoolOp(
                            op=gast.Or(), values=[_name(brk), _name(cont)]))
                        guard = gast.If(test=gast.copy_location(test, st), body=lower(rest),
                                        orelse=[])
                        out.append(gast.copy_location(guard, rest[0]))
                    return out
                out.append(st)
            return out
        body = [_set_flag(cont, False, node.body[0])] + lower(node.body)
        return brk, body

    def _carried_setup(self, stmts, extra=(), plan=None, node=None):
        """Before a loop: every value the body changes gets one name that holds it at the top
        of each iteration (copied in here, copied back at the end of the body). Names that
        share a buffer and change together (a write seen through aliases) share that name."""
        frame = self.frame
        entries = [(frame.env, n) for n in _store_names(stmts) + list(extra)]
        if plan is not None:
            if plan.split:
                raise self.error(node, f"{plan.split!r} shares an array with another name when "
                                 "a loop body writes into it, but the two are bound to different "
                                 "values by the end of the body: the transforms cannot follow "
                                 "which buffer each one holds on the next iteration",
                                 construct="for/while loop", cls=TranspileError,
                                 hint="make the copy explicit (np.copy(...)) before the loop")
            entries += plan.changed
        carried, joined, seen = {}, {}, set()
        for env, n in entries:
            if (id(env), n) in seen or n not in env:
                continue
            seen.add((id(env), n))
            value = env[n]
            leaves, tree = self._leaves(value, None)
            if not leaves:
                continue
            names = []
            for k, leaf in enumerate(leaves):
                gkey = None
                if plan is not None and isinstance(leaf, Var):
                    gkey = (leaf.name, plan.key(env, n, k))
                if gkey in joined:
                    names.append(Var(joined[gkey]))
                    continue
                j = self._join_name(n, k, len(leaves)) if env is frame.env else \
                    self.namer.fresh(n.lstrip("."))
                if leaf == Var(j) and self._held_elsewhere(j, plan, gkey, env, n):
                    j = self.namer.fresh(j)
                if leaf != Var(j):
                    self.protect(env, j, n)
                    self._copy(j, leaf)
                    self.mem.loop_entry(j, leaf, joined)
                if gkey is not None:
                    joined[gkey] = j
                names.append(Var(j))
            env[n] = self._rebuild(tree, iter(names))
            carried[(id(env), n)] = (env, n, tree, names)
        return carried

    def _held_elsewhere(self, j, plan, gkey, env0, n0):
        """Is variable j held by a name that does not change with it in the loop?"""
        for env, name, value in self.mem.entries():
            if env is env0 and name == n0:
                continue
            ls = self._leaves(value, None)[0]
            if any(isinstance(l, Var) and l.name == j for l in ls):
                if plan is None or gkey not in [(j, plan.key(env, name, k)) for k in range(len(ls))]:
                    return True
        return False

    def _carried_finish(self, carried, node):
        done = {}
        for env, n, tree, names in carried.values():
            value = env.get(n)
            leaves, t = self._leaves(value, node) if value is not None else ([], None)
            if value is None or not _tree_eq(t, tree):
                raise self.error(node, f"{n!r} changes structure (or Python object) inside a loop",
                                 cls=TranspileError,
                                 hint="keep loop variables arrays/numbers of one structure")
            for leaf, j in zip(leaves, names):
                if j.name in done:
                    if done[j.name] != leaf:
                        raise self.error(node, f"{n!r} shared an array with another name at "
                                         "the start of the loop body but not at its end",
                                         cls=TranspileError,
                                         hint="make the copy explicit (np.copy(...))")
                    continue
                done[j.name] = leaf
                if leaf != j:
                    self.protect(env, j.name, n)
                    self._copy(j.name, leaf)
            env[n] = self._rebuild(tree, iter(names))

    def _run_loop_body(self, stmts, node):
        self.run_body(stmts)
        if self.frame.returned is not None:
            raise self.error(node, "return inside a loop is not supported",
                             construct="return (inside a loop)",
                             hint="store the value, break, and return after the loop")

    def stmt_For(self, node):
        N = _N()
        if node.orelse:
            raise self.error(node, "for ... else is not supported", construct="for/else")
        brk, body_stmts = self.lower_jumps(node)
        stmts = body_stmts if brk else node.body
        if brk:
            self.frame.env[brk] = Const(False)
            test = gast.UnaryOp(op=gast.Not(), operand=_name(brk))
            stmts = [gast.copy_location(gast.If(test=gast.copy_location(test, node), body=stmts,
                                                orelse=[]), node)]
        it = node.iter
        func = None
        if isinstance(it, gast.Call):
            func = self.expr(it.func, "f")
        obj = func.obj if isinstance(func, N.Static) else None
        # sequences of known structure: unroll
        if obj is zip or obj is enumerate or func is None or not isinstance(func, N.Static):
            value = None if obj in (zip, enumerate) else self.expr(it, "seq")
            if obj in (zip, enumerate):
                parts = [self.expr(a, "seq") for a in it.args]
                if all(isinstance(p, (N.Struct, N.Static)) for p in parts):
                    seqs = [p.items if isinstance(p, N.Struct) else
                            [self.classify(v, None) for v in p.obj] for p in parts]
                    if obj is zip:
                        items = [N.Struct("tuple", list(t)) for t in zip(*seqs)]
                    else:
                        start = self.static_value(parts[1], it) if len(parts) > 1 else 0
                        items = [N.Struct("tuple", [Const(start + i), v])
                                 for i, v in enumerate(seqs[0])]
                    return self._unroll(node, stmts, items)
                return self._index_loop(node, stmts, parts, obj)
            if isinstance(value, N.Struct):
                return self._unroll(node, stmts, value.items)
            if isinstance(value, N.Static) and isinstance(value.obj, (tuple, list)):
                return self._unroll(node, stmts, [self.classify(v, None) for v in value.obj])
            if isinstance(value, N.Static) and isinstance(value.obj, dict):
                return self._unroll(node, stmts, [self.classify(v, None) for v in value.obj])
            if isinstance(value, (Var, Const)):
                return self._index_loop(node, stmts, [value], None)
            raise self.error(node, "cannot loop over this value", construct="for")
        if obj is range or obj is N.np.arange:
            if it.keywords:
                raise self.error(it, "keyword arguments to range/np.arange in a for loop are "
                                 "not supported")
            args = [self.atom(a, "n") for a in it.args]
            if obj is N.np.arange:
                for a in args:
                    if isinstance(a, Const) and not isinstance(a.value, int):
                        raise self.error(it, "np.arange with non-integer bounds in a for loop "
                                         "is not supported", hint="use integer bounds")
            if len(args) == 1:
                start, stop, step = Const(0), args[0], Const(1)
            elif len(args) == 2:
                start, stop, step = args[0], args[1], Const(1)
            elif len(args) == 3:
                start, stop, step = args
            else:
                raise self.error(it, "range takes 1 to 3 arguments")
            return self._range_loop(node, stmts, start, stop, step, target=node.target)
        value = self.expr(it, "seq")
        if isinstance(value, N.Struct):
            return self._unroll(node, stmts, value.items)
        if isinstance(value, (Var, Const)):
            return self._index_loop(node, stmts, [value], None)
        raise self.error(node, "cannot loop over this value", construct="for")

    def _unroll(self, node, stmts, items):
        for item in items:
            self.assign(node.target, item, node)
            self.run_body(stmts)
            if self.frame.returned is not None:
                raise self.error(node, "return inside a loop is not supported",
                                 hint="store the value and return after the loop")

    def _index_loop(self, node, stmts, arrays, kind):
        N = _N()
        lens = [self.b.emit(N.by_name("len"), {"x": self.to_arg(a, node)}, base="n")
                for a in (arrays[:1] if kind is enumerate else arrays)]
        n = lens[0]
        for m in lens[1:]:
            n = self.b.emit(N.by_name("minimum"), {"x": n, "y": m}, base="n")
        start = Const(0)
        if kind is enumerate and len(arrays) > 1:
            start = self.to_arg(arrays[1], node)

        def bind(k):
            elems = [self.b.emit(N.by_name("getitem"), {"x": self.to_arg(a, node),
                                                        "index": IndexArg((k,))},
                                 base=_target_base(node.target, i))
                     for i, a in enumerate(arrays[:1] if kind is enumerate else arrays)]
            if kind is zip:
                value = N.Struct("tuple", elems)
            elif kind is enumerate:
                i = k if start == Const(0) else self.b.emit(N.by_name("add"), {"x": k, "y": start},
                                                          base="i")
                value = N.Struct("tuple", [i, elems[0]])
            else:
                value = elems[0]
            self.assign(node.target, value, node)
        return self._range_loop(node, stmts, Const(0), n, Const(1), bind=bind)

    def _range_loop(self, node, stmts, start, stop, step, target=None, bind=None):
        frame = self.frame
        loc = self.b.loc
        plan = None
        if writes_in(stmts):
            def ahead():
                tmp = self.namer.fresh("i")
                self.mem.int_vars.add(tmp)
                if isinstance(target, gast.Name):
                    frame.env[target.id] = Var(tmp)
                elif bind is not None:
                    bind(Var(tmp))
                elif target is not None:
                    self.assign(target, Var(tmp), node)
                self._run_loop_body(stmts, node)
            plan = read_ahead(self, ahead)
        carried = self._carried_setup(stmts + ([node.target] if bind else []), plan=plan,
                                      node=node)
        if isinstance(target, gast.Name):
            var = self.core_name(target.id) if target.id not in carried else \
                self.namer.fresh(target.id)
        else:
            var = self.namer.fresh("k" if bind else "i")
        self.mem.int_vars.add(var)

        def body():
            if isinstance(target, gast.Name):
                frame.env[target.id] = Var(var)
            elif bind is not None:
                bind(Var(var))
            elif target is not None:
                self.assign(target, Var(var), node)
            self._run_loop_body(stmts, node)
            self._carried_finish(carried, node)
        body_stmts, _ = self._sub_body(body)
        self.b.loc = loc
        self.b.body.append(ir.ForRange(var, start, stop, step, body_stmts, loc))

    def stmt_While(self, node):
        if node.orelse:
            raise self.error(node, "while ... else is not supported", construct="while/else")
        brk, body_stmts = self.lower_jumps(node)
        stmts = body_stmts if brk else node.body
        test = node.test
        if brk:
            self.frame.env[brk] = Const(False)
            test = gast.copy_location(gast.BoolOp(op=gast.And(), values=[
                test, gast.UnaryOp(op=gast.Not(), operand=_name(brk))]), node)
        loc = self.b.loc
        plan = None
        if writes_in(stmts):
            def ahead():
                self.expr(test, "cond")
                self._run_loop_body(stmts, node)
            plan = read_ahead(self, ahead)
        carried = self._carried_setup(stmts, plan=plan, node=node)
        cond_body, cond = self._sub_body(lambda: self.expr(test, "cond"))
        known, truth = self.static_truth(cond)
        if known and not truth:
            self.b.body += cond_body
            return
        if known:
            raise self.error(node, "while True without a data-dependent break would never end",
                             construct="while True")
        cond = self.to_arg(cond, node)

        def body():
            self._run_loop_body(stmts, node)
            self._carried_finish(carried, node)
        body_stmts2, _ = self._sub_body(body)
        self.b.loc = loc
        self.b.body.append(ir.While(cond_body, cond, body_stmts2, loc))

    # -- subscript writes ----------------------------------------------------------------------

    def assign_subscript(self, target, value, node):
        N = _N()
        base = target.value
        if not isinstance(base, gast.Name):
            raise self.error(node, "assignment into a nested subscript or attribute is not "
                             "supported", hint="write into a named array: y = ...; y[i, j] = v")
        name = base.id
        if name not in self.frame.env:
            raise self.error(node, f"assignment into {name!r}, which is a global (or closure) "
                             "array: mutating global state is not supported",
                             construct=f"{name}[...] = ...",
                             hint="copy it first (y = np.copy(" + name + ")) or pass it in as an "
                             "argument and return the new value")
        current = self.frame.env[name]
        if isinstance(current, Stale):
            raise stale_error(self, node, current)
        if isinstance(current, N.Struct):
            if isinstance(target.slice, gast.Slice):
                raise self.error(node, "slice assignment into a list is not supported")
            key = self.static_value(self.expr(target.slice, name), target.slice,
                                    "an index into a list/dict")
            items = list(current.items)
            if current.kind == "dict":
                keys = list(current.keys)
                if key in keys:
                    items[keys.index(key)] = value
                else:
                    keys.append(key)
                    items.append(value)
                order = sorted(range(len(keys)), key=lambda i: keys[i])
                self.frame.env[name] = N.Struct("dict", [items[i] for i in order],
                                                [keys[i] for i in order])
            else:
                items[key] = value
                self.frame.env[name] = N.Struct(current.kind, items)
            return
        x = self.to_arg(current, node)
        index = self.index(target.slice, name)
        v = self.to_arg(value, node)
        self.mem.write(x, index, v, node, name)

    # -- local functions -----------------------------------------------------------------------

    def stmt_FunctionDef(self, node):
        if node.decorator_list:
            raise self.error(node, "decorators on a nested function are not supported",
                             construct=f"@... def {node.name}",
                             hint="define the decorated function at module level")
        for n in gast.walk(node):
            if isinstance(n, (gast.Yield, gast.YieldFrom)):
                raise self.error(n, "unsupported: generator (yield)",
                                 hint="return the values instead (a list or tuple)")
        defaults = [self.expr(d, "default") for d in node.args.defaults]
        self.frame.env[node.name] = LocalFunction(node, self.frame, defaults)

    def expr_Lambda(self, node, base):
        defaults = [self.expr(d, "default") for d in node.args.defaults]
        return LocalFunction(node, self.frame, defaults)

    def call_local(self, fn, args, kwargs, node):
        N = _N()
        depth = sum(1 for f in self.frames if getattr(f, "local_fn", None) is fn.node)
        if depth:
            raise self.error(node, f"recursive call to {fn.name} is not supported",
                             construct=f"{fn.name}(...)", hint="rewrite the recursion as a loop")
        a = fn.node.args
        if a.vararg is not None or a.kwarg is not None:
            raise self.error(node, "*args/**kwargs in a nested function are not supported")
        names = [p.id for p in a.posonlyargs + a.args]
        if len(args) > len(names):
            raise self.error(node, f"{fn.name}() takes {len(names)} arguments", cls=TranspileError)
        values = dict(zip(names, args))
        values.update(kwargs)
        defaults = dict(zip(names[len(names) - len(fn.defaults):], fn.defaults))
        for n in names:
            if n not in values:
                if n not in defaults:
                    raise self.error(node, f"{fn.name}() missing argument {n!r}",
                                     cls=TranspileError)
                values[n] = defaults[n]
        parent = self.frame if fn.frame in self.frames else fn.frame
        frame = N.Frame(parent.parsed, parent.resolver)
        frame.env = dict(parent.env)
        frame.env.update(values)
        frame.local_fn = fn.node
        self.frames.append(frame)
        saved_loc = self.b.loc
        try:
            if isinstance(fn.node, gast.Lambda):
                result = self.expr(fn.node.body, "lam")
            else:
                self.run_body(fn.node.body)
                result = frame.returned if frame.returned is not None else Const(None)
        finally:
            self.frames.pop()
            self.b.loc = saved_loc
        return result

    # -- comprehensions ------------------------------------------------------------------------

    def expr_ListComp(self, node, base):
        N = _N()
        frame = self.frame
        saved_env = dict(frame.env)
        out = []

        def gen(k):
            if k == len(node.generators):
                out.append(self.expr(node.elt, base))
                return
            g = node.generators[k]
            if g.is_async:
                raise self.error(node, "async comprehensions are not supported")
            items = self._static_items(g.iter, node)
            for item in items:
                self.assign(g.target, item, node)
                ok = True
                for cond in g.ifs:
                    known, truth = self.static_truth(self.expr(cond, "cond"))
                    if not known:
                        raise self.error(cond, "a filter on array data in a list comprehension "
                                         "is not supported", hint="use np.where or a mask")
                    ok = ok and truth
                if ok:
                    gen(k + 1)
        try:
            gen(0)
        finally:
            frame.env = saved_env
        return N.Struct("list", out)

    def _static_items(self, it, node):
        N = _N()
        if isinstance(it, gast.Call):
            func = self.expr(it.func, "f")
            obj = func.obj if isinstance(func, N.Static) else None
            if obj in (range, N.np.arange):
                args = [self.static_value(self.expr(a, "n"), a, "the length of a list "
                                          "comprehension") for a in it.args]
                return [Const(i) for i in range(*args)]
            if obj in (zip, enumerate):
                parts = [self._static_items(a, node) if obj is zip or i == 0 else
                         self.static_value(self.expr(a, "n"), a) for i, a in enumerate(it.args)]
                if obj is zip:
                    return [N.Struct("tuple", list(t)) for t in zip(*parts)]
                start = parts[1] if len(parts) > 1 else 0
                return [N.Struct("tuple", [Const(start + i), v]) for i, v in enumerate(parts[0])]
        value = self.expr(it, "seq")
        if isinstance(value, N.Struct):
            return value.items
        if isinstance(value, N.Static) and isinstance(value.obj, (tuple, list, range)):
            return [self.classify(v, None) for v in value.obj]
        raise self.error(it, "a list comprehension needs a sequence whose length is known when "
                         "the code is generated (a tuple/list, or range(n) with a static n)",
                         construct="[... for ... in <array>]",
                         hint="pass the length as a static int argument, or use a for loop "
                         "writing into an array: y = np.zeros(n); for i in range(n): y[i] = ...")


def N_Static():
    return _N().Static


def _tree_eq(a, b):
    if a == "leaf" or b == "leaf":
        return a == b
    if a[0] != b[0]:
        return False
    if a[0] == "static":
        x, y = a[2], b[2]
        if x is y:
            return True
        S = _N().Static
        return isinstance(x, S) and isinstance(y, S) and (x.obj is y.obj or (
            ir.is_literal(x.obj) and type(x.obj) is type(y.obj) and x.obj == y.obj))
    return a[1:3] == b[1:3] and len(a[3]) == len(b[3]) and all(
        _tree_eq(x, y) for x, y in zip(a[3], b[3]))


def _target_base(target, i):
    if isinstance(target, gast.Name):
        return target.id
    if isinstance(target, gast.Tuple) and i < len(target.elts) and \
            isinstance(target.elts[i], gast.Name):
        return target.elts[i].id
    return "item"
