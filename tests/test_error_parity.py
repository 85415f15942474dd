"""Bad input gets TensorFlow's answer: the same exception type, or the same value.

Each row runs one expression under real TensorFlow and under jaxtape (`m` is
the module). Where TF raises, jaxtape must raise the same type (TF's
`errors.*` classes map to `jaxtape.errors.*`); where TF returns, jaxtape
must return the same dtype and value. A row's optional `match` is a regex
that jaxtape's message must contain (the fix it suggests).
"""

import re

import numpy as np
import pytest

import jaxtape


def _row(fn, match=None):
    return (fn, match)


CASES = {
    # -- conversion of Python values (to_value) ---------------------------------
    "variable_assign_floats_to_int": _row(
        lambda m: m.Variable([1, 2]).assign([3.7, -4.2]), "not an integer"
    ),
    "variable_assign_integral_floats_to_int": _row(
        lambda m: m.Variable([1, 2]).assign([3.0, 4.0])
    ),
    "variable_assign_add_floats_to_int": _row(
        lambda m: m.Variable([1, 2]).assign_add([0.5, 0.5])
    ),
    "variable_assign_ints_to_float": _row(
        lambda m: m.Variable([1.0, 2.0]).assign([3, 4])
    ),
    "variable_assign_int_to_bool": _row(lambda m: m.Variable([True]).assign([1])),
    "variable_int_dtype_float_value": _row(lambda m: m.Variable([1.5], dtype=m.int32)),
    "constant_float_scalar_int": _row(lambda m: m.constant(1.5, dtype=m.int32)),
    "constant_integral_float_int": _row(lambda m: m.constant(1.0, dtype=m.int32)),
    "constant_float_list_int": _row(lambda m: m.constant([1.5], dtype=m.int32)),
    "constant_mixed_list_int": _row(lambda m: m.constant([1, 2.0], dtype=m.int32)),
    "constant_nested_float_int64": _row(
        lambda m: m.constant([[1, 2], [3.5, 4]], dtype=m.int64)
    ),
    "constant_int_to_bool": _row(lambda m: m.constant(1, dtype=m.bool)),
    "constant_float_to_bool": _row(lambda m: m.constant([1.0], dtype=m.bool)),
    "constant_bool_to_int": _row(lambda m: m.constant([True, False], dtype=m.int32)),
    "constant_bool_to_float": _row(lambda m: m.constant(True, dtype=m.float32)),
    "constant_complex_to_float": _row(lambda m: m.constant([1j], dtype=m.float32)),
    "constant_int_to_complex": _row(lambda m: m.constant([1, 2], dtype=m.complex64)),
    "constant_complex_is_complex128": _row(lambda m: m.constant([1j, 2])),
    "constant_nan_to_int": _row(lambda m: m.constant(float("nan"), dtype=m.int32)),
    "constant_numpy_floats_to_int_cast": _row(
        lambda m: m.constant(np.array([1.7, -1.7]), dtype=m.int32)
    ),
    "constant_numpy_int64_to_int32_wraps": _row(
        lambda m: m.constant(np.array([2**40 + 3]), dtype=m.int32)
    ),
    "constant_int_wraps_to_uint8": _row(lambda m: m.constant(300, dtype=m.uint8)),
    "constant_negative_wraps_to_uint8": _row(
        lambda m: m.constant([-1, 256], dtype=m.uint8)
    ),
    "constant_big_int_wraps_to_int32": _row(
        lambda m: m.constant(2**40 + 5, dtype=m.int32)
    ),
    "constant_big_int_is_int64": _row(lambda m: m.constant([2**31, 1])),
    "constant_int32_min_stays_int32": _row(lambda m: m.constant(-(2**31))),
    "constant_int_beyond_int64": _row(lambda m: m.constant(2**70), "does not fit"),
    "constant_negative_int_beyond_int64": _row(lambda m: m.constant([-(2**70)])),
    "constant_int_beyond_int64_as_int64": _row(
        lambda m: m.constant(2**63, dtype=m.int64)
    ),
    "constant_big_int_to_float": _row(lambda m: m.constant(2**70, dtype=m.float32)),
    "constant_float_beyond_float32": _row(lambda m: m.constant(1e40), "float64"),
    "constant_float_list_beyond_float32": _row(lambda m: m.constant([1.0, -1e300])),
    "constant_float_beyond_float32_asked": _row(
        lambda m: m.constant([1e40], dtype=m.float32)
    ),
    "constant_float_beyond_float16_asked": _row(
        lambda m: m.constant(1e6, dtype=m.float16)
    ),
    "constant_float_kept_as_float64": _row(lambda m: m.constant(1e40, dtype=m.float64)),
    "constant_none": _row(lambda m: m.constant(None), "unsupported type"),
    "constant_list_of_none": _row(lambda m: m.constant([None])),
    "constant_dict": _row(lambda m: m.constant({"a": 1})),
    "constant_set": _row(lambda m: m.constant({1, 2})),
    "constant_object": _row(lambda m: m.constant(object())),
    "constant_list_with_dict": _row(lambda m: m.constant([{}])),
    "constant_mixed_int_and_string": _row(lambda m: m.constant([1, "a"]), "mixed"),
    "constant_mixed_int_and_none": _row(lambda m: m.constant([[1, 2], [3, None]])),
    "constant_mixed_bool_and_int": _row(lambda m: m.constant([True, 2])),
    "constant_mixed_bool_and_float": _row(lambda m: m.constant([True, 1.5])),
    "constant_ints_and_floats_is_float32": _row(lambda m: m.constant([1, 2.5])),
    "constant_empty_list_is_float32": _row(lambda m: m.constant([[], []])),
    "constant_non_rectangular": _row(
        lambda m: m.constant([[1, 2], [3]]), "non-rectangular"
    ),
    "constant_non_rectangular_scalar_row": _row(lambda m: m.constant([[1, 2], 3])),
    "constant_non_rectangular_float32": _row(
        lambda m: m.constant([[1.0], [2.0, 3.0]], dtype=m.float32)
    ),
    "convert_float_to_int": _row(
        lambda m: m.convert_to_tensor(1.0, dtype=m.int32), "not an integer"
    ),
    "convert_none": _row(lambda m: m.convert_to_tensor(None)),
    "convert_none_with_hint": _row(
        lambda m: m.convert_to_tensor(None, dtype_hint=m.float32)
    ),
    "convert_mixed_with_hint": _row(
        lambda m: m.convert_to_tensor([1, "a"], dtype_hint=m.float32)
    ),
    "convert_float_with_int_hint_stays_float": _row(
        lambda m: m.convert_to_tensor([1.5], dtype_hint=m.int32)
    ),
    "convert_int_with_float_hint": _row(
        lambda m: m.convert_to_tensor(1, dtype_hint=m.float32)
    ),
    # -- Python values next to tensors (the binary-op rule) -----------------------
    "add_none": _row(lambda m: m.add(None, 1.0), "unsupported type"),
    "add_tensor_and_none": _row(lambda m: m.add(m.constant(1.0), None)),
    "multiply_int_tensor_by_float": _row(
        lambda m: m.constant([1, 2]) * 1.5, "not an integer"
    ),
    "multiply_int_tensor_by_integral_float": _row(lambda m: m.constant([1]) * 2.0),
    "reflected_add_float_to_int_tensor": _row(lambda m: 1.0 + m.constant([1])),
    "subtract_float_from_int_tensor": _row(lambda m: m.constant([1]) - 1.5),
    "maximum_int_tensor_and_float": _row(lambda m: m.maximum(m.constant([1]), 1.0)),
    "less_int_tensor_and_float": _row(lambda m: m.constant([1]) < 1.5),
    "multiply_float_tensor_by_complex": _row(lambda m: m.constant([1.0]) * 1j),
    "maximum_float_tensor_and_complex": _row(
        lambda m: m.maximum(m.constant([1.0]), 1j)
    ),
    "equal_bool_tensor_and_int": _row(lambda m: m.math.equal(m.constant([True]), 1)),
    "add_int_tensor_and_bool": _row(lambda m: m.constant([1]) + True),
    "add_float_tensor_and_bool": _row(lambda m: m.constant([1.0]) + True),
    "add_int_tensor_and_numpy_float": _row(lambda m: m.constant([1]) + np.array([1.5])),
    "add_complex_tensor_and_float": _row(
        lambda m: m.constant([1.0], m.complex64) + 1.5
    ),
    "add_int_tensor_and_float_list": _row(lambda m: m.multiply(m.constant([1]), [1.5])),
    "add_float_tensor_and_int_list": _row(lambda m: m.constant([1.0]) + [1, 2]),
    "stack_int_tensor_and_float": _row(lambda m: m.stack([m.constant(1), 1.5])),
    "stack_float_tensor_and_int": _row(lambda m: m.stack([m.constant(1.0), 1])),
    "concat_int_tensor_and_float_list": _row(
        lambda m: m.concat([m.constant([1]), [1.5]], 0)
    ),
    "where_int_tensor_and_float": _row(
        lambda m: m.where(m.constant([True]), m.constant([1]), 1.5)
    ),
    "clip_int_tensor_by_floats": _row(
        lambda m: m.clip_by_value(m.constant([1]), 0.5, 2)
    ),
    # -- math: axes, reductions, dtypes, shapes ---------------------------------------
    "reduce_sum_float_axis": _row(
        lambda m: m.reduce_sum(m.constant([1.0, 2.0]), axis=0.5), "axis"
    ),
    "reduce_sum_integral_float_axis": _row(
        lambda m: m.reduce_sum(m.ones([2, 2]), axis=1.0)
    ),
    "reduce_mean_float_axis": _row(lambda m: m.reduce_mean(m.ones([2]), axis=0.5)),
    "reduce_sum_float_list_axis": _row(lambda m: m.reduce_sum(m.ones([2]), axis=[0.0])),
    "reduce_sum_string_axis": _row(lambda m: m.reduce_sum(m.ones([2]), axis="a")),
    "reduce_sum_tensor_axis": _row(
        lambda m: m.reduce_sum(m.ones([2, 3]), axis=m.constant(1))
    ),
    "reduce_sum_empty_axis_list": _row(lambda m: m.reduce_sum(m.ones([2]), axis=[])),
    "reduce_sum_bool_axis": _row(lambda m: m.reduce_sum(m.ones([2, 3]), axis=True)),
    "squeeze_bool_axis": _row(lambda m: m.squeeze(m.ones([2, 1]), axis=True)),
    "expand_dims_bool_axis": _row(lambda m: m.expand_dims(m.ones([2]), axis=True)),
    "reverse_bool_axis": _row(lambda m: m.reverse(m.ones([2, 2]), axis=True)),
    "reverse_axis_none": _row(lambda m: m.reverse(m.ones([2]), None)),
    "repeat_list_axis": _row(
        lambda m: m.repeat(m.ones([2]), 2, axis=[0]), "must be an int"
    ),
    "concat_axis_none": _row(lambda m: m.concat([m.ones([2])] * 2, axis=None)),
    "concat_one_element_list_axis": _row(
        lambda m: m.concat([m.ones([2, 1])] * 2, axis=[1])
    ),
    "concat_two_element_list_axis": _row(
        lambda m: m.concat([m.ones([2, 1])] * 2, axis=[0, 1]), "scalar"
    ),
    "reduce_sum_axis_out_of_range": _row(
        lambda m: m.reduce_sum(m.ones([2]), axis=2), "Invalid reduction dimension"
    ),
    "reduce_sum_negative_axis_out_of_range": _row(
        lambda m: m.reduce_sum(m.ones([2]), axis=-2)
    ),
    "reduce_sum_duplicate_axes": _row(
        lambda m: m.reduce_sum(m.ones([2, 2]), axis=[0, 0])
    ),
    "reduce_sum_duplicate_axes_negative": _row(
        lambda m: m.reduce_sum(m.ones([2, 2]), axis=[1, -1])
    ),
    "reduce_max_axis_out_of_range": _row(lambda m: m.reduce_max(m.ones([2]), axis=3)),
    "reduce_mean_axis_out_of_range": _row(lambda m: m.reduce_mean(m.ones([2]), axis=3)),
    "reduce_prod_axis_out_of_range": _row(lambda m: m.reduce_prod(m.ones([2]), axis=3)),
    "reduce_logsumexp_axis_out_of_range": _row(
        lambda m: m.reduce_logsumexp(m.ones([2]), axis=3)
    ),
    "reduce_variance_axis_out_of_range": _row(
        lambda m: m.math.reduce_variance(m.ones([2]), axis=3)
    ),
    "reduce_sum_bool": _row(lambda m: m.reduce_sum(m.constant([True, True]))),
    "reduce_mean_bool": _row(lambda m: m.reduce_mean(m.constant([True, False]))),
    "reduce_max_bool": _row(lambda m: m.reduce_max(m.constant([True, False]))),
    "reduce_min_bool_empty": _row(lambda m: m.reduce_min(m.zeros([0], m.bool))),
    "reduce_prod_bool": _row(lambda m: m.reduce_prod(m.constant([True]))),
    "reduce_mean_int_rounds_toward_zero": _row(
        lambda m: m.reduce_mean(m.constant([-1, -2]))
    ),
    "reduce_mean_int_rows_toward_zero": _row(
        lambda m: m.reduce_mean(m.constant([[-1, -2], [3, -6]]), axis=1)
    ),
    "reduce_mean_int_keepdims": _row(
        lambda m: m.reduce_mean(m.constant([-7, 2]), keepdims=True)
    ),
    "reduce_mean_int64": _row(lambda m: m.reduce_mean(m.constant([-7, 2], m.int64))),
    "reduce_mean_uint8": _row(lambda m: m.reduce_mean(m.constant([7, 1], m.uint8))),
    "reduce_mean_empty_int_is_zero": _row(
        lambda m: m.reduce_mean(m.zeros([0], m.int32))
    ),
    "reduce_mean_empty_rows_int": _row(
        lambda m: m.reduce_mean(m.zeros([2, 0], m.int32), axis=1)
    ),
    "reduce_mean_empty_float_is_nan": _row(lambda m: m.reduce_mean(m.zeros([0]))),
    "reduce_max_empty_float": _row(lambda m: m.reduce_max(m.zeros([0]))),
    "reduce_min_empty_float": _row(lambda m: m.reduce_min(m.zeros([0]))),
    "reduce_max_empty_float64": _row(lambda m: m.reduce_max(m.zeros([0], m.float64))),
    "reduce_max_empty_int32": _row(lambda m: m.reduce_max(m.zeros([0], m.int32))),
    "reduce_min_empty_int32": _row(lambda m: m.reduce_min(m.zeros([0], m.int32))),
    "reduce_max_empty_int64": _row(lambda m: m.reduce_max(m.zeros([0], m.int64))),
    "reduce_max_empty_uint8": _row(lambda m: m.reduce_max(m.zeros([0], m.uint8))),
    "reduce_min_empty_uint8": _row(lambda m: m.reduce_min(m.zeros([0], m.uint8))),
    "reduce_max_empty_axis": _row(lambda m: m.reduce_max(m.zeros([0, 2]), axis=0)),
    "reduce_max_over_nonempty_axis_of_empty": _row(
        lambda m: m.reduce_max(m.zeros([0, 2]), axis=1)
    ),
    "reduce_prod_empty_int": _row(lambda m: m.reduce_prod(m.zeros([0], m.int32))),
    "reduce_logsumexp_int": _row(lambda m: m.reduce_logsumexp(m.constant([1, 2]))),
    "reduce_variance_int": _row(
        lambda m: m.math.reduce_variance(m.constant([1, 2])), "real or complex"
    ),
    "reduce_std_int": _row(lambda m: m.math.reduce_std(m.constant([1, 2]))),
    "cumsum_axis_out_of_range": _row(lambda m: m.cumsum(m.ones([2]), axis=1)),
    "cumsum_float_axis": _row(lambda m: m.cumsum(m.ones([2]), axis=0.5)),
    "cumsum_bool": _row(lambda m: m.cumsum(m.constant([True, True]))),
    "exp_int": _row(lambda m: m.exp(m.constant([1])), "Cast the input"),
    "exp_python_int": _row(lambda m: m.exp(1)),
    "exp_python_float": _row(lambda m: m.exp(1.0)),
    "sqrt_int": _row(lambda m: m.sqrt(m.constant([4]))),
    "sqrt_python_int": _row(lambda m: m.math.sqrt(4)),
    "log_int": _row(lambda m: m.math.log(m.constant([1]))),
    "log1p_int": _row(lambda m: m.math.log1p(m.constant([1]))),
    "expm1_int": _row(lambda m: m.math.expm1(m.constant([1]))),
    "sin_int": _row(lambda m: m.sin(m.constant([1]))),
    "cos_int": _row(lambda m: m.cos(m.constant([1]))),
    "tan_int": _row(lambda m: m.math.tan(m.constant([1]))),
    "asin_int": _row(lambda m: m.math.asin(m.constant([0]))),
    "acos_int": _row(lambda m: m.math.acos(m.constant([0]))),
    "atan_int": _row(lambda m: m.math.atan(m.constant([0]))),
    "sinh_int": _row(lambda m: m.math.sinh(m.constant([0]))),
    "cosh_int": _row(lambda m: m.math.cosh(m.constant([0]))),
    "tanh_int": _row(lambda m: m.tanh(m.constant([1]))),
    "sigmoid_int": _row(lambda m: m.sigmoid(m.constant([1]))),
    "rsqrt_int": _row(lambda m: m.math.rsqrt(m.constant([1]))),
    "erf_int": _row(lambda m: m.math.erf(m.constant([1]))),
    "lgamma_int": _row(lambda m: m.math.lgamma(m.constant([1]))),
    "softplus_int": _row(lambda m: m.math.softplus(m.constant([1]))),
    "square_bool": _row(lambda m: m.square(m.constant([True]))),
    "negative_bool": _row(lambda m: m.negative(m.constant([True]))),
    "abs_bool": _row(lambda m: m.abs(m.constant([True]))),
    "abs_complex_is_real": _row(lambda m: m.abs(m.constant([3 + 4j]))),
    "square_int": _row(lambda m: m.square(m.constant([-3]))),
    "sign_int": _row(lambda m: m.sign(m.constant([-3, 0, 2]))),
    "truediv_bool": _row(lambda m: m.constant([True]) / m.constant([True])),
    "truediv_int_is_float64": _row(lambda m: m.constant([3]) / m.constant([2])),
    "pow_int_negative_exponent": _row(lambda m: m.pow(m.constant(2), m.constant(-1))),
    "pow_int_python_negative_exponent": _row(lambda m: m.pow(m.constant(2), -1)),
    "matmul_bool": _row(
        lambda m: m.matmul(m.ones([2, 2], m.bool), m.ones([2, 2], m.bool))
    ),
    "matmul_int": _row(
        lambda m: m.matmul(m.ones([2, 2], m.int32), m.ones([2, 2], m.int32))
    ),
    "matmul_inner_mismatch": _row(
        lambda m: m.matmul(m.ones([2, 3]), m.ones([2, 3])), "size-incompatible"
    ),
    "matmul_rank1": _row(lambda m: m.matmul(m.ones([3]), m.ones([3, 2]))),
    "matmul_batch_mismatch": _row(
        lambda m: m.matmul(m.ones([2, 2, 3]), m.ones([3, 3, 2]))
    ),
    "matmul_batch_broadcasts": _row(
        lambda m: m.matmul(m.ones([2, 2, 3]), m.ones([1, 3, 2]))
    ),
    "matmul_transpose_b": _row(
        lambda m: m.matmul(m.ones([2, 3]), m.ones([2, 3]), transpose_b=True)
    ),
    "tensordot_mismatch": _row(lambda m: m.tensordot(m.ones([2]), m.ones([3]), 1)),
    "add_shapes_do_not_broadcast": _row(
        lambda m: m.add(m.ones([2]), m.ones([3])), "Incompatible shapes"
    ),
    "multiply_operator_shapes": _row(lambda m: m.ones([2]) * m.ones([3])),
    "subtract_shapes": _row(lambda m: m.ones([2, 3]) - m.ones([2, 2])),
    "truediv_shapes": _row(lambda m: m.ones([2]) / m.ones([3])),
    "maximum_shapes": _row(lambda m: m.maximum(m.ones([2]), m.ones([3]))),
    "minimum_shapes": _row(lambda m: m.minimum(m.ones([2]), m.ones([3]))),
    "pow_shapes": _row(lambda m: m.pow(m.ones([2]), m.ones([3]))),
    "squared_difference_shapes": _row(
        lambda m: m.math.squared_difference(m.ones([2]), m.ones([3]))
    ),
    "add_shapes_broadcast": _row(lambda m: m.add(m.ones([2, 1]), m.ones([3]))),
    "add_n_empty": _row(lambda m: m.add_n([])),
    "add_n_dtype_mix": _row(
        lambda m: m.add_n([m.ones([2]), m.ones([2], m.float64)]), "double"
    ),
    "add_n_shape_mismatch": _row(lambda m: m.add_n([m.ones([2]), m.ones([1])])),
    "add_n_three": _row(lambda m: m.add_n([m.ones([2]), m.ones([2]), m.ones([2])])),
    "divide_no_nan_ints_give_float64": _row(
        lambda m: m.math.divide_no_nan(m.constant([1, 2]), m.constant([0, 4]))
    ),
    "xlogy_int": _row(lambda m: m.math.xlogy(m.constant([1]), m.constant([2]))),
    "xdivy_int": _row(lambda m: m.math.xdivy(m.constant([1]), m.constant([2]))),
    "atan2_int": _row(lambda m: m.math.atan2(m.constant([1]), m.constant([2]))),
    "reciprocal_int": _row(lambda m: m.math.reciprocal(m.constant([2]))),
    "l2_normalize_int": _row(lambda m: m.math.l2_normalize(m.constant([3, 4]))),
    "clip_by_norm_int": _row(lambda m: m.clip_by_norm(m.constant([3, 4]), 1)),
    "norm_int": _row(lambda m: m.norm(m.constant([3, 4]))),
    "cast_to_none": _row(lambda m: m.cast(m.constant([1.5]), None)),
    "cast_python_float_to_int_truncates": _row(lambda m: m.cast([1.5, -2.5], m.int32)),
    "einsum_shape_mismatch": _row(
        lambda m: m.einsum("ij,jk->ik", m.ones([2, 3]), m.ones([2, 3]))
    ),
    "clip_by_value_min_above_max": _row(
        lambda m: m.clip_by_value(m.constant([0.5, 3.0]), 1.0, 0.0)
    ),
    # -- array ops: shape arguments and shape errors -----------------------------------
    "reshape_none": _row(
        lambda m: m.reshape(m.constant([1.0, 2.0]), None), "unsupported type"
    ),
    "reshape_partly_unknown_list": _row(lambda m: m.reshape(m.ones([4]), [2, None])),
    "reshape_partly_known_tensorshape": _row(
        lambda m: m.reshape(m.ones([4]), m.TensorShape([2, None]))
    ),
    "reshape_known_tensorshape": _row(
        lambda m: m.reshape(m.ones([4]), m.TensorShape([2, 2]))
    ),
    "reshape_float_sizes": _row(lambda m: m.reshape(m.ones([2]), [2.0])),
    "reshape_float_tensor_shape": _row(
        lambda m: m.reshape(m.ones([4]), m.constant([2.0, 2.0]))
    ),
    "reshape_int_tensor_shape": _row(
        lambda m: m.reshape(m.ones([4]), m.constant([2, 2]))
    ),
    "reshape_list_of_int_tensors": _row(
        lambda m: m.reshape(m.ones([4]), [m.constant(2), -1])
    ),
    "reshape_scalar_shape": _row(lambda m: m.reshape(m.ones([4]), 4)),
    "reshape_matrix_shape": _row(lambda m: m.reshape(m.ones([4]), [[2, 2]])),
    "reshape_count_mismatch": _row(
        lambda m: m.reshape(m.ones([3]), [2, 2]), "Input to reshape"
    ),
    "reshape_unknown_does_not_divide": _row(lambda m: m.reshape(m.ones([3]), [2, -1])),
    "reshape_two_unknowns": _row(lambda m: m.reshape(m.ones([4]), [-1, -1])),
    "reshape_negative_size": _row(lambda m: m.reshape(m.ones([4]), [-2, 2])),
    "transpose_repeated_perm": _row(lambda m: m.transpose(m.ones([2, 3]), [0, 0])),
    "transpose_perm_out_of_range": _row(lambda m: m.transpose(m.ones([2, 3]), [0, 2])),
    "transpose_perm_too_short": _row(lambda m: m.transpose(m.ones([2, 3]), [0])),
    "transpose_scalar_perm": _row(lambda m: m.transpose(m.ones([2, 3]), 1)),
    "transpose_float_perm": _row(lambda m: m.transpose(m.ones([2, 3]), [0.0, 1.0])),
    "expand_dims_out_of_range": _row(lambda m: m.expand_dims(m.ones([2]), 3)),
    "expand_dims_negative_out_of_range": _row(lambda m: m.expand_dims(m.ones([2]), -3)),
    "expand_dims_last": _row(lambda m: m.expand_dims(m.ones([2]), 1)),
    "expand_dims_negative": _row(lambda m: m.expand_dims(m.ones([2]), -2)),
    "expand_dims_float_axis": _row(lambda m: m.expand_dims(m.ones([2]), 0.5)),
    "squeeze_not_one": _row(lambda m: m.squeeze(m.ones([2, 3]), 0)),
    "squeeze_out_of_range": _row(lambda m: m.squeeze(m.ones([2, 1]), 2)),
    "squeeze_repeated_axis": _row(lambda m: m.squeeze(m.ones([2, 1]), [1, 1])),
    "concat_shape_mismatch": _row(
        lambda m: m.concat([m.ones([2, 3]), m.ones([2, 2])], 0), "Dimension 1"
    ),
    "concat_rank_mismatch": _row(lambda m: m.concat([m.ones([2]), m.ones([2, 1])], 0)),
    "concat_axis_out_of_range": _row(
        lambda m: m.concat([m.ones([2]), m.ones([2])], -2)
    ),
    "concat_float_axis": _row(lambda m: m.concat([m.ones([2])], 0.5)),
    "stack_shape_mismatch": _row(lambda m: m.stack([m.ones([2]), m.ones([3])])),
    "stack_axis_out_of_range": _row(lambda m: m.stack([m.ones([2]), m.ones([2])], 2)),
    "stack_negative_axis": _row(lambda m: m.stack([m.ones([2]), m.ones([2])], -2)),
    "unstack_num_mismatch": _row(lambda m: m.unstack(m.ones([2, 3]), num=3)),
    "unstack_axis_out_of_range": _row(lambda m: m.unstack(m.ones([2, 3]), axis=2)),
    "unstack_scalar": _row(lambda m: m.unstack(m.constant(1.0))),
    "split_does_not_divide": _row(lambda m: m.split(m.ones([5]), 2)),
    "split_zero_ways": _row(lambda m: m.split(m.ones([4]), 0)),
    "split_sizes_do_not_add_up": _row(lambda m: m.split(m.ones([5]), [2, 2])),
    "split_sizes_with_unknown": _row(lambda m: m.split(m.ones([4]), [1, -1])),
    "split_sizes_two_unknowns": _row(lambda m: m.split(m.ones([4]), [1, -1, -1])),
    "split_sizes_too_big": _row(lambda m: m.split(m.ones([4]), [5, -1])),
    "split_axis_out_of_range": _row(lambda m: m.split(m.ones([4]), 2, axis=1)),
    "tile_wrong_length": _row(lambda m: m.tile(m.ones([2]), [1, 2])),
    "tile_negative": _row(lambda m: m.tile(m.ones([2]), [-1])),
    "tile_scalar_multiples": _row(lambda m: m.tile(m.ones([2]), 2)),
    "tile_float_multiples": _row(lambda m: m.tile(m.ones([2]), [2.5])),
    "repeat_negative": _row(lambda m: m.repeat(m.ones([2]), -1)),
    "repeat_float": _row(lambda m: m.repeat(m.ones([2]), 2.5)),
    "broadcast_to_incompatible": _row(
        lambda m: m.broadcast_to(m.ones([3]), [2, 2]), "Incompatible shapes"
    ),
    "broadcast_to_negative": _row(lambda m: m.broadcast_to(m.ones([3]), [-1])),
    "broadcast_to_none": _row(lambda m: m.broadcast_to(m.ones([3]), None)),
    "broadcast_to_scalar_shape": _row(lambda m: m.broadcast_to(m.ones([3]), 3)),
    "broadcast_to_float_shape": _row(lambda m: m.broadcast_to(m.ones([3]), [2.5, 3])),
    "pad_negative": _row(lambda m: m.pad(m.ones([2]), [[-1, 0]])),
    "pad_wrong_rank": _row(lambda m: m.pad(m.ones([2]), [[1, 0], [0, 0]])),
    "pad_float": _row(lambda m: m.pad(m.ones([2]), [[1.5, 0]])),
    "pad_bad_mode": _row(lambda m: m.pad(m.ones([2]), [[1, 0]], mode="foo")),
    "pad_reflect_too_wide": _row(
        lambda m: m.pad(m.ones([2]), [[2, 0]], mode="REFLECT")
    ),
    "pad_symmetric_too_wide": _row(
        lambda m: m.pad(m.ones([2]), [[3, 0]], mode="SYMMETRIC")
    ),
    "pad_symmetric_full": _row(
        lambda m: m.pad(m.constant([1.0, 2.0]), [[2, 1]], mode="SYMMETRIC")
    ),
    "pad_reflect_lowercase": _row(
        lambda m: m.pad(m.constant([1.0, 2.0]), [[1, 0]], mode="reflect")
    ),
    "one_hot_float_indices": _row(
        lambda m: m.one_hot(m.constant([0.0, 1.0]), 3), "Indices are integers"
    ),
    "one_hot_python_float_indices": _row(lambda m: m.one_hot([0.0, 1.0], 3)),
    "one_hot_int16_indices": _row(lambda m: m.one_hot(m.constant([0, 1], m.int16), 3)),
    "one_hot_bool_indices": _row(lambda m: m.one_hot(m.constant([True]), 3)),
    "one_hot_uint8_indices": _row(lambda m: m.one_hot(m.constant([0, 1], m.uint8), 3)),
    "one_hot_negative_depth": _row(lambda m: m.one_hot([0, 1], -1)),
    "one_hot_zero_depth": _row(lambda m: m.one_hot([0, 1], 0)),
    "one_hot_float_depth": _row(lambda m: m.one_hot([0, 1], 3.5)),
    "one_hot_axis_out_of_range": _row(lambda m: m.one_hot([0, 1], 3, axis=2)),
    "one_hot_negative_axis": _row(lambda m: m.one_hot([[0, 1]], 3, axis=-2)),
    "one_hot_axis_zero": _row(lambda m: m.one_hot([[0, 1]], 3, axis=0)),
    "one_hot_out_of_range_index_is_zeros": _row(lambda m: m.one_hot([0, -1, 5], 3)),
    "one_hot_int_on_value_gives_int32": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=2)
    ),
    "one_hot_int_off_value_gives_int32": _row(
        lambda m: m.one_hot([0, 1], 3, off_value=-1)
    ),
    "one_hot_tensor_on_value_dtype": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=m.constant(2))
    ),
    "one_hot_mixed_on_off_dtypes": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=5, off_value=0.5)
    ),
    "one_hot_on_value_vs_dtype": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=1.5, dtype=m.int32)
    ),
    "one_hot_int_on_value_with_float_dtype": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=2, dtype=m.float32)
    ),
    "one_hot_int32_dtype": _row(lambda m: m.one_hot([0, 1], 3, dtype=m.int32)),
    "one_hot_bool_values": _row(
        lambda m: m.one_hot([0, 1], 3, on_value=True, off_value=False)
    ),
    "top_k_too_big": _row(lambda m: m.math.top_k(m.ones([2]), 3)),
    "top_k_negative": _row(lambda m: m.math.top_k(m.ones([2]), -1)),
    "top_k_float_k": _row(lambda m: m.math.top_k(m.ones([2]), 2.5)),
    "top_k_scalar_input": _row(lambda m: m.math.top_k(m.constant(1.0), 1)),
    "fill_negative": _row(lambda m: m.fill((-1,), 1.0)),
    "fill_none_value": _row(lambda m: m.fill([2], None)),
    "fill_float_dims": _row(lambda m: m.fill([2.5], 1)),
    "fill_vector_value": _row(lambda m: m.fill([2], m.constant([1.0, 2.0]))),
    "fill_scalar_dims": _row(lambda m: m.fill(2, 1.0)),
    "reverse_axis_out_of_range": _row(lambda m: m.reverse(m.ones([2]), [1])),
    "reverse_scalar_axis": _row(lambda m: m.reverse(m.ones([2]), 0)),
    "reverse_negative_axis": _row(lambda m: m.reverse(m.constant([[1.0, 2.0]]), [-1])),
    "expand_dims_one_element_list": _row(lambda m: m.expand_dims(m.ones([2]), [0])),
    "split_float_num": _row(lambda m: m.split(m.ones([4]), 2.0)),
    "split_numpy_int_num": _row(lambda m: m.split(m.ones([4]), np.int64(2))),
    "sort_bool": _row(lambda m: m.sort(m.constant([True, False]))),
    "sort_axis_out_of_range": _row(lambda m: m.sort(m.ones([2]), axis=1)),
    "top_k_bool": _row(lambda m: m.math.top_k(m.constant([True, False]), 1)),
    "where_int_condition": _row(
        lambda m: m.where(m.constant([1]), m.ones([1]), m.ones([1]))
    ),
    "where_shapes_do_not_broadcast": _row(
        lambda m: m.where([True], m.ones([2]), m.ones([3]))
    ),
    "where_broadcasts": _row(
        lambda m: m.where([[True], [False]], m.ones([3]), m.zeros([2, 1]))
    ),
    "boolean_mask_shape_mismatch": _row(lambda m: m.boolean_mask(m.ones([2]), [True])),
    "boolean_mask_scalar_mask": _row(lambda m: m.boolean_mask(m.ones([2]), True)),
    "boolean_mask_rows": _row(
        lambda m: m.boolean_mask(m.constant([[1.0], [2.0]]), [False, True])
    ),
    "range_float_start_int_dtype": _row(lambda m: m.range(0.5, 5, dtype=m.int32)),
    # -- creation ops --------------------------------------------------------------
    "constant_tensor_of_other_dtype": _row(
        lambda m: m.constant(m.constant([1.5]), dtype=m.int32), "Expected tensor"
    ),
    "constant_variable_is_cast": _row(
        lambda m: m.constant(m.Variable([1.5]), dtype=m.float64)
    ),
    "constant_tensor_broadcast_to_shape": _row(
        lambda m: m.constant(m.constant([1.0]), shape=[2])
    ),
    "constant_shape_mismatch": _row(
        lambda m: m.constant([1, 2, 3], shape=[2, 2]), "unsupported shape"
    ),
    "constant_shape_reshapes": _row(lambda m: m.constant([1, 2], shape=[2, 1])),
    "constant_negative_shape": _row(lambda m: m.constant(1.0, shape=[2, -1])),
    "convert_tensor_of_other_dtype": _row(
        lambda m: m.convert_to_tensor(m.constant(1.0), dtype=m.float64)
    ),
    "convert_tensor_ignores_hint": _row(
        lambda m: m.convert_to_tensor(m.constant(1.0), dtype_hint=m.float64)
    ),
    "zeros_negative": _row(lambda m: m.zeros((2, -3)), "Dimension -3"),
    "ones_negative": _row(lambda m: m.ones((-1,))),
    "zeros_float_size": _row(lambda m: m.zeros((2.5,))),
    "ones_float_scalar_size": _row(lambda m: m.ones(2.5)),
    "zeros_float_tensor_shape": _row(lambda m: m.zeros(m.constant([2.0, 3.0]))),
    "zeros_int_tensor_shape": _row(lambda m: m.zeros(m.constant([2, 3]))),
    "zeros_none_shape": _row(lambda m: m.zeros(None)),
    "ones_partly_unknown": _row(lambda m: m.ones([2, None])),
    "zeros_partly_known_tensorshape": _row(lambda m: m.zeros(m.TensorShape([2, None]))),
    "zeros_tensorshape": _row(lambda m: m.zeros(m.TensorShape([2, 3]))),
    "eye_negative": _row(lambda m: m.eye(-1)),
    "eye_float": _row(lambda m: m.eye(2.5)),
    "eye_float_columns": _row(lambda m: m.eye(2, 2.5)),
    "eye_negative_batch": _row(lambda m: m.eye(2, batch_shape=[-1])),
    "range_zero_delta": _row(lambda m: m.range(0, 10, 0), "delta != 0"),
    "range_zero_float_delta": _row(lambda m: m.range(0.0, 1.0, 0.0)),
    "range_wrong_direction": _row(lambda m: m.range(0, 10, -1)),
    "range_start_above_limit": _row(lambda m: m.range(10, 0)),
    "range_negative_limit": _row(lambda m: m.range(-5)),
    "range_counts_down": _row(lambda m: m.range(10, 0, -3)),
    "range_float_delta": _row(lambda m: m.range(0, 10, 2.5)),
    "linspace_int_ends_give_float64": _row(lambda m: m.linspace(0, 1, 3)),
    "linspace_int_start_float_stop": _row(lambda m: m.linspace(0, 1.0, 3)),
    "linspace_float_num": _row(lambda m: m.linspace(0.0, 1.0, 3.5)),
    "linspace_negative_num": _row(lambda m: m.linspace(0.0, 1.0, -1)),
    "linspace_zero_num": _row(lambda m: m.linspace(0.0, 1.0, 0)),
    # -- random ops (shapes and dtypes; the samples themselves differ) -------------
    "random_normal_negative_shape": _row(
        lambda m: m.random.normal((2, -3)), "Dimension -3"
    ),
    "random_uniform_negative_shape": _row(lambda m: m.random.uniform((2, -3))),
    "random_truncated_normal_negative_shape": _row(
        lambda m: m.random.truncated_normal((2, -3))
    ),
    "random_normal_float_shape": _row(lambda m: m.random.normal((2, 3.5))),
    "random_normal_none_shape": _row(lambda m: m.random.normal(None)),
    "random_normal_scalar_shape": _row(lambda m: m.random.normal(3)),
    "random_normal_int_dtype": _row(lambda m: m.random.normal((2,), dtype=m.int32)),
    "random_uniform_int_needs_maxval": _row(
        lambda m: m.random.uniform((2,), dtype=m.int32)
    ),
    "random_uniform_int_empty_range": _row(
        lambda m: m.random.uniform((2,), 5, 1, dtype=m.int32), "minval < maxval"
    ),
    "random_uniform_int_equal_bounds": _row(
        lambda m: m.random.uniform([2], minval=1, maxval=1, dtype=m.int32)
    ),
    "random_uniform_int_float_maxval": _row(
        lambda m: m.random.uniform([2], maxval=5.5, dtype=m.int32)
    ),
    "random_uniform_bool_dtype": _row(lambda m: m.random.uniform([2], dtype=m.bool)),
    "random_categorical_negative_samples": _row(
        lambda m: m.random.categorical(m.ones([2, 3]), -1)
    ),
    "random_categorical_vector_logits": _row(
        lambda m: m.random.categorical(m.ones([3]), 2)
    ),
    # -- softmax ---------------------------------------------------------------------
    "softmax_int": _row(lambda m: m.nn.softmax(m.constant([1, 2])), "Cast the"),
    "log_softmax_int": _row(lambda m: m.nn.log_softmax(m.constant([1, 2]))),
    "softmax_python_ints": _row(lambda m: m.nn.softmax([1, 2])),
    "softmax_bool": _row(lambda m: m.nn.softmax(m.constant([True]))),
    "softmax_complex": _row(
        lambda m: m.nn.softmax(m.constant([1.0, 2.0], m.complex64))
    ),
    "softmax_axis_out_of_range": _row(
        lambda m: m.nn.softmax(m.constant([[1.0, 2.0]]), axis=2)
    ),
    "softmax_float64": _row(lambda m: m.nn.softmax(m.constant([1.0, 2.0], m.float64))),
    "softmax_python_floats": _row(lambda m: m.nn.softmax([1.0, 2.0])),
    "log_softmax_axis_0": _row(
        lambda m: m.nn.log_softmax(m.constant([[1.0, 2.0]]), axis=0)
    ),
    # -- data, optimizers, layers ------------------------------------------------------
    "dataset_ragged_slices": _row(
        lambda m: m.data.Dataset.from_tensor_slices([[1, 2], [3]]), "non-rectangular"
    ),
    "dataset_ragged_dict_slices": _row(
        lambda m: m.data.Dataset.from_tensor_slices({"a": [[1], [2, 3]]})
    ),
    "dataset_ragged_string_slices": _row(
        lambda m: m.data.Dataset.from_tensor_slices([["a", "b"], ["c"]])
    ),
    "dataset_none_in_slices": _row(
        lambda m: m.data.Dataset.from_tensor_slices([None, 1])
    ),
    "dataset_strings_and_numbers": _row(
        lambda m: m.data.Dataset.from_tensor_slices(["a", 1])
    ),
    "optimizer_gradient_shape_mismatch": _row(
        lambda m: m.keras.optimizers.SGD().apply_gradients(
            [(m.ones([3]), m.Variable(m.ones([2]), name="kern"))]
        ),
        "kern",
    ),
    "optimizer_gradient_matrix_for_vector": _row(
        lambda m: m.keras.optimizers.Adam().apply_gradients(
            [(m.ones([2, 1]), m.Variable(m.ones([2])))]
        )
    ),
    "dense_called_on_none": _row(lambda m: m.keras.layers.Dense(2)(None), "None"),
    "convolution_of_5_spatial_dims": _row(
        lambda m: m.nn.convolution(m.ones([1] * 7), m.ones([1] * 7), padding="VALID"),
        "num_spatial_dims",
    ),
    "sigmoid_xent_without_labels": _row(
        lambda m: m.nn.sigmoid_cross_entropy_with_logits(logits=m.ones([2])), "Both"
    ),
    "sequential_add_a_layer_output": _row(
        lambda m: m.keras.Sequential().add(
            m.keras.layers.Dense(2)(m.keras.Input((3,)))
        ),
        "Only instances of `keras.Layer`",
    ),
    "sequential_add_a_number": _row(
        lambda m: m.keras.Sequential().add(1), "Only instances of `keras.Layer`"
    ),
    # -- segment ids and scatter indices ---------------------------------------------
    **{
        f"unsorted_segment_{kind}_{where}_{ids}": _row(
            lambda m, k=kind, w=where, i=ids: (
                m.function(_segment(m, k)) if w == "compiled" else _segment(m, k)
            )(m.constant([1.0, 2.0, 3.0]), m.constant(i))
        )
        for kind in ("sum", "max", "mean", "sqrt_n")
        for where in ("eager", "compiled")
        for ids in ([0, 2, 1], [0, -1, 1])  # out of range; negative (dropped)
    },
    "scatter_constant_indices_out_of_range_compiled": _row(
        lambda m: m.function(lambda x: m.tensor_scatter_nd_update(x, [[3]], [1.0]))(
            m.zeros([2])
        )
    ),
    # -- run-time shifts and offsets inside functions; static shape errors there ------
    "roll_by_a_run_time_shift": _row(
        lambda m: m.function(lambda x, s: m.roll(x, s, [0, 1]))(
            m.reshape(m.range(6), [2, 3]), m.constant([1, 5])
        )
    ),
    "slice_at_a_run_time_begin": _row(
        lambda m: m.function(lambda x, b: m.slice(x, b, [1, 2]))(
            m.reshape(m.range(6), [3, 2]), m.constant([2, 0])
        )
    ),
    "slice_at_a_run_time_begin_out_of_range": _row(
        lambda m: m.function(lambda x, b: m.slice(x, b, [2]))(
            m.constant([1, 2, 3]), m.constant([2])
        )
    ),
    "reshape_count_mismatch_in_a_function": _row(
        lambda m: m.function(lambda x: m.reshape(x, [4]))(m.constant([1, 2, 3]))
    ),
    "split_uneven_in_a_function": _row(
        lambda m: m.function(lambda x: m.split(x, 2))(m.constant([1, 2, 3]))
    ),
    "split_sizes_mismatch_in_a_function": _row(
        lambda m: m.function(lambda x: m.split(x, [1, 1]))(m.constant([1, 2, 3]))
    ),
    # -- tf.debugging's asserts -------------------------------------------------------
    **{
        f"debugging_{name}_{where}_{case}": _row(
            lambda m, n=name, w=where, v=values: _assert_row(m, n, w, v)
        )
        for name in ("positive", "negative", "non_negative", "non_positive")
        for where in ("eager", "compiled")
        for case, values in (("holds_or_not", [1, -1]), ("zeros", [0.0, 0.0]))
    },
    "debugging_none_equal": _row(
        lambda m: m.debugging.assert_none_equal(m.constant([1, 2]), m.constant([1, 3]))
    ),
    "debugging_none_equal_holds": _row(
        lambda m: _none(
            m.debugging.assert_none_equal(m.constant([1, 2]), m.constant([2, 3]))
        )
    ),
    "debugging_integer": _row(lambda m: m.debugging.assert_integer(m.constant([1.0]))),
    "debugging_type": _row(
        lambda m: m.debugging.assert_type(m.constant([1.0]), m.int32)
    ),
    "debugging_scalar": _row(lambda m: m.debugging.assert_scalar(m.constant([1.0]))),
    "debugging_rank_at_least": _row(
        lambda m: m.debugging.assert_rank_at_least(m.constant([1.0]), 2)
    ),
    "debugging_rank_in": _row(
        lambda m: m.debugging.assert_rank_in(m.constant([1.0]), [0, 2])
    ),
    "debugging_all_finite": _row(
        lambda m: m.debugging.assert_all_finite(m.constant([np.nan]), "bad")
    ),
    "debugging_all_finite_holds": _row(
        lambda m: m.debugging.assert_all_finite(m.constant([1.0]), "ok")
    ),
    "debugging_same_float_dtype": _row(
        lambda m: m.debugging.assert_same_float_dtype(
            [m.constant([1.0]), m.constant([1.0], m.float64)]
        )
    ),
    "debugging_proper_iterable": _row(
        lambda m: m.debugging.assert_proper_iterable(m.constant([1.0]))
    ),
    # -- a Variable's sparse updates ---------------------------------------------------
    "variable_scatter_updates": _row(
        lambda m: [
            m.convert_to_tensor(v)
            for v in _scattered(m.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), m)
        ]
    ),
    "variable_scatter_needs_indexed_slices": _row(
        lambda m: m.Variable([1.0]).scatter_update([1.0]), "IndexedSlices"
    ),
    "variable_scatter_nd_out_of_range": _row(
        lambda m: m.Variable([1.0, 2.0]).scatter_nd_update([[3]], [5.0])
    ),
    "variable_sparse_read_out_of_range": _row(
        lambda m: m.Variable([1.0, 2.0]).sparse_read([3])
    ),
    # -- control flow ----------------------------------------------------------------
    "cond_without_branches": _row(lambda m: m.cond(True), "true_fn"),
    "cond_without_false_fn": _row(
        lambda m: m.cond(True, lambda: m.constant(1.0)), "false_fn"
    ),
}


