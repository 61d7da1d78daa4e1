"""What generated code calls at run time. Generated files do `import transpile_runtime as rt`."""
from .broadcasting import (astype, grad_like, broadcast_like, cast_like, clip_mask, extremum_mask,
                                  identity, mT, reduced_count, select_weight, stop_gradient,
                                  sum_grad, unbroadcast)
from .adjoints import (check_scalar_output, concat_pad, concat_vjp, dot_vjp_left,
                              dot_vjp_right, getitem_vjp, matmul_vjp_left, matmul_vjp_right,
                              put_axis, take_axis, transpose_inverse)
from . import random  # noqa: F401  (rt.random.normal: transpile.random in generated code)
from .helpers import (attr_c_contiguous, numpy_scalar, attr_dtype, attr_ndim, attr_shape, attr_size, check_norm_ord,
                             generator_draw, legacy_draw, tuple_concat,
                             cumsum_vjp, diagonal_vjp, expand_last, getitem, log_base,
                             tile_vjp, transpose_back)
from .collectives import (all_gather, all_gather_vjp, axis_index, axis_size,
                                 extremum_share, pmax, pmean, pmin, psum)
from .batching import (basis_like, batch_align, batch_any, batch_axes, batch_shift_axes,
    batch_basis_like, batch_broadcast, batch_broadcast_like, batch_check_scalar_output,
    batch_extremum_mask, batch_getitem_vjp, batch_getitem_vjp_back, batch_jac_columns,
    batch_jac_columns_vjp, batch_jac_rows, batch_not, batch_parts, batch_reduced_count, batch_row, batch_row_vjp,
    batch_stacked, batch_set, batch_slots, batch_same_shape, batch_squeeze, batch_store, batch_store_tangent,
    batch_sum_grad, batch_sum_grad_vjp, batch_unbroadcast, batch_without_row, jac_columns,
    jac_columns_to, jac_columns_vjp, jac_rows)
from .tape import (Tape, adjoint_like, assign, cast_into, float_part,  # noqa: F401
                                    setitem, tape_pop, trip_count, write_back,
                                    write_in_place, compute_into, shape_like, shape_only,
                                    written_part,
                                    added_to_zero, add_at, if_array, setitem_if_array,
                                    write_in_place_if_array)
from .special import (beta, betainc, betaln, digamma, gammainc, gammaincc, erf, erfc, erfinv, expit, gamma, gammaln, i0,
                                      i0e, i1, i1_over_x, i1e, i1e_over_x, log_ndtr, log_softmax,
                                      logit, logsumexp, ndtr, polygamma, softmax, xlog1py, xlogy)
from .fft_adjoints import fft_adjoint, fft_forward
from .distributions import (
    beta_cdf, beta_logpdf, beta_pdf, dirichlet_logpdf, dirichlet_pdf, gamma_cdf, gamma_logpdf,
    gamma_pdf, mvn_entropy, mvn_logpdf, mvn_pdf, norm_cdf, norm_logcdf, norm_logpdf, norm_logsf, norm_pdf,
    norm_sf, poisson_cdf, poisson_logpmf, poisson_pmf, t_cdf, t_logcdf, t_logpdf, t_pdf)
from .debugging import (batch_check_assert, check_assert, debug_breakpoint,  # noqa: F401,E402
                        debug_print, debug_printf, raise_error)
from .array_adjoints import (diff_vjp, joined_array, joined_array_vjp, joined_pad, joined_vjp,  # noqa: E402
                                              gradient_apply, gradient_array, gradient_vjp, select_part,
                                              kron_vjp_left, kron_vjp_right, linspace_part,
                                              linspace_part_vjp, pad_vjp, put_along, repeat_vjp, roll_back,
                                              sort_perm, split_part, split_part_vjp, take_along,
                                              tensordot_vjp, einsum_scatter, vander_slope)
from .complex_parts import (abs_factor, abs_factor_jvp, abs_factor_vjp, angle_jvp,  # noqa: E402
                                             angle_vjp, diag_vjp, match_complex)
from .linalg_adjoints import (check_real_eigh, check_real_linalg, check_svd_vectors, copyltu, copyltu_t, eig_values,  # noqa: E402
                                               eig_vectors, eigh_values, eigh_vectors, eye_like, gap_inverse,
                                               gap_inverse_jvp, gap_inverse_vjp, norm_jvp,
                                               norm_second,
                                               norm_vjp, phi, qr_q, qr_q_jvp, qr_r, qr_r_jvp,
                                               refuse_norm_second, refuse_norm_third,
                                               slogdet_logabs, slogdet_sign,
                                               svd_u, svd_values, svd_vh, sym, tri_read,
                                               tri_read_t, lstsq_rank, lstsq_residuals, lstsq_x,
                                               residual_weights, residual_weights_t)
from .stats_adjoints import (signal_convolve, signal_correlate, signal_crop, signal_full_ct,
                             conv_pad_width, cov_norm, cov_obs_part,  # noqa: E402
                              cov_obs_vjp, cov_weights, interp_index,
                              meshgrid_part, polyval_vjp,
                              quantile_jvp, quantile_mask, quantile_vjp, take_vjp, three_vectors, weights_along,
                              weights_back)
from . import custom_rules  # noqa: F401,E402
from .numpy_rows import (builtin_round, complex_of, diff_extend, diff_extend_jvp,  # noqa: E402
                         diff_extend_vjp, histogram_counts, histogram_edges, outer_expand,
                         running_extremum_jvp, running_extremum_vjp, running_source, sinc_at_zero,
                         triangle_part,
                         unravel_part, item)
