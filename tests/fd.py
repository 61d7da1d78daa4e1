"""Central finite differences in float64: the oracle for derivative tests."""
import numpy as np


def numerical_grad(f, args, argnum=0, eps=1e-6):
    args = [np.array(a, dtype=np.float64) if isinstance(a, (np.ndarray, float)) else a
            for a in args]
    x = args[argnum]
    g = np.zeros_like(x, dtype=np.float64)
    flat = g.reshape(-1)
    for i in range(x.size):
        xp = x.copy().reshape(-1)
        xm = x.copy().reshape(-1)
        xp[i] += eps
        xm[i] -= eps
        ap, am = list(args), list(args)
        ap[argnum] = xp.reshape(x.shape)
        am[argnum] = xm.reshape(x.shape)
        flat[i] = (np.sum(f(*ap)) - np.sum(f(*am))) / (2 * eps)
    return g