def _none(value):
    """A returned None as a value row's result (TF's asserts return None)."""
    assert value is None
    return np.zeros((), np.float32)


def _assert_row(m, name, where, values):
    check = getattr(m.debugging, f"assert_{name}")
    if where == "compiled":  # (the assert is not returned: TF refuses an op)
        return m.function(lambda x: (check(x), x)[1])(m.constant(values))
    return _none(check(m.constant(values)))


def _segment(m, kind):
    return lambda data, ids: getattr(m.math, f"unsorted_segment_{kind}")(data, ids, 2)


def _scattered(v, m):
    rows = m.IndexedSlices(m.constant([[2.0, 2.0], [3.0, 3.0]]), m.constant([2, 2]))
    yield v.scatter_update(m.IndexedSlices(m.constant([[9.0, 9.0]]), m.constant([0])))
    for method in ("add", "sub", "mul", "div", "max", "min"):
        yield getattr(v, f"scatter_{method}")(rows)
    yield v.scatter_nd_update([[0, 1]], [7.0])
    yield v.scatter_nd_add([[1, 0], [1, 0]], [1.0, 2.0])
    yield v.scatter_nd_sub([[2]], [[1.0, 1.0]])
    yield v.sparse_read([2, 0])
    yield v.gather_nd([[1, 1]])


