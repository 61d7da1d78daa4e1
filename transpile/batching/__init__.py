"""vmap's transform over core Python: a function of one example -> a function of a batch."""
