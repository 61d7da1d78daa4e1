"""The primitive table. Importing this package registers every primitive."""
from transpile.primitives import (adjoint_helpers, elementwise, linalg, nondiff,  # noqa: F401
                                  reductions, structure)
from transpile.primitives import control  # noqa: F401,E402
from transpile.primitives.registry import (METHODS, Primitive, all_primitives, by_name,
                                           defmethod, defprim, lookup)
