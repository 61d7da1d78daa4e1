"""Locals that are None on some paths only: a value plus a flag.

    best = None                              best = 0; best_is_none = True
    for i in range(n):                       for i in range(n):
        if best is None or d[i] < best:          if best_is_none or d[i] < best:
            best = d[i]                              best = d[i]; best_is_none = False
    return best                              if best_is_none: raise TypeError(...)
                                             return best

Compiled code gives every name one type, and None has none in common with a number or an
array. So a local variable of the user's function that is bound to `None` and also to
something else is rewritten on the parsed tree, before normalizing (every transform sees the
same code): `x = None` binds a placeholder (0, or False where the variable also holds
booleans; the joins of optimize/specialize_control.py widen a 0 to any number or array) and
sets the flag `x_is_none`; every other binding clears it; `x is None` / `x is not None` read the
flag. A read of the variable where it may still be None (not under `x is not None and ...`,
`x is None or ...`, `... if x is not None else ...`, `if x is not None:` or the `else` of
`if x is None:`) is preceded by a check that raises TypeError naming the variable when the flag
is set: Python would pass the None on (or fail on it); compiled code cannot hold it, and never
hands out the placeholder.

Left alone (the earlier errors stay): arguments (their `is None` is decided from the call),
names a nested function or lambda reads, names bound by `:=`, `del`, `except ... as`, names
that also hold a tuple, list, dict or string literal, and a `while` test that reads one.
"""
import gast

_NOT_VALUES = (gast.Tuple, gast.List, gast.Dict, gast.Set, gast.ListComp, gast.DictComp,
               gast.SetComp, gast.JoinedStr)


def rewrite_optional_locals(node, names):
    """Rewrite `node` (a gast.FunctionDef) in place; `names` are the names already used in it
    (the flags get fresh ones). Returns the flags made (empty when nothing was rewritten)."""
    if not isinstance(node, gast.FunctionDef):
        return {}
    found = _Survey(node)
    cands = found.candidates()
    if not cands:
        return {}
    flags = {}
    for n in sorted(cands):
        flag = f"{n}_is_none"
        k = 2
        while flag in names or flag in flags.values():
            flag, k = f"{n}_is_none{k}", k + 1
        flags[n] = flag
    placeholder = {n: (False if n in found.bools else 0) for n in cands}
    _Rewriter(flags, placeholder).block_in_place(node.body, frozenset())
    gast.fix_missing_locations(node)
    return flags


