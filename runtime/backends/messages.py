"""Messages compiled backend code raises for the driver to recognise (no Numba import here)."""

# raised by compiled code, before any write, when an argument it would write in place shares
# memory with another argument: transpile/compile/specialization.py then runs the NumPy
# version for that call, which writes through copies
ALIASED = "transpile: an argument written in place shares memory with another argument"
