"""The public transforms: grad and its family, vmap, jit, pmap, jacobians, custom rules."""
