"""Batching rules for the helpers of Jacobians built as one generated function
(rt.basis_like, rt.jac_columns, rt.jac_rows): vmap(jacfwd(f)), vmap(jacrev(f)) and a Jacobian
inside a vmapped function stay array code instead of a loop over the batch."""
from transpile.core.ir import Const
from transpile.primitives.batching.rules import NoRule, Rule


def _basis_batch(s, eqn):
    # the basis depends only on the shape of one example: the same for every example
    return s.final("batch_basis_like", {"x": eqn.args["x"]}, batched=False,
                   rank=None if s.r(eqn.args["x"]) is None else s.r(eqn.args["x"]) + 1)


def _basis_rank(s, eqn):
    r = s.r(eqn.args["x"])
    return None if r is None else r + 1


def _columns_batch(s, eqn):
    cols, x = eqn.args["cols"], eqn.args["x"]
    if not s.b(cols):
        raise NoRule("only x is batched")
    return s.final("batch_jac_columns", {"cols": cols, "x": x, "x_batched": Const(s.b(x))})


def _columns_rank(s, eqn):
    rc, rx = s.r(eqn.args["cols"]), s.r(eqn.args["x"])
    return None if rc is None or rx is None else rc - 1 + rx


def _rows_batch(s, eqn):
    rows, out = eqn.args["rows"], eqn.args["out"]
    if not s.b(rows):
        raise NoRule("only out is batched")
    return s.final("batch_jac_rows", {"rows": rows, "out": out, "out_batched": Const(s.b(out))})


def _rows_rank(s, eqn):
    rr, ro = s.r(eqn.args["rows"]), s.r(eqn.args["out"])
    return None if rr is None or ro is None else rr - 1 + ro


basis_like = Rule("helper", _basis_batch, _basis_rank)
jac_columns = Rule("helper", _columns_batch, _columns_rank)
jac_rows = Rule("helper", _rows_batch, _rows_rank)