class _Survey:
    """Where each local name is bound to None, bound otherwise, and what rules it out."""

    def __init__(self, fn):
        a = fn.args
        self.params = {x.id for x in a.posonlyargs + a.args + a.kwonlyargs if
                       isinstance(x, gast.Name)}
        self.params |= {x.id for x in (a.vararg, a.kwarg) if isinstance(x, gast.Name)}
        self.none, self.other, self.excluded, self.bools = set(), set(), set(), set()
        for st in fn.body:
            self.stmt(st)

    def candidates(self):
        return (self.none & self.other) - self.excluded - self.params

    def stmt(self, st):
        if isinstance(st, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            self.excluded |= _all_names(st)        # read or bound by a nested scope
            self.other.add(st.name)
            return
        if isinstance(st, (gast.Global, gast.Nonlocal)):
            self.excluded |= set(st.names)
            return
        if isinstance(st, gast.Delete):
            self.excluded |= _all_names(st)
            return
        if isinstance(st, gast.Assign):
            is_none = isinstance(st.value, gast.Constant) and st.value.value is None
            for t in st.targets:
                names = _stored(t)
                if is_none and isinstance(t, gast.Name):
                    self.none.add(t.id)
                else:
                    self.other |= names
                    self._note_value(names, st.value, whole=isinstance(t, gast.Name))
        elif isinstance(st, (gast.AugAssign, gast.AnnAssign, gast.For, gast.AsyncFor)):
            self.other |= _stored(st.target)
            if isinstance(st, gast.AnnAssign):
                self.excluded |= _stored(st.target)
        elif isinstance(st, (gast.With, gast.AsyncWith)):
            for item in st.items:
                if item.optional_vars is not None:
                    self.other |= _stored(item.optional_vars)
        elif isinstance(st, gast.Try):
            for h in st.handlers:
                if h.name is not None:
                    self.excluded |= _all_names(h.name)
        for field, value in gast.iter_fields(st):
            if field in ("body", "orelse", "finalbody"):
                for s in value:
                    self.stmt(s)
            elif field == "handlers":
                for h in value:
                    for s in h.body:
                        self.stmt(s)
            else:
                for e in _exprs(value):
                    self.expr(e)
        if isinstance(st, gast.While):
            self.excluded |= _loads(st.test)

    def _note_value(self, names, value, whole):
        if not whole:
            return
        if isinstance(value, _NOT_VALUES) or isinstance(value, gast.Constant) and \
                isinstance(value.value, (str, bytes)):
            self.excluded |= names
        elif isinstance(value, gast.Constant) and isinstance(value.value, bool) or \
                isinstance(value, gast.Compare) and not _none_test_name(value) or \
                isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
            self.bools |= names

    def expr(self, e):
        for sub in gast.walk(e):
            if isinstance(sub, gast.NamedExpr):
                self.excluded |= _stored(sub.target)
            elif isinstance(sub, gast.Lambda):
                self.excluded |= _all_names(sub)


class _Rewriter:
    def __init__(self, flags, placeholder):
        self.flags, self.placeholder = flags, placeholder
        self.of_flag = {f: n for n, f in flags.items()}

    def block_in_place(self, body, guarded):
        body[:] = self.block(body, guarded)

    def block(self, body, guarded):
        out = []
        for st in body:
            out += self.stmt(st, guarded)
        return out

    def stmt(self, st, guarded):
        if isinstance(st, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return [st]
        if isinstance(st, gast.Assign) and isinstance(st.value, gast.Constant) and \
                st.value.value is None and any(isinstance(t, gast.Name) and t.id in self.flags
                                               for t in st.targets):
            return self._none_binding(st)
        # the tests first (`x is None` -> the flag), then the reads that may see None
        for field, value in gast.iter_fields(st):
            if field not in ("body", "orelse", "finalbody", "handlers"):
                setattr(st, field, _replace_tests(value, self.flags))
        checks = [self._check(st, n) for n in sorted(self._unguarded(st, guarded))]
        body_guard = orelse_guard = guarded
        if isinstance(st, gast.If):
            test = _flag_test(st.test, self.of_flag)
            if test is not None:
                name, negated = test
                # `if x is not None:` -> the body sees a value; `if x is None:` -> the else
                if negated and not _binds_none(st.body, name):
                    body_guard = guarded | {name}
                if not negated and not _binds_none(st.orelse, name):
                    orelse_guard = guarded | {name}
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(st, field, None), list):
                g = body_guard if field == "body" else orelse_guard if field == "orelse" \
                    else guarded
                setattr(st, field, self.block(getattr(st, field), g - _bound_in(st)))
        for h in getattr(st, "handlers", None) or []:
            h.body = self.block(h.body, guarded - _bound_in(st))
        cleared = [n for n in sorted(_direct_stores(st)) if n in self.flags]
        if isinstance(st, (gast.For, gast.AsyncFor)):
            st.body = [self._set(st, n, False) for n in cleared] + st.body
            return checks + [st]
        return checks + [st] + [self._set(st, n, False) for n in cleared]

    def _none_binding(self, st):
        out = []
        rest = [t for t in st.targets if not (isinstance(t, gast.Name) and t.id in self.flags)]
        if rest:
            out.append(gast.copy_location(gast.Assign(targets=rest, value=st.value,
                                                      type_comment=None), st))
        for t in st.targets:
            if isinstance(t, gast.Name) and t.id in self.flags:
                value = gast.Constant(value=self.placeholder[t.id], kind=None)
                out.append(gast.copy_location(gast.Assign(targets=[_name(t.id, gast.Store())],
                                                          value=value, type_comment=None), st))
                out.append(self._set(st, t.id, True))
        return out

    def _set(self, where, name, value):
        return gast.copy_location(gast.Assign(
            targets=[_name(self.flags[name], gast.Store())],
            value=gast.Constant(value=value, kind=None), type_comment=None), where)

    def _check(self, where, name):
        message = (f"'{name}' is None here: compiled code keeps a variable that is None on some "
                   f"paths as a value and a flag, so it can test `{name} is None` but cannot "
                   "hand the None on (test it first, or give it a value)")
        err = gast.Call(func=_name("TypeError", gast.Load()),
                        args=[gast.Constant(value=message, kind=None)], keywords=[])
        raise_ = gast.Raise(exc=err, cause=None)
        return gast.copy_location(gast.If(test=_name(self.flags[name], gast.Load()),
                                          body=[gast.copy_location(raise_, where)], orelse=[]),
                                  where)

    def _unguarded(self, st, guarded):
        found = set()
        for field, value in gast.iter_fields(st):
            if field in ("body", "orelse", "finalbody", "handlers"):
                continue
            for e in _exprs(value):
                found |= _reads(e, guarded, self.flags, self.of_flag)
        if isinstance(st, gast.AugAssign) and isinstance(st.target, gast.Name) and \
                st.target.id in self.flags and st.target.id not in guarded:
            found.add(st.target.id)      # x += 1 reads x
        return found


def _reads(e, guarded, flags, of_flag):
    """The candidate names `e` reads where they may still be None."""
    if isinstance(e, gast.Name):
        return {e.id} if isinstance(e.ctx, gast.Load) and e.id in flags and \
            e.id not in guarded else set()
    if isinstance(e, gast.BoolOp):
        out, g = set(), set(guarded)
        for v in e.values:
            out |= _reads(v, frozenset(g), flags, of_flag)
            test = _flag_test(v, of_flag)
            if test is not None:
                name, negated = test
                # `x is None or <here x is a value>`, `x is not None and <here too>`
                if isinstance(e.op, gast.Or) != negated:
                    g.add(name)
        return out
    if isinstance(e, gast.IfExp):
        out = _reads(e.test, guarded, flags, of_flag)
        test = _flag_test(e.test, of_flag)
        body_g = orelse_g = guarded
        if test is not None:
            name, negated = test
            if negated:
                body_g = guarded | {name}
            else:
                orelse_g = guarded | {name}
        return out | _reads(e.body, body_g, flags, of_flag) | \
            _reads(e.orelse, orelse_g, flags, of_flag)
    out = set()
    for child in gast.iter_child_nodes(e):
        out |= _reads(child, guarded, flags, of_flag)
    return out


def _replace_tests(value, flags):
    """`x is None` -> x_is_none, `x is not None` -> not x_is_none (x a candidate)."""
    if isinstance(value, list):
        return [_replace_tests(v, flags) for v in value]
    if not isinstance(value, gast.AST) or isinstance(value, gast.stmt):
        return value
    name = _none_test_name(value)
    if name is not None and name[0] in flags:
        flag = gast.copy_location(_name(flags[name[0]], gast.Load()), value)
        if name[1]:
            return gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=flag), value)
        return flag
    for field, v in gast.iter_fields(value):
        setattr(value, field, _replace_tests(v, flags))
    return value


