"""The primitive table. Importing this package registers every primitive."""
from transpile.primitives import (adjoint_helpers, collectives, elementwise, linalg,  # noqa: F401
                                  nondiff, reductions, structure)
from transpile.primitives import control  # noqa: F401,E402
from transpile.primitives import array_rows, linalg_rows, numpy_more  # noqa: F401,E402
from transpile.primitives import fft, scipy_special, scipy_stats  # noqa: F401,E402
from transpile.primitives import numpy_piecewise, numpy_products, numpy_stats  # noqa: F401,E402
from transpile.primitives import debugging  # noqa: F401,E402  (print in transformed code)
from transpile.primitives import python_math  # noqa: F401,E402  (math.sin means np.sin)
from transpile.primitives import random_rows  # noqa: F401,E402  (transpile.random)
from transpile.primitives.registry import (METHODS, Primitive, all_primitives, by_name,
                                           defmethod, defprim, lookup)
from transpile.primitives import batch_helpers  # noqa: F401,E402  (vmap's run-time helpers)