def _run(fn, module):
    try:
        return fn(module), None
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return None, e


def _expected_type(tf, exc):
    if isinstance(exc, tf.errors.OpError):
        return getattr(jaxtape.errors, type(exc).__name__)
    return type(exc)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_gets_tensorflows_error_or_value(name, tf):
    fn, match = CASES[name]
    want, tf_error = _run(fn, tf)
    got, error = _run(fn, jaxtape)
    if tf_error is not None:
        expected = _expected_type(tf, tf_error)
        assert error is not None, (
            f"TF raised {type(tf_error).__name__}: {tf_error}; jaxtape returned {got}"
        )
        assert isinstance(error, expected), (
            f"TF raised {expected.__name__} ({tf_error}); jaxtape raised "
            f"{type(error).__name__}: {error}"
        )
        if match is not None:
            assert re.search(match, str(error)), str(error)
        return
    assert error is None, f"TF returned {want}; jaxtape raised {error!r}"
    assert match is None, "a `match` only applies to error rows"
    wants, gots = (want, got) if isinstance(want, list) else ([want], [got])
    assert len(gots) == len(wants)
    for w, g in zip(wants, gots):
        assert g.dtype.name == w.dtype.name
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert np.shape(g) == np.shape(w)


@pytest.mark.parametrize(
    "value",
    [["a", "b"], "a", b"a", np.array(["a"]), np.array("a"), [["a"], ["b"]]],
    ids=["list", "str", "bytes", "numpy", "numpy_0d", "nested"],
)
def test_strings_convert_to_string_tensors_as_in_tf(value, tf):
    # TF makes tf.string tensors of UTF-8 bytes; so does jaxtape (StringTensor).
    want, got = tf.constant(value), jaxtape.constant(value)
    assert got.dtype.name == want.dtype.name == "string"
    assert got.shape == tuple(want.shape)
    assert type(got.numpy()) is type(want.numpy())
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_lists_of_tensors_still_convert():
    # (TF's convert_to_tensor packs them; jaxtape's constant does too.)
    out = jaxtape.convert_to_tensor([jaxtape.constant(1.0), jaxtape.constant(2.0)])
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    assert out.dtype == jaxtape.float32