def _none_test_name(e):
    """(name, negated) of `name is None` / `name is not None` (either order), or None."""
    if not (isinstance(e, gast.Compare) and len(e.ops) == 1 and
            isinstance(e.ops[0], (gast.Is, gast.IsNot))):
        return None
    a, b = e.left, e.comparators[0]
    if _is_none(b) and isinstance(a, gast.Name):
        return a.id, isinstance(e.ops[0], gast.IsNot)
    if _is_none(a) and isinstance(b, gast.Name):
        return b.id, isinstance(e.ops[0], gast.IsNot)
    return None


def _flag_test(e, of_flag):
    """(name, negated) where `e` is a rewritten test: `x_is_none` or `not x_is_none`."""
    if isinstance(e, gast.Name) and e.id in of_flag:
        return of_flag[e.id], False
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not) and \
            isinstance(e.operand, gast.Name) and e.operand.id in of_flag:
        return of_flag[e.operand.id], True
    return None


def _is_none(e):
    return isinstance(e, gast.Constant) and e.value is None


def _binds_none(body, name):
    return any(isinstance(s, gast.Assign) and _is_none(s.value) and
               any(isinstance(t, gast.Name) and t.id == name for t in s.targets)
               for st in body for s in gast.walk(st))


def _bound_in(st):
    """Names the statement itself binds (a loop target): not guarded inside it."""
    if isinstance(st, (gast.For, gast.AsyncFor)):
        return _stored(st.target)
    return set()


def _direct_stores(st):
    if isinstance(st, gast.Assign):
        return set().union(*(_stored(t) for t in st.targets))
    if isinstance(st, (gast.AugAssign, gast.For, gast.AsyncFor)):
        return _stored(st.target)
    if isinstance(st, (gast.With, gast.AsyncWith)):
        return set().union(*(_stored(i.optional_vars) for i in st.items
                             if i.optional_vars is not None))
    return set()


def _stored(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name) and
            isinstance(n.ctx, gast.Store)}


def _loads(e):
    return {n.id for n in gast.walk(e) if isinstance(n, gast.Name)}


def _all_names(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _exprs(value):
    """The expression nodes of a statement's field (a node, a list of them, or neither)."""
    if isinstance(value, list):
        return [v for v in value if isinstance(v, gast.AST) and not isinstance(v, gast.stmt)]
    if isinstance(value, gast.AST) and not isinstance(value, gast.stmt):
        return [value]
    return []


def _name(ident, ctx):
    return gast.Name(id=ident, ctx=ctx, annotation=None, type_comment=None)
