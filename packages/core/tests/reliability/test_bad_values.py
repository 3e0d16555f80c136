"""Bad values are refused, never accepted silently: a table of calls with a bad size, a value
that does not fit the dtype, a bad ``dim``, a bad index. Each row runs on PyTorch (the
oracle) and on retrograd: retrograd raises iff PyTorch raises, its exception is an instance
of PyTorch's class, and the row's key phrase appears in both messages. Rows whose phrase is
None are controls: both libraries accept the call and give the same values and dtype.

Rows that fail because of a file this suite's author does not own are marked
``xfail(strict=True, reason="owner: <file>")``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def row(name: str, call: Callable[[Any], Any], phrase: str | None,
        owner: str | None = None) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=f"owner: {owner}")] if owner else []
    return pytest.param(call, phrase, id=name, marks=marks)


def _x(m: Any) -> Any:
    return m.ones(2, 3)


def _set(m: Any, key: Any, value: Any, dtype: str = "float32") -> Any:
    x = m.zeros(2, 3, dtype=getattr(m, dtype))
    x[key(m) if callable(key) else key] = value
    return x


def _stale_grad(m: Any) -> Any:
    """``.grad`` set, then the leaf's ``.data`` replaced by another shape, then backward."""
    x = m.ones(3, requires_grad=True)
    x.grad = m.zeros(3)
    x.data = m.ones(4)
    (x * 2).sum().backward()
    return x.grad


def _int_data_on_float_leaf(m: Any) -> None:
    x = m.ones(3, requires_grad=True)
    x.data = m.tensor([1, 2, 3])


OVERFLOW = "Overflow when unpacking long long"
NOT_CONVERTED = "value cannot be converted to type"
TUPLE_OF_INTS = "must be tuple of ints"

