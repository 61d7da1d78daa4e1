"""vmap's batching rules, which the rows name in their `batch=` field."""
