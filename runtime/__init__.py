"""What generated code calls at run time. Generated files do `import transpile_runtime as rt`."""
from transpile_runtime.broadcasting import (astype, grad_like, broadcast_like, cast_like, clip_mask, extremum_mask,
                                  identity, mT, reduced_count, select_weight, stop_gradient,
                                  sum_grad, unbroadcast)
from transpile_runtime.adjoints import (check_scalar_output, concat_pad, concat_vjp, dot_vjp_left,
                              dot_vjp_right, getitem_vjp, matmul_vjp_left, matmul_vjp_right,
                              put_axis, take_axis, transpose_inverse)
from transpile_runtime.helpers import (attr_dtype, attr_ndim, attr_shape, attr_size, check_norm_ord,
                             cumsum_vjp, diagonal_vjp, expand_last, getitem, log_base,
                             tile_vjp, transpose_back)
from transpile_runtime.collectives import (all_gather, all_gather_vjp, axis_index, axis_size,
                                 extremum_share, pmax, pmean, pmin, psum)
from transpile_runtime.batching import (batch_align, batch_axes, batch_broadcast, batch_broadcast_like,
                              batch_check_scalar_output, batch_extremum_mask, batch_parts,
                              batch_reduced_count, batch_set, batch_squeeze, batch_sum_grad,
                              batch_sum_grad_vjp, batch_unbroadcast)
from transpile_runtime.tape import Tape, adjoint_like, assign, setitem, tape_pop, trip_count
from transpile_runtime.array_adjoints import (joined_pad, joined_vjp, kron_vjp_left,  # noqa: E402
                                              kron_vjp_right, linspace_part, linspace_part_vjp,
                                              pad_vjp, put_along, repeat_vjp, roll_back,
                                              sort_perm, split_part, split_part_vjp, take_along,
                                              tensordot_vjp)
from transpile_runtime.complex_parts import (abs_factor, abs_factor_vjp, angle_jvp,  # noqa: E402
                                             angle_vjp, diag_vjp, match_complex)
from transpile_runtime.linalg_adjoints import (copyltu, copyltu_t, eig_values, eig_vectors, eigh_values,  # noqa: E402
                                               eigh_vectors, eye_like, gap_inverse,
                                               gap_inverse_jvp, gap_inverse_vjp, norm_jvp,
                                               norm_vjp, phi, qr_q, qr_q_jvp, qr_r, qr_r_jvp,
                                               refuse_eig, refuse_norm_second,
                                               refuse_svd_vectors, slogdet_logabs, slogdet_sign,
                                               svd_u, svd_values, svd_vh, sym)
from transpile_runtime import custom_rules  # noqa: F401,E402
