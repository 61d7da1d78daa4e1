"""What generated code calls at run time. Generated files do `import runtime as rt`."""
from runtime.broadcasting import (astype, broadcast_like, cast_like, clip_mask, extremum_mask,
                                  identity, mT, reduced_count, select_weight, stop_gradient,
                                  sum_grad, unbroadcast)
from runtime.adjoints import (check_scalar_output, concat_pad, concat_vjp, dot_vjp_left,
                              dot_vjp_right, getitem_vjp, matmul_vjp_left, matmul_vjp_right,
                              put_axis, take_axis, transpose_inverse)
from runtime.helpers import (attr_dtype, attr_ndim, attr_shape, attr_size, check_norm_ord,
                             cumsum_vjp, diagonal_vjp, expand_last, getitem, log_base,
                             tile_vjp, transpose_back)
from runtime.collectives import (all_gather, all_gather_vjp, axis_index, axis_size,
                                 extremum_share, pmax, pmean, pmin, psum)
from runtime.batching import (batch_align, batch_axes, batch_broadcast, batch_broadcast_like,
                              batch_check_scalar_output, batch_extremum_mask, batch_parts,
                              batch_reduced_count, batch_set, batch_squeeze, batch_sum_grad,
                              batch_sum_grad_vjp, batch_unbroadcast)
from runtime.tape import Tape, adjoint_like, assign, setitem, tape_pop, trip_count
from runtime import custom_rules  # noqa: F401,E402