ROWS = [
    # -- full: the fill value must fit the dtype; the size must be a tuple of ints -------------
    row("full_nan_int64", lambda m: m.full((2,), NAN, dtype=m.int64), NOT_CONVERTED),
    row("full_inf_int64", lambda m: m.full((2,), INF, dtype=m.int64), NOT_CONVERTED),
    row("full_1e30_int32", lambda m: m.full((2,), 1e30, dtype=m.int32), NOT_CONVERTED),
    row("full_2**40_int32", lambda m: m.full((2,), 2**40, dtype=m.int32), NOT_CONVERTED),
    row("full_1e6_float16", lambda m: m.full((2,), 1e6, dtype=m.float16), NOT_CONVERTED),
    row("full_np_nan_int64", lambda m: m.full((2,), np.float64(NAN), dtype=m.int64),
        NOT_CONVERTED),
    row("full_2**70", lambda m: m.full((2,), 2**70), "int too big to convert"),
    row("full_2**70_float32", lambda m: m.full((2,), 2**70, dtype=m.float32),
        "int too big to convert"),
    row("full_bare_int_size", lambda m: m.full(2, 1.0), "must be tuple of ints, not int"),
    row("full_float_size", lambda m: m.full((2.0,), 1.0),
        "must be tuple of ints, but found element of type float at pos 0"),
    row("full_str_size", lambda m: m.full("ab", 1.0), "must be tuple of ints, not str"),
    row("full_none_size", lambda m: m.full(None, 1.0), "must be tuple of ints, not NoneType"),
    row("full_list_float_size", lambda m: m.full([2, 2.0], 1.0),
        'failed to unpack the object at pos 2 with error "type must be tuple of ints'),
    row("full_negative_size", lambda m: m.full((-1,), 1.0),
        "Trying to create tensor with negative dimension -1"),
    row("full_2.5_int64", lambda m: m.full((2,), 2.5, dtype=m.int64), None),
    row("full_nan_bool", lambda m: m.full((2,), NAN, dtype=m.bool), None),
    row("full_np_int_size", lambda m: m.full((np.int64(2),), 1.0), None),
    row("full_0d_tensor_size", lambda m: m.full((m.tensor(2),), 1.0), None),
    # -- tensor(): Python ints beyond int64, values beyond an integer dtype -------------------
    row("tensor_2**70", lambda m: m.tensor([2**70]), OVERFLOW),
    row("tensor_2**63", lambda m: m.tensor([2**63]), OVERFLOW),
    row("tensor_2**64_scalar", lambda m: m.tensor(2**64), OVERFLOW),
    row("tensor_-2**63-1", lambda m: m.tensor(-(2**63) - 1), OVERFLOW),
    row("tensor_nested_2**64", lambda m: m.tensor([[1], [2**64]]), OVERFLOW),
    row("tensor_bool_and_2**70", lambda m: m.tensor([True, 2**70]), OVERFLOW),
    row("tensor_2**70_int32", lambda m: m.tensor([2**70], dtype=m.int32), OVERFLOW),
    row("tensor_nan_int64", lambda m: m.tensor([NAN], dtype=m.int64), NOT_CONVERTED),
    row("tensor_inf_int64", lambda m: m.tensor([INF], dtype=m.int64), NOT_CONVERTED),
    row("tensor_-1e20_int64", lambda m: m.tensor([-1e20], dtype=m.int64), NOT_CONVERTED),
    row("tensor_1e30_int32", lambda m: m.tensor([1e30], dtype=m.int32), NOT_CONVERTED),
    row("tensor_2**40_int32", lambda m: m.tensor([2**40], dtype=m.int32), NOT_CONVERTED),
    row("tensor_2.0**40_int32", lambda m: m.tensor([2.0**40], dtype=m.int32), NOT_CONVERTED),
    row("tensor_3e9_int32", lambda m: m.tensor(3e9, dtype=m.int32), NOT_CONVERTED),
    row("tensor_int32_max+0.5", lambda m: m.tensor(2147483647.5, dtype=m.int32),
        NOT_CONVERTED),
    row("tensor_np_nan_int64", lambda m: m.tensor(np.float64(NAN), dtype=m.int64),
        NOT_CONVERTED),
    row("tensor_np_int_int32", lambda m: m.tensor(np.int64(2**40), dtype=m.int32),
        NOT_CONVERTED),
    row("tensor_bool_and_nan_int64", lambda m: m.tensor([True, NAN], dtype=m.int64),
        NOT_CONVERTED),
    row("tensor_-2**63", lambda m: m.tensor([-(2**63)]), None),
    row("tensor_2**63-1", lambda m: m.tensor(2**63 - 1), None),
    row("tensor_float_and_2**70", lambda m: m.tensor([1.5, 2**70]), None),
    row("tensor_2**70_float64", lambda m: m.tensor([2**70], dtype=m.float64), None),
    row("tensor_2**70_bool", lambda m: m.tensor([2**70], dtype=m.bool), None),
    row("tensor_nan_bool", lambda m: m.tensor([NAN], dtype=m.bool), None),
    row("tensor_2.7_int64", lambda m: m.tensor([2.7, -2.7], dtype=m.int64), None),
    # -- sizes of zeros / ones / empty / rand / randn -----------------------------------------
    row("zeros_negative", lambda m: m.zeros(-1), "Dimension size must be non-negative"),
    row("zeros_negative_in_tuple", lambda m: m.zeros((2, -1)),
        "Dimension size must be non-negative"),
    row("ones_negative", lambda m: m.ones(2, -3),
        "Trying to create tensor with negative dimension -3: [2, -3]"),
    row("empty_negative", lambda m: m.empty(-2),
        "Trying to create tensor with negative dimension -2"),
    row("rand_negative", lambda m: m.rand((-1, 2)),
        "Trying to create tensor with negative dimension -1"),
    row("randn_negative", lambda m: m.randn(2, -1),
        "Trying to create tensor with negative dimension -1"),
    row("zeros_float", lambda m: m.zeros(2.0), "must be tuple of ints, not float"),
    row("zeros_none", lambda m: m.zeros(None), "must be tuple of ints, not NoneType"),
    row("zeros_str", lambda m: m.zeros("2"), "must be tuple of ints, not str"),
    row("zeros_bool", lambda m: m.zeros(True), "must be tuple of ints, not bool"),
    row("zeros_float_tensor", lambda m: m.zeros(m.tensor(2.0)),
        "must be tuple of ints, not Tensor"),
    row("zeros_1d_tensor", lambda m: m.zeros(m.tensor([2, 3])),
        "must be tuple of ints, not Tensor"),
    row("zeros_tuple_float_first", lambda m: m.zeros((2.0,)),
        "found element of type float at pos 0"),
    row("zeros_tuple_float_second", lambda m: m.zeros((2, 2.0)),
        'failed to unpack the object at pos 2 with error "type must be tuple of ints'),
    row("zeros_args_float_second", lambda m: m.ones(2, 2.5), TUPLE_OF_INTS),
    row("zeros_list_none", lambda m: m.zeros([2, None]),
        "type must be tuple of ints,but got NoneType"),
    row("zeros_2**70", lambda m: m.zeros(2**70), OVERFLOW),
    row("zeros_2_2**70", lambda m: m.zeros(2, 2**70), OVERFLOW),
    row("zeros_np_int", lambda m: m.zeros(np.int64(2)), None),
    row("zeros_0d_int_tensor", lambda m: m.zeros(m.tensor(2)), None),
    row("zeros_np_int_in_tuple", lambda m: m.zeros((np.int64(2), 3)), None),
    row("zeros_empty_list", lambda m: m.zeros([]), None),
    row("rand_int64", lambda m: m.rand(2, dtype=m.int64),
        "\"check_uniform_bounds\" not implemented for 'Long'"),
    row("rand_bool", lambda m: m.rand(2, dtype=m.bool),
        "\"check_uniform_bounds\" not implemented for 'Bool'"),
    row("randn_int32", lambda m: m.randn(2, dtype=m.int32),
        "\"normal_kernel_cpu\" not implemented for 'Int'"),
    # -- arange ----------------------------------------------------------------------------------
    row("arange_nan", lambda m: m.arange(0, NAN), "unsupported range: 0 -> nan"),
    row("arange_nan_end_only", lambda m: m.arange(NAN), "unsupported range: 0 -> nan"),
    row("arange_inf", lambda m: m.arange(0, INF), "unsupported range: 0 -> inf"),
    row("arange_-inf", lambda m: m.arange(-INF, 1), "unsupported range: -inf -> 1"),
    row("arange_nan_int64", lambda m: m.arange(0, NAN, dtype=m.int64), "unsupported range"),
    row("arange_step_0", lambda m: m.arange(0, 5, 0), "step must be nonzero"),
    row("arange_step_nan", lambda m: m.arange(0, 1, NAN), "step must be nonzero"),
    row("arange_step_np_0", lambda m: m.arange(0, 5, np.float64(0)), "step must be nonzero"),
    row("arange_step_truncates_to_0", lambda m: m.arange(0, 2.5, 0.5, dtype=m.int64),
        "step must be nonzero"),
    row("arange_wrong_sign", lambda m: m.arange(0, 5, -1),
        "upper bound and lower bound inconsistent with step sign"),
    row("arange_descending_default_step", lambda m: m.arange(5, 0),
        "upper bound and lower bound inconsistent with step sign"),
    row("arange_bool", lambda m: m.arange(0, 2, dtype=m.bool),
        "\"arange_cpu\" not implemented for 'Bool'"),
    row("arange_str", lambda m: m.arange("a"), "argument 'end' (position 1) must be Number"),
    row("arange_none", lambda m: m.arange(None), "must be Number, not NoneType"),
    row("arange_1d_tensor", lambda m: m.arange(m.tensor([3])), "must be Number, not Tensor"),
    row("arange_str_end", lambda m: m.arange(0, "a"),
        "received an invalid combination of arguments - got (int, str)"),
    row("arange_2**70", lambda m: m.arange(2**70), "int too big to convert"),
    row("arange_1e20", lambda m: m.arange(0, 1e20), "invalid size, possible overflow?"),
    row("arange_int_truncates_bounds", lambda m: m.arange(0.5, 3.7, 1, dtype=m.int64), None),
    row("arange_int_truncates_step", lambda m: m.arange(0, 5, 1.5, dtype=m.int64), None),
    row("arange_int_negative_step", lambda m: m.arange(5, 0, -1.5, dtype=m.int64), None),
    row("arange_inf_step", lambda m: m.arange(0, 1, INF), None),
    row("arange_empty", lambda m: m.arange(0, 0), None),
    row("arange_0d_tensor", lambda m: m.arange(m.tensor(3)), None),
    row("arange_np_int", lambda m: m.arange(np.int64(3)), None),
    row("arange_bool_step", lambda m: m.arange(0, 3, True), None),
    row("arange_float_len", lambda m: m.arange(1, 2.5, 0.5), None),
    # -- linspace --------------------------------------------------------------------------------
    row("linspace_negative_steps", lambda m: m.linspace(0, 1, -1),
        "number of steps must be non-negative"),
    row("linspace_float_steps", lambda m: m.linspace(0, 1, 2.5),
        "received an invalid combination of arguments - got (int, int, float)"),
    row("linspace_bool_steps", lambda m: m.linspace(0, 1, True),
        "received an invalid combination of arguments - got (int, int, bool)"),
    row("linspace_none_steps", lambda m: m.linspace(0, 1, None),
        "received an invalid combination of arguments - got (int, int, NoneType)"),
    row("linspace_str_start", lambda m: m.linspace("a", 1, 3),
        "received an invalid combination of arguments - got (str, int, int)"),
    row("linspace_bool_dtype", lambda m: m.linspace(0, 1, 3, dtype=m.bool),
        "\"linspace_cpu\" not implemented for 'Bool'"),
    row("linspace_int32_overflow", lambda m: m.linspace(0, 3e9, 3, dtype=m.int32),
        "value cannot be converted to type int without overflow"),
    row("linspace_nan_int64", lambda m: m.linspace(NAN, 1, 3, dtype=m.int64),
        "value cannot be converted to type int64_t without overflow"),
    row("linspace_float16_overflow", lambda m: m.linspace(0, 1e30, 3, dtype=m.float16),
        "value cannot be converted to type c10::Half without overflow"),
    row("linspace_2**70_steps", lambda m: m.linspace(0, 1, 2**70), OVERFLOW),
    row("linspace_2**70_end", lambda m: m.linspace(0, 2**70, 3), "int too big to convert"),
    row("linspace_np_steps", lambda m: m.linspace(0, 1, np.int64(3)), None),
    row("linspace_0d_tensor_steps", lambda m: m.linspace(0, 1, m.tensor(3)), None),
    row("linspace_0d_tensor_start", lambda m: m.linspace(m.tensor(0.0), 1, 3), None),
    row("linspace_nan", lambda m: m.linspace(0, NAN, 3), None),
    row("linspace_int64", lambda m: m.linspace(0, 1, 3, dtype=m.int64), None),
    # -- reductions: dim and keepdim -------------------------------------------------------------
    row("sum_float_dim", lambda m: _x(m).sum(dim=1.5),
        "received an invalid combination of arguments"),
    row("sum_bool_dim", lambda m: _x(m).sum(dim=True),
        "received an invalid combination of arguments"),
    row("sum_str_dim", lambda m: m.sum(_x(m), dim="a"),
        "received an invalid combination of arguments - got (Tensor, dim=str)"),
    row("mean_float_dim", lambda m: m.mean(_x(m), dim=1.5),
        "received an invalid combination of arguments - got (Tensor, dim=float)"),
    row("amax_float_dim", lambda m: _x(m).amax(dim=1.5),
        "argument 'dim' must be tuple of ints, not float"),
    row("amax_bool_dim", lambda m: _x(m).amax(dim=True),
        "argument 'dim' must be tuple of ints, not bool"),
    row("logsumexp_float_dim", lambda m: m.logsumexp(_x(m), dim=1.5),
        "argument 'dim' must be tuple of ints, not float"),
    row("logsumexp_float_tensor_dim", lambda m: m.logsumexp(_x(m), dim=m.tensor(1.0)),
        "argument 'dim' must be tuple of ints, not Tensor"),
    row("sum_float_in_dims", lambda m: _x(m).sum(dim=(0, 1.5)),
        'failed to unpack the object at pos 2 with error "type must be tuple of ints,but got '
        'float"'),
    row("amax_none_in_dims", lambda m: _x(m).amax(dim=(0, None)),
        "type must be tuple of ints,but got NoneType"),
    row("sum_duplicate_dims", lambda m: _x(m).sum(dim=(0, 0)),
        "dim 0 appears multiple times in the list of dims"),
    row("mean_duplicate_dims_negative", lambda m: _x(m).mean(dim=(0, -2)),
        "dim 0 appears multiple times in the list of dims"),
    row("amax_duplicate_dims", lambda m: _x(m).amax(dim=[1, 1]),
        "dim 1 appears multiple times in the list of dims"),
    row("logsumexp_duplicate_dims", lambda m: m.logsumexp(_x(m), dim=(1, -1)),
        "dim 1 appears multiple times in the list of dims"),
    row("sum_0d_duplicate_dims", lambda m: m.tensor(1.0).sum(dim=(0, -1)),
        "dim 0 appears multiple times in the list of dims"),
    row("sum_dim_out_of_range", lambda m: _x(m).sum(dim=5),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    row("mean_dim_out_of_range_negative", lambda m: _x(m).mean(dim=-3),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    row("amax_dim_out_of_range_in_tuple", lambda m: _x(m).amax(dim=(0, 5)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    row("sum_0d_dim_1", lambda m: m.tensor(1.0).sum(dim=1),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    row("sum_int_keepdim", lambda m: _x(m).sum(dim=1, keepdim=1),
        "argument 'keepdim' must be bool, not int"),
    row("mean_none_keepdim", lambda m: _x(m).mean(dim=1, keepdim=None),
        "argument 'keepdim' must be bool, not NoneType"),
    row("sum_empty_dims_reduces_all", lambda m: _x(m).sum(dim=[]), None),
    row("mean_empty_dims_reduces_all", lambda m: _x(m).mean(dim=()), None),
    row("amax_empty_dims_reduces_all", lambda m: _x(m).amax(dim=[]), None),
    row("sum_np_int_dim", lambda m: _x(m).sum(dim=np.int64(1)), None),
    row("sum_0d_int_tensor_dim", lambda m: _x(m).sum(dim=m.tensor(1)), None),
    row("amax_1_element_tensor_dim", lambda m: _x(m).amax(dim=m.tensor([1])), None),
    row("sum_bool_in_dims", lambda m: _x(m).sum(dim=[0, True]), None),
    row("sum_np_int_in_dims", lambda m: _x(m).sum(dim=(np.int64(0), 1)), None),
    # -- indexing and __setitem__ ----------------------------------------------------------------
    row("index_float", lambda m: _x(m)[1.5], "only integers, slices"),
    row("index_float_in_tuple", lambda m: _x(m)[0, 1.5], "only integers, slices"),
    row("index_float_tensor", lambda m: _x(m)[m.tensor([0.0])],
        "tensors used as indices must be long, int, byte or bool tensors"),
    row("index_out_of_range", lambda m: _x(m)[2],
        "index 2 is out of bounds for dimension 0 with size 2"),
    row("index_negative_out_of_range", lambda m: _x(m)[-3],
        "index -3 is out of bounds for dimension 0 with size 2"),
    row("index_list_out_of_range", lambda m: _x(m)[[0, 5]],
        "index 5 is out of bounds for dimension 0 with size 2"),
    row("index_tensor_out_of_range", lambda m: _x(m)[m.tensor([5])],
        "index 5 is out of bounds for dimension 0 with size 2"),
    row("index_0d_tensor_out_of_range", lambda m: _x(m)[m.tensor(5)],
        "index 5 is out of bounds for dimension 0 with size 2"),
    row("index_too_many", lambda m: _x(m)[0, 0, 0], "too many indices for tensor of dimension 2"),
    row("index_mask_shape", lambda m: _x(m)[m.tensor([True, False, True])],
        "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor"),
    row("index_2**70", lambda m: _x(m)[2**70], OVERFLOW),
    row("index_list_2**70", lambda m: _x(m)[[2**70]], OVERFLOW),
    row("index_dict", lambda m: _x(m)[{}], "only integers, slices"),
    row("setitem_out_of_range", lambda m: _set(m, 2, 1.0),
        "index 2 is out of bounds for dimension 0 with size 2"),
    row("setitem_float_index", lambda m: _set(m, 1.5, 1.0), "only integers, slices"),
    row("setitem_tensor_out_of_range", lambda m: _set(m, lambda m: m.tensor([5]), 1.0),
        "index 5 is out of bounds for dimension 0 with size 2"),
    row("setitem_float_tensor_index", lambda m: _set(m, lambda m: m.tensor([0.0]), 1.0),
        "tensors used as indices must be long, int, byte or bool tensors"),
    row("setitem_nan_into_int", lambda m: _set(m, 0, NAN, "int64"), NOT_CONVERTED),
    row("setitem_2**70_into_int", lambda m: _set(m, 0, 2**70, "int64"), OVERFLOW),
    row("setitem_2**70_into_float", lambda m: _set(m, 0, 2**70), OVERFLOW),
    row("setitem_str", lambda m: _set(m, 0, "a"), "can't assign a str to a"),
    row("setitem_index_other_dtype", lambda m: _set(m, lambda m: m.tensor([0, 0]),
                                                     m.ones(2, 3, dtype=m.float64)),
        "Index put requires the source and destination dtypes match, got Float for the "
        "destination and Double for the source"),
    row("setitem_index_int_value", lambda m: _set(m, (0, [1, 2]), m.tensor([5, 6])),
        "Index put requires the source and destination dtypes match"),
    row("setitem_mask_other_dtype", lambda m: _set(m, lambda m: m.tensor([True, False]),
                                                   m.ones(1, 3, dtype=m.float64)),
        "Index put requires the source and destination dtypes match"),
    row("setitem_mask_0d_other_dtype", lambda m: _set(m, lambda m: m.tensor([True, False]),
                                                      m.tensor(5.0, dtype=m.float64)), None),
    row("setitem_slice_other_dtype", lambda m: _set(m, slice(0, 1), m.ones(3, dtype=m.int64)),
        None),
    row("view_2**70", lambda m: _x(m).view(2**70),
        "argument 'size' failed to unpack the object at pos 1 with error \"Overflow when "
        "unpacking long long"),
    row("reshape_2**70", lambda m: _x(m).reshape((2**70, 1)),
        "argument 'shape' failed to unpack the object at pos 1 with error \"Overflow when "
        "unpacking long long"),
    # -- .data and .grad -------------------------------------------------------------------------
    row("data_int_on_float_leaf", _int_data_on_float_leaf,
        "data set to a tensor that requires gradients must be floating point or complex dtype"),
    row("grad_shape_no_longer_matches_leaf", _stale_grad,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 0"),
]


def _outcome(module: Any, call: Callable[[Any], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call(module)
        except Exception as exc:
            return exc


def _values(t: Any) -> tuple[Any, str]:
    if t is None:
        return None, ""
    return t.tolist(), str(t.dtype).rpartition(".")[2]


def test_table_has_enough_rows() -> None:
    assert len(ROWS) >= 150


@pytest.mark.parametrize("call, phrase", ROWS)
def test_bad_value_as_torch_refuses_it(call: Callable[[Any], Any], phrase: str | None) -> None:
    expected = _outcome(torch, call)
    got = _outcome(rg, call)
    if phrase is None:  # a control: torch accepts the call, so must retrograd, with its values
        assert not isinstance(expected, Exception), f"the row is wrong: torch raised {expected!r}"
        assert not isinstance(got, Exception), f"retrograd raised {type(got).__name__}: {got}"
        e_vals, e_dtype = _values(expected)
        g_vals, g_dtype = _values(got)
        np.testing.assert_array_equal(np.array(g_vals, dtype=float),
                                      np.array(e_vals, dtype=float))
        assert g_dtype == e_dtype.replace("bool", "bool"), (g_dtype, e_dtype)
        return
    assert isinstance(expected, Exception), f"the row is wrong: torch gives {expected!r}"
    assert phrase.lower() in str(expected).lower(), f"the row is wrong: torch says {expected}"
    assert isinstance(got, Exception), f"retrograd accepts it ({got!r}); torch raises {expected!r}"
    assert isinstance(got, type(expected)), (
        f"retrograd raised {type(got).__name__} ({got}); torch raises "
        f"{type(expected).__name__} ({expected})")
    assert phrase.lower() in str(got).lower(), f"{phrase!r} not in retrograd's message: {got}"


def test_errors_name_the_culprit() -> None:
    """Beyond PyTorch's key phrase, retrograd's message names the value that was wrong."""
    for call, culprit in (
        (lambda: rg.tensor([2**70]), str(2**70)),
        (lambda: rg.tensor([1e30], dtype=rg.int32), "1e+30"),
        (lambda: rg.full((2,), 2**70), str(2**70)),
        (lambda: rg.arange(0, 2.5, 0.5, dtype=rg.int64), "0.5"),
        (lambda: rg.ones(2, 3).sum(dim=(0, 0)), "(0, 0)"),
        (lambda: rg.zeros(2, -1), "[2, -1]"),
        (lambda: rg.ones(3)[[2**70]], str(2**70)),
    ):
        with pytest.raises(Exception) as info:
            call()
        assert culprit in str(info.value), str(info.value)


def test_negative_size_is_still_a_value_error() -> None:
    """Code written against the old class (``except ValueError``) still catches it."""
    for call in (lambda: rg.zeros(-1), lambda: rg.ones(2, -3), lambda: rg.full((-1,), 1.0)):
        with pytest.raises(ValueError):
            call()
        with pytest.raises(RuntimeError):
            call()
