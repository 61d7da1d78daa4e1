"""Batching rules: what `vmap` does with one primitive when some arguments carry a batch axis.

This module is the one place the primitive tables take their rules from
(`from transpile.primitives import batching_rules as BR`, then `batch=BR.elementwise`, ...).
The rules themselves live in

  primitives/batching/base.py                  `Rule`, `NoRule` and the helpers every rule shares (the
                                    rule protocol: rank(s, eqn) and batch(s, eqn))
  primitives/batching/array_rules.py           elementwise, reductions, structure, indexing, creation,
                                    shape queries
  primitives/batching/product_rules.py         dot, matmul, inner, outer, einsum, solve, det, inv
  primitives/batching/adjoint_helper_rules.py  the runtime helpers that derivative code calls, and the
                                    rt.batch_* helpers' own rows
"""
from transpile.primitives.batching.base import (  # noqa: F401  (re-exported)
    NON_ARRAY, NoRule, Rule, _const, _max_rank, _only_batched, _shift, args_with)
from transpile.primitives.batching.array_rules import (  # noqa: F401  (re-exported)
    creation, creation_batch, creation_like, creation_like_batch, creation_like_rank,
    creation_rank, cumulative, elementwise, elementwise_batch, elementwise_rank, index,
    index_batch, index_rank, query, query_batch, query_rank, reduction, reduction_batch,
    reduction_rank, structure, structure_batch, structure_rank)
from transpile.primitives.batching.product_rules import (  # noqa: F401  (re-exported)
    linalg, product_batch, product_rank)
from transpile.primitives.batching.adjoint_helper_rules import (  # noqa: F401  (re-exported)
    batch_helper, batch_helper_batch, batch_helper_rank, helper, helper_batch, helper_rank)
