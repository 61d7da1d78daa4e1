"""jit's driver: specializations, backends, the per-call dispatch and GPU programs."""
