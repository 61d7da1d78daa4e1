"""First-order optimizers in the style of ``jax.example_libraries.optimizers``.

Each constructor returns ``(opt_init, opt_update, get_params)``::

    opt_init, opt_update, get_params = adam(1e-3)
    state = opt_init(params)                   # params: any pytree of float arrays
    state = opt_update(step, grads, state)     # grads: same structure as params
    params = get_params(state)

A state is a plain tuple of pytrees, ``(params, *slots)``, holding NumPy arrays only, so a jit can
flatten it. Updates never mutate their inputs and keep each parameter's dtype.
``step_size`` is a number or a schedule ``step -> learning rate``.
"""
import numpy as np

from transpile.pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["sgd", "momentum", "adam", "make_schedule", "constant", "exponential_decay",
           "piecewise_constant"]


# ---------------------------------------------------------------- schedules

def constant(step_size):
    return lambda step: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    return lambda step: step_size * decay_rate ** (step / decay_steps)


def piecewise_constant(boundaries, values):
    """``values[i]`` for steps before ``boundaries[i]``; the last value afterwards."""
    boundaries, values = list(boundaries), list(values)
    if len(values) != len(boundaries) + 1:
        raise ValueError("piecewise_constant: need len(values) == len(boundaries) + 1, got "
                         f"{len(values)} values and {len(boundaries)} boundaries")
    return lambda step: values[int(np.searchsorted(boundaries, step, side="right"))]


def make_schedule(step_size):
    """A callable ``step -> lr`` from a number or a callable."""
    if callable(step_size):
        return step_size
    if isinstance(step_size, (int, float, np.integer, np.floating)) and not isinstance(step_size, bool):
        return constant(step_size)
    raise TypeError(f"step_size must be a number or a callable step -> lr, got {type(step_size).__name__}")


# ---------------------------------------------------------------- optimizers

def sgd(step_size):
    """Plain gradient descent: ``x <- x - lr * g``."""
    lr = make_schedule(step_size)

    def update(step, g, x):
        return (x - lr(step) * g,)

    return _optimizer(0, update)


def momentum(step_size, mass=0.9):
    """Heavy-ball momentum: ``v <- mass * v + g``, ``x <- x - lr * v``."""
    lr = make_schedule(step_size)

    def update(step, g, x, v):
        v = mass * v + g
        return x - lr(step) * v, v

    return _optimizer(1, update)


def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba 2015) with bias-corrected moments."""
    lr = make_schedule(step_size)

    def update(step, g, x, m, v):
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * np.square(g) + b2 * v
        m_hat = m / (1 - b1 ** (step + 1))
        v_hat = v / (1 - b2 ** (step + 1))
        return x - lr(step) * m_hat / (np.sqrt(v_hat) + eps), m, v

    return _optimizer(2, update)


# ---------------------------------------------------------------- plumbing

def _optimizer(num_slots, leaf_update):
    """Build the triple from a per-leaf rule ``(step, g, x, *slots) -> (x, *slots)``.

    The state is ``(params, slot_1, ..., slot_k)``, each a pytree like params; slots start at 0.
    """

    def opt_init(params):
        leaves, treedef = tree_flatten(params)
        leaves = [_param_leaf(x, i) for i, x in enumerate(leaves)]
        params = tree_unflatten(treedef, leaves)
        slots = [tree_map(np.zeros_like, params) for _ in range(num_slots)]
        return (params, *slots)

    def opt_update(step, grads, state):
        if not isinstance(state, tuple) or len(state) != num_slots + 1:
            raise TypeError(f"opt_update: state must be the tuple returned by opt_init "
                            f"(length {num_slots + 1}), got {type(state).__name__}")
        step = int(step)
        params_leaves, treedef = tree_flatten(state[0])
        grad_leaves, grad_def = tree_flatten(grads)
        if grad_def != treedef:
            raise ValueError(f"opt_update: grads structure {grad_def} does not match params {treedef}")
        slot_leaves = [tree_flatten(s)[0] for s in state[1:]]
        rows = []           # per leaf: (x, *slots) updated (written so that jit(step) compiles)
        for i, x in enumerate(params_leaves):
            g = np.asarray(grad_leaves[i])
            slots = [leaves[i] for leaves in slot_leaves]
            if g.shape != np.shape(x):
                raise ValueError(f"opt_update: gradient leaf {i} has shape {g.shape}, "
                                 f"parameter has shape {np.shape(x)}")
            # keep float32 params float32
            rows.append([np.asarray(v, dtype=x.dtype) for v in leaf_update(step, g, x, *slots)])
        return tuple(tree_unflatten(treedef, [row[k] for row in rows]) for k, _ in enumerate(state))

    def get_params(state):
        return state[0]

    return opt_init, opt_update, get_params


def _param_leaf(x, i):
    x = np.array(x)                                           # a private copy
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"opt_init: parameters must be floating-point arrays; leaf {i} has "
                        f"dtype {x.dtype} (convert it, e.g. np.asarray(x, dtype=np.float32))")
    return x
