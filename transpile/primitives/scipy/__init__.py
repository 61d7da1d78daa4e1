"""Rows for scipy.special and scipy.stats."""