def _key_order(element):
    if isinstance(element, dict):
        return [(k, _key_order(v)) for k, v in element.items()]
    if isinstance(element, tuple):
        return tuple(_key_order(v) for v in element)
    return None


def test_dataset_elements_keep_dict_key_order(tf):
    # TF's nest keeps a dict's own key order on the way out (no sorting).
    def orders(m):
        data = m.data.Dataset
        ds = data.from_tensor_slices({"b": [1, 2], "a": [3, 4], "c": [5, 6]})
        renamed = ds.map(lambda d: {"z": d["a"], "y": d["b"]})
        pipelines = {
            "slices": ds,
            "map": renamed,
            "map_to_tuple": ds.map(lambda d: (d, {"q": d["a"], "p": d["b"]})),
            "batch": ds.batch(2),
            "map_then_batch": renamed.batch(2),
            "zip_dict": data.zip({"y": ds, "x": ds}),
            "nested": data.from_tensor_slices({"b": {"d": [1], "c": [2]}, "a": [3]}),
            "unbatch": ds.batch(2).unbatch(),
            "from_tensors": data.from_tensors({"b": 1, "a": 2}),
            "shuffle_prefetch": ds.shuffle(2, seed=1).prefetch(1),
            "parallel_map": ds.map(lambda d: d, num_parallel_calls=2),
        }
        out = {name: [_key_order(e) for e in p] for name, p in pipelines.items()}
        out["numpy"] = [_key_order(e) for e in ds.as_numpy_iterator()]
        out["element_spec"] = list(ds.element_spec)
        out["map_element_spec"] = list(renamed.element_spec)
        return out

    assert orders(jaxtape) == orders(tf)


def test_optimizer_casts_a_float64_gradient_as_tf(tf):
    def step(m):
        v = m.Variable([1.0, 2.0])
        m.keras.optimizers.SGD(0.5).apply_gradients([(m.ones([2], m.float64), v)])
        return v.numpy(), v.dtype.name

    got, want = step(jaxtape), step(tf)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == want[1]
