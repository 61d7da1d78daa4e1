"""Transforms: core Python -> core Python (reverse mode, forward mode, batching)."""
