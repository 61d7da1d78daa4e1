"""Rows for NumPy's functions (and Python's math module), by domain."""
