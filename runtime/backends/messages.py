"""Messages compiled backend code raises for the driver to recognise (no Numba import here)."""

# raised by compiled code, before any write, when an argument it would write in place shares
# memory with another argument: transpile/compile/specialization.py then runs the NumPy
# version for that call, which writes through copies
ALIASED = "transpile: an argument written in place shares memory with another argument"

# the start of an IndexError compiled code raises, before any write, where this call must run
# the NumPy version instead (a window x[i:i + 3] past an end, where NumPy gives a shorter
# slice; equal values argsort orders as NumPy's own algorithm does): the text after it is
# "file:line | why" (transpile/compile/specialization.py warns with it)
WINDOW = "transpile window:"
