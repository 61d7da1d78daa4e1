"""Instantiating rule templates: a rule is a Python expression (see primitives/registry.py);
it is parsed once and read by the normalizer with the rule's names bound to atoms."""
import functools

import gast
import numpy as np

import transpile_runtime as runtime
from transpile.core.ir import Const, TupleArg, Var
from transpile.frontend.normalize.normalizer import Frame, Normalizer, Struct


class _TemplateResolver:
    """Names in templates outside the rule's own resolve to np and rt only."""
    NAMES = {"np": np, "rt": runtime}

    def lookup(self, name):
        if name in self.NAMES:
            return self.NAMES[name], None
        raise NameError(name)


@functools.lru_cache(maxsize=None)
def _parse(text):
    tree = gast.parse(text.strip(), mode="eval") if hasattr(gast, "parse") else None
    return tree.body


def _env_value(v):
    if isinstance(v, TupleArg):
        return Struct("tuple", list(v.items))
    return v


def instantiate(text, env, namer, builder, loc=None, base="t"):
    """Emit the equations of template `text` into builder; returns the result atom."""
    node = _parse(text)
    norm = Normalizer(namer, builder)
    frame = Frame(None, _TemplateResolver(), env={k: _env_value(v) for k, v in env.items()})
    norm.frames.append(frame)
    saved = builder.loc
    builder.loc = loc
    try:
        value = norm.expr(node, base)
        result = norm.to_arg(value, None)
    finally:
        builder.loc = saved
    if norm.free or norm.statics:
        raise RuntimeError(f"rule template {text!r} reads data outside its arguments")
    return result


def rule_env(eqn, extra=None):
    """Template names for an equation: its arguments (defaults filled in) and `ans`."""
    env = {}
    for p in eqn.prim.params:
        if p.name in eqn.args:
            env[p.name] = eqn.args[p.name]
        elif p.kind == "var":
            env[p.name] = TupleArg(())
        else:
            env[p.name] = Const(p.default)
    env["ans"] = Var(eqn.out)
    if extra:
        env.update(extra)
    return env
