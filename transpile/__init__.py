"""transpile: JAX-like transforms for plain Python/NumPy code, as readable generated source.

    import numpy as np
    from transpile import grad, jit, vmap

    def loss(w, x, y):
        return np.mean((x @ w - y) ** 2)

    dloss = grad(loss)          # reverse-mode source, written to a file you can open
    print(dloss.source)
"""
from transpile import primitives as _primitives  # noqa: F401  (registers the table)
from transpile.api.autodiff import generated_path, grad, jvp, show, value_and_grad, vjp
from transpile.api.arguments import FLOAT0 as float0  # noqa: F401  (as jax.dtypes.float0)
from transpile.api.jacobian import jacfwd, jacobian, jacrev
from transpile.api.jacobian_composed import hessian
from transpile.errors import NoRuleError, TranspileError, TranspileWarning, UnsupportedSyntax
from transpile.pytree import (register_pytree_node, tree_flatten, tree_leaves, tree_map,
                              tree_structure, tree_unflatten)
from transpile_runtime.broadcasting import stop_gradient

from transpile.version import __version__  # noqa: E402,F401

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian",
           "show", "generated_path", "stop_gradient", "tree_map", "tree_leaves", "tree_flatten",
           "tree_unflatten", "tree_structure", "register_pytree_node", "TranspileError",
           "TranspileWarning", "UnsupportedSyntax", "NoRuleError"]
from transpile.api.pmap import (all_gather, axis_index, axis_size, device_count,  # noqa: E402
                            devices, local_device_count, pmap, pmax, pmean, pmin, psum)
from transpile.api.vmap import vmap  # noqa: E402

__all__ += ["pmap", "psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
            "device_count", "devices", "local_device_count", "vmap"]
from transpile.api.custom_rules import check_grads, custom_jvp, custom_vjp, defrule, linearize  # noqa: E402
__all__ += ["custom_vjp", "custom_jvp", "defrule", "check_grads", "linearize"]
from transpile.api.jit import jit  # noqa: E402,F401
__all__ += ["jit"]
from transpile import optimizers, random  # noqa: E402,F401  (tp.optimizers, tp.random after `import transpile as tp`)
__all__ += ["optimizers", "random"]
from transpile.api.debugging import debug_call  # noqa: E402
__all__ += ["debug_call"]
from transpile.core.tracebacks import config  # noqa: E402  (config.update("transpile_traceback_filtering", "off"))
__all__ += ["config"]
