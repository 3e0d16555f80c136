"""Errors as PyTorch raises them: a table of bad calls, each run on torch (the oracle) and on
retrograd. For every row: retrograd raises iff torch raises, retrograd's exception is an
instance of torch's class (RuntimeError, TypeError, IndexError, ValueError, KeyError), and the
row's key phrase appears in both messages (compared case-insensitively). Rows whose phrase is
None are controls: neither library may raise.

Rows that fail because of a file this test's author does not own are marked
``xfail(strict=True, reason="owner: <file>")``: they turn into failures once fixed, and the
mark is then removed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


def row(name: str, call: Callable[[Any], Any], phrase: str | None,
        owner: str | None = None) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=f"owner: {owner}")] if owner else []
    return pytest.param(call, phrase, id=name, marks=marks)


# -- helpers: each takes the library module (torch or retrograd) --------------------------------
def _param(m: Any) -> Any:
    return m.nn.Parameter(m.ones(2))


def _setitem(m: Any, key: Any, value: Callable[[Any], Any], shape: tuple[int, ...] = (3,)) -> None:
    x = m.ones(*shape)
    x[key(m) if callable(key) else key] = value(m)


def _recorded_setitem(m: Any) -> None:
    x = m.ones(2, 3, requires_grad=True) * 1
    x[0:1] = m.ones(3, 3)


def _load_state(m: Any, mismatch: str) -> None:
    p, q = _param(m), _param(m)
    a = m.optim.SGD([p], lr=0.1)
    other = [p, q] if mismatch == "size" else [{"params": [p]}, {"params": [q]}]
    a.load_state_dict(m.optim.SGD(other, lr=0.1).state_dict())


def _assign_grad(m: Any, value: Callable[[Any], Any]) -> None:
    x = m.ones(2, 3, requires_grad=True)
    x.grad = value(m)


def _own_grad(m: Any) -> None:
    x = m.ones(2, requires_grad=True)
    x.grad = x


def _nonleaf(m: Any) -> Any:
    return m.ones(3, requires_grad=True) * 1


def _retained(m: Any) -> Any:
    x = m.ones(2, requires_grad=True) * 2
    x.retain_grad()
    return x


def _in_two_groups(m: Any) -> Any:
    p = _param(m)
    return m.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _duplicate(m: Any) -> Any:
    p = _param(m)
    return m.optim.SGD([p, p], lr=0.1)


def _add_group(m: Any, group: Any) -> None:
    m.optim.SGD([_param(m)], lr=0.1).add_param_group(group)


def _iter_0d(m: Any) -> Any:
    return list(m.tensor(1.0))


ROWS = [
    # -- reshape / view ---------------------------------------------------------------------
    row("reshape_wrong_size", lambda m: m.ones(2, 3).reshape(4),
        "shape '[4]' is invalid for input of size 6"),
    row("reshape_wrong_size_tuple", lambda m: m.ones(2, 3).reshape((4, 2)),
        "shape '[4, 2]' is invalid for input of size 6"),
    row("reshape_function", lambda m: m.reshape(m.ones(2, 3), (5,)),
        "shape '[5]' is invalid for input of size 6"),
    row("view_wrong_size", lambda m: m.ones(2, 3).view(4),
        "shape '[4]' is invalid for input of size 6"),
    row("view_as_wrong_size", lambda m: m.ones(2, 3).view_as(m.ones(4)),
        "is invalid for input of size 6"),
    row("reshape_two_inferred", lambda m: m.ones(2, 3).reshape(-1, -1),
        "only one dimension can be inferred"),
    row("view_two_inferred", lambda m: m.ones(2, 3).view(-1, -1),
        "only one dimension can be inferred"),
    row("reshape_inferred_does_not_fit", lambda m: m.ones(2, 3).reshape(4, -1),
        "shape '[4, -1]' is invalid for input of size 6"),
    row("reshape_negative_size", lambda m: m.ones(2, 3).reshape(-2, 3),
        "invalid shape dimension -2"),
    row("reshape_empty_ambiguous", lambda m: m.ones(0, 3).reshape(-1, 0),
        "cannot reshape tensor of 0 elements"),
    row("reshape_float_size", lambda m: m.ones(2, 3).reshape(2.0, 3), "argument"),
    row("view_non_contiguous", lambda m: m.ones(3, 4).T.view(12),
        "view size is not compatible with input tensor's size and stride"),
    row("reshape_inferred_ok", lambda m: m.ones(2, 3).reshape(-1, 2), None),
    row("reshape_numpy_int_ok", lambda m: m.ones(2, 3).reshape(np.int64(6)), None),
    # -- permute / transpose ------------------------------------------------------------------
    row("permute_too_few_dims", lambda m: m.ones(2, 3).permute(0),
        "does not match the length of the desired ordering of dimensions"),
    row("permute_too_many_dims", lambda m: m.ones(2, 3).permute(0, 1, 2),
        "does not match the length of the desired ordering of dimensions"),
    row("permute_0d_with_dims", lambda m: m.tensor(1.0).permute(0),
        "does not match the length of the desired ordering of dimensions"),
    row("permute_repeated_dim", lambda m: m.ones(2, 3).permute(0, 0),
        "duplicate dims are not allowed"),
    row("permute_dim_out_of_range", lambda m: m.ones(2, 3).permute([0, 5]),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    row("permute_float_dim", lambda m: m.ones(2, 3).permute(0.0, 1), "argument"),
    row("transpose_dim_out_of_range", lambda m: m.ones(2, 3).transpose(0, 2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    row("transpose_negative_out_of_range", lambda m: m.ones(2, 3).transpose(-3, 0),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    row("transpose_0d_out_of_range", lambda m: m.tensor(1.0).transpose(0, 1),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    row("transpose_float_dim", lambda m: m.ones(2, 3).transpose(0, 1.0), "must be int"),
    row("transpose_bool_dim", lambda m: m.ones(2, 3).transpose(True, 0), "must be int"),
    row("transpose_0d_ok", lambda m: m.tensor(1.0).transpose(0, -1), None),
    row("mT_of_1d", lambda m: m.ones(3).mT,
        "only supported on matrices or batches of matrices"),
    # -- squeeze / unsqueeze / flatten --------------------------------------------------------
    row("squeeze_dim_out_of_range", lambda m: m.ones(2, 3).squeeze(2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    row("squeeze_dims_out_of_range", lambda m: m.ones(2, 3).squeeze((0, 5)),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    row("squeeze_repeated_dim", lambda m: m.ones(2, 3).squeeze((0, 0)),
        "dim 0 appears multiple times in the list of dims"),
    row("squeeze_float_dim", lambda m: m.ones(2, 3).squeeze(1.0), "float"),
    row("unsqueeze_dim_out_of_range", lambda m: m.ones(2, 3).unsqueeze(3),
        "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    row("unsqueeze_negative_out_of_range", lambda m: m.ones(2, 3).unsqueeze(-4),
        "Dimension out of range (expected to be in range of [-3, 2], but got -4)"),
    row("unsqueeze_0d_out_of_range", lambda m: m.tensor(1.0).unsqueeze(2),
        "Dimension out of range (expected to be in range of [-1, 0], but got 2)"),
    row("unsqueeze_float_dim", lambda m: m.ones(2, 3).unsqueeze(1.0), "must be int, not float"),
    row("flatten_start_out_of_range", lambda m: m.ones(2, 3).flatten(5),
        "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    row("flatten_end_out_of_range", lambda m: m.ones(2, 3).flatten(0, -3),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    row("flatten_0d_out_of_range", lambda m: m.tensor(1.0).flatten(1),
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    row("flatten_start_after_end", lambda m: m.ones(2, 3, 4).flatten(2, 1),
        "start_dim cannot come after end_dim"),
    row("flatten_float_dim", lambda m: m.ones(2, 3).flatten(0, 1.0),
        "argument 'end_dim'"),
    # -- expand -----------------------------------------------------------------------------
    row("expand_too_few_sizes", lambda m: m.ones(2, 3).expand(3),
        "the number of sizes provided (1) must be greater or equal to the number of "
        "dimensions in the tensor (2)"),
    row("expand_size_mismatch", lambda m: m.ones(3).expand(2, 4),
        "The expanded size of the tensor (4) must match the existing size (3) at "
        "non-singleton dimension 1"),
    row("expand_negative_size", lambda m: m.ones(3).expand(2, -2),
        "The expanded size of the tensor (-2) must match the existing size (3)"),
    row("expand_leading_minus_one", lambda m: m.ones(3).expand(-1, 3),
        "isn't allowed in a leading, non-existing dimension 0"),
    row("expand_as_mismatch", lambda m: m.ones(3).expand_as(m.ones(2, 4)),
        "must match the existing size (3) at non-singleton dimension 1"),
    row("expand_float_size", lambda m: m.ones(3).expand(2.0, 3), "argument"),
    row("expand_minus_one_ok", lambda m: m.ones(2, 3).expand(3, -1, 3), None),
    # -- cat / stack ------------------------------------------------------------------------
    row("cat_empty", lambda m: m.cat([]), "expected a non-empty list of Tensors"),
    row("cat_sizes_mismatch", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]),
        "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
        "for tensor number 1 in the list"),
    row("cat_sizes_mismatch_dim1", lambda m: m.cat([m.ones(2, 3), m.ones(3, 4)], dim=1),
        "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3"),
    row("cat_ndims_mismatch", lambda m: m.cat([m.ones(2, 3), m.ones(2)]),
        "Tensors must have same number of dimensions: got 2 and 1"),
    row("cat_dim_out_of_range", lambda m: m.cat([m.ones(2, 3)], dim=2),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    row("cat_zero_dim", lambda m: m.cat([m.tensor(1.0), m.tensor(2.0)]),
        "zero-dimensional tensor (at position 0) cannot be concatenated"),
    row("cat_zero_dim_second", lambda m: m.cat([m.ones(2, 3), m.tensor(1.0)]),
        "zero-dimensional tensor (at position 1) cannot be concatenated"),
    row("cat_of_a_tensor", lambda m: m.cat(m.ones(2, 3)), "must be tuple of Tensors"),
    row("cat_non_tensor_element", lambda m: m.cat([m.ones(2), 1]),
        "expected Tensor as element 1"),
    row("stack_empty", lambda m: m.stack([]), "stack expects a non-empty TensorList"),
    row("stack_sizes_mismatch", lambda m: m.stack([m.ones(2), m.ones(3)]),
        "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at "
        "entry 1"),
    row("stack_dim_out_of_range", lambda m: m.stack([m.ones(2)], dim=3),
        "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    row("stack_dim_checked_before_sizes", lambda m: m.stack([m.ones(2), m.ones(3)], dim=5),
        "Dimension out of range"),
    row("stack_non_tensor_element", lambda m: m.stack([m.ones(2), "a"]),
        "expected Tensor as element 1"),
    # -- getitem ------------------------------------------------------------------------------
    row("getitem_out_of_range", lambda m: m.ones(3)[5],
        "index 5 is out of bounds for dimension 0 with size 3"),
    row("getitem_negative_out_of_range", lambda m: m.ones(3)[-4],
        "index -4 is out of bounds for dimension 0 with size 3"),
    row("getitem_second_dim_out_of_range", lambda m: m.ones(2, 3)[:, 3],
        "index 3 is out of bounds for dimension 1 with size 3"),
    row("getitem_after_ellipsis_out_of_range", lambda m: m.ones(2, 3)[..., 7],
        "index 7 is out of bounds for dimension 1 with size 3"),
    row("getitem_too_many_indices", lambda m: m.ones(3)[0, 0],
        "too many indices for tensor of dimension 1"),
    row("getitem_too_many_with_slice", lambda m: m.ones(2, 3)[0:1, 0, 0],
        "too many indices for tensor of dimension 2"),
    row("getitem_of_0d", lambda m: m.tensor(1.0)[0], "invalid index of a 0-dim tensor"),
    row("getitem_bool_mask_shape", lambda m: m.ones(3)[m.tensor([True, False])],
        "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
        "[3] at index 0"),
    row("getitem_bool_mask_2d_shape", lambda m: m.ones(2, 3)[m.ones(2, 2).bool()],
        "The shape of the mask [2, 2] at index 1 does not match"),
    row("getitem_index_tensor_out_of_range", lambda m: m.ones(3)[m.tensor([0, 5])],
        "index 5 is out of bounds for dimension 0 with size 3"),
    row("getitem_index_list_out_of_range", lambda m: m.ones(3)[[0, 3]],
        "index 3 is out of bounds for dimension 0 with size 3"),
    row("getitem_two_lists_out_of_range", lambda m: m.ones(2, 3)[[0, 1], [0, 5]],
        "index 5 is out of bounds for dimension 1 with size 3"),
    row("getitem_float_index_tensor", lambda m: m.ones(3)[m.tensor([0.5])],
        "tensors used as indices must be long, int, byte or bool tensors"),
    row("getitem_float", lambda m: m.ones(3)[1.5], "are valid indices (got float)"),
    row("getitem_object", lambda m: m.ones(3)[object()], "are valid indices (got object)"),
    row("getitem_str", lambda m: m.ones(3)["a"], "invalid data type 'str'"),
    row("getitem_ok", lambda m: m.ones(2, 3)[None, ..., -1], None),
    # -- setitem ------------------------------------------------------------------------------
    row("setitem_shape_mismatch", lambda m: _setitem(m, slice(0, 2), lambda m: m.ones(3)),
        "The expanded size of the tensor (2) must match the existing size (3) at "
        "non-singleton dimension 0"),
    row("setitem_value_has_more_dims", lambda m: _setitem(m, 0, lambda m: m.ones(2, 3), (2, 3)),
        "the number of sizes provided (1) must be greater or equal to the number of "
        "dimensions in the tensor (2)"),
    row("setitem_recorded_shape_mismatch", _recorded_setitem,
        "The expanded size of the tensor (1) must match the existing size (3)"),
    row("setitem_out_of_range", lambda m: _setitem(m, 5, lambda m: 1.0),
        "index 5 is out of bounds for dimension 0 with size 3"),
    row("setitem_bool_mask_shape",
        lambda m: _setitem(m, lambda m: m.tensor([True, False]), lambda m: 0.0),
        "The shape of the mask [2] at index 0 does not match"),
    row("setitem_str_value", lambda m: _setitem(m, 0, lambda m: "a"), "str"),
    row("setitem_leading_ones_ok", lambda m: _setitem(m, 0, lambda m: m.ones(1, 1, 3), (2, 3)),
        None),
    # -- in-place ops ---------------------------------------------------------------------------
    row("add_broadcast_to_bigger", lambda m: m.ones(3).add_(m.ones(2, 3)),
        "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    row("mul_broadcast_to_bigger", lambda m: m.ones(3).mul_(m.ones(2, 3)),
        "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    row("sub_broadcast_to_bigger", lambda m: m.ones(1, 3).sub_(m.ones(2, 3)),
        "output with shape [1, 3] doesn't match the broadcast shape [2, 3]"),
    row("iadd_broadcast_to_bigger", lambda m: m.ones(3).__iadd__(m.ones(2, 3)),
        "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    row("add_sizes_mismatch", lambda m: m.ones(3).add_(m.ones(4)),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 0"),
    row("div_sizes_mismatch", lambda m: m.ones(2, 3).div_(m.ones(3, 4)),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 1"),
    row("recorded_add_broadcast_to_bigger", lambda m: _nonleaf(m).add_(m.ones(2, 3)),
        "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    row("recorded_mul_sizes_mismatch", lambda m: _nonleaf(m).mul_(m.ones(4)),
        "The size of tensor a (3) must match the size of tensor b (4)"),
    row("copy_sizes_mismatch", lambda m: m.ones(3).copy_(m.ones(4)),
        "The size of tensor a (3) must match the size of tensor b (4)"),
    row("copy_from_bigger", lambda m: m.ones(3).copy_(m.ones(2, 3)),
        "output with shape [3] doesn't match the broadcast shape [2, 3]"),
    row("copy_from_list", lambda m: m.ones(3).copy_([1.0, 2.0, 3.0]), "must be Tensor"),
    row("fill_with_1d_tensor", lambda m: m.ones(3).fill_(m.ones(2)),
        "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions"),
    row("add_str_in_place", lambda m: m.ones(3).add_("a"), "str"),
    row("leaf_in_place", lambda m: m.ones(3, requires_grad=True).add_(1),
        "requires grad is being used in an in-place operation"),
    row("add_broadcast_ok", lambda m: m.ones(2, 3).add_(m.ones(3)), None),
    row("copy_broadcast_ok", lambda m: m.ones(1, 3).copy_(m.ones(3)), None),
    # -- to() -------------------------------------------------------------------------------
    row("to_unknown_keyword", lambda m: m.ones(2).to(foo=1), "to()"),
    row("to_list", lambda m: m.ones(2).to([1]), "to()"),
    row("to_unknown_device_type", lambda m: m.ones(2).to("nosuchdev"),
        "device type at start of device string"),
    row("to_bad_device_index", lambda m: m.ones(2).to("cpu:x"), "device string"),
    row("to_dtype_ok", lambda m: m.ones(2).to(m.float64), None),
    # -- item / len / bool / iteration ------------------------------------------------------
    row("item_of_many", lambda m: m.ones(3).item(),
        "a Tensor with 3 elements cannot be converted to Scalar"),
    row("item_of_empty", lambda m: m.ones(0).item(),
        "a Tensor with 0 elements cannot be converted to Scalar"),
    row("float_of_many", lambda m: float(m.ones(3)), "converted"),
    row("len_of_0d", lambda m: len(m.tensor(1.0)), "len() of a 0-d tensor"),
    row("iter_of_0d", _iter_0d, "0-d tensor"),
    row("bool_of_many", lambda m: bool(m.ones(3)), "is ambiguous"),
    row("index_with_float_tensor", lambda m: [1, 2][m.tensor(1.0)],
        "only integer tensors of a single element can be"),
    # -- optimizers -------------------------------------------------------------------------
    row("sgd_negative_lr", lambda m: m.optim.SGD([_param(m)], lr=-1.0),
        "Invalid learning rate: -1.0"),
    row("sgd_lr_checked_before_params", lambda m: m.optim.SGD([], lr=-1.0),
        "Invalid learning rate"),
    row("sgd_empty_params", lambda m: m.optim.SGD([], lr=0.1),
        "optimizer got an empty parameter list"),
    row("sgd_non_leaf", lambda m: m.optim.SGD([m.ones(2, requires_grad=True) * 2], lr=0.1),
        "can't optimize a non-leaf Tensor"),
    row("sgd_tensor_as_params", lambda m: m.optim.SGD(_param(m), lr=0.1),
        "params argument given to the optimizer should be an iterable of Tensors or dicts"),
    row("sgd_negative_momentum", lambda m: m.optim.SGD([_param(m)], lr=0.1, momentum=-1.0),
        "Invalid momentum value: -1.0"),
    row("sgd_negative_weight_decay",
        lambda m: m.optim.SGD([_param(m)], lr=0.1, weight_decay=-1.0),
        "Invalid weight_decay value: -1.0"),
    row("sgd_nesterov_without_momentum", lambda m: m.optim.SGD([_param(m)], nesterov=True),
        "Nesterov momentum requires a momentum and zero dampening"),
    row("sgd_nesterov_with_dampening",
        lambda m: m.optim.SGD([_param(m)], momentum=0.9, dampening=0.1, nesterov=True),
        "Nesterov momentum requires a momentum and zero dampening"),
    row("sgd_float_param", lambda m: m.optim.SGD([1.0], lr=0.1),
        "optimizer can only optimize Tensors, but one of the params is float"),
    row("sgd_set_in_group", lambda m: m.optim.SGD([{"params": {_param(m)}}], lr=0.1),
        "need to be organized in ordered collections"),
    row("sgd_group_without_params", lambda m: m.optim.SGD([{"lr": 0.1}], lr=0.1), "params"),
    row("sgd_param_in_two_groups", _in_two_groups,
        "some parameters appear in more than one parameter group"),
    row("add_param_group_not_dict", lambda m: _add_group(m, [_param(m)]),
        "param_group must be a dict"),
    row("add_param_group_overlap",
        lambda m: (lambda p: m.optim.SGD([p], lr=0.1).add_param_group({"params": p}))(
            _param(m)),
        "some parameters appear in more than one parameter group"),
    row("adam_beta1", lambda m: m.optim.Adam([_param(m)], betas=(1.0, 0.9)),
        "Invalid beta parameter at index 0: 1.0"),
    row("adam_beta2", lambda m: m.optim.Adam([_param(m)], betas=(0.9, 1.0)),
        "Invalid beta parameter at index 1: 1.0"),
    row("adam_negative_beta", lambda m: m.optim.Adam([_param(m)], betas=(-0.1, 0.9)),
        "Invalid beta parameter at index 0: -0.1"),
    row("adam_negative_eps", lambda m: m.optim.Adam([_param(m)], eps=-1.0),
        "Invalid epsilon value: -1.0"),
    row("adam_eps_checked_before_betas",
        lambda m: m.optim.Adam([_param(m)], eps=-1.0, betas=(2.0, 2.0)),
        "Invalid epsilon value"),
    row("adam_negative_lr", lambda m: m.optim.Adam([_param(m)], lr=-1.0),
        "Invalid learning rate: -1.0"),
    row("adam_nan_lr", lambda m: m.optim.Adam([_param(m)], lr=float("nan")),
        "Invalid learning rate: nan"),
    row("adam_negative_weight_decay", lambda m: m.optim.Adam([_param(m)], weight_decay=-1.0),
        "Invalid weight_decay value: -1.0"),
    row("adamw_negative_lr", lambda m: m.optim.AdamW([_param(m)], lr=-1.0),
        "Invalid learning rate: -1.0"),
    row("adam_empty_params", lambda m: m.optim.Adam([]),
        "optimizer got an empty parameter list"),
    row("load_state_dict_group_count", lambda m: _load_state(m, "groups"),
        "loaded state dict has a different number of parameter groups"),
    row("load_state_dict_group_size", lambda m: _load_state(m, "size"),
        "loaded state dict contains a parameter group that doesn't match the size of"),
    row("sgd_default_lr_ok", lambda m: m.optim.SGD([_param(m)]), None),
    row("sgd_retained_non_leaf_ok", lambda m: m.optim.SGD([_retained(m)], lr=0.1), None),
    row("sgd_group_lr_override_unchecked_ok",
        lambda m: m.optim.SGD([{"params": [_param(m)], "lr": -1.0}], lr=0.1), None),
    row("sgd_duplicate_param_warns_only", _duplicate, None),
    # -- .grad assignment ------------------------------------------------------------------------
    row("grad_of_wrong_shape", lambda m: _assign_grad(m, lambda m: m.ones(3, 2)),
        "assign a gradient of size '[3, 2]' to a tensor of size '[2, 3]'"),
    row("grad_of_wrong_dtype",
        lambda m: _assign_grad(m, lambda m: m.ones(2, 3, dtype=m.float64)),
        "assign a gradient with dtype"),
    row("grad_ndarray", lambda m: _assign_grad(m, lambda m: np.ones((2, 3))),
        "assigned grad expected to be a Tensor or None"),
    row("grad_is_itself", _own_grad, "as its own grad"),
    # -- autograd misuse (already as PyTorch) -----------------------------------------------------
    row("backward_without_grad", lambda m: m.ones(2).sum().backward(),
        "does not require grad and does not have a grad_fn"),
    row("backward_non_scalar", lambda m: (m.ones(2, requires_grad=True) * 2).backward(),
        "grad can be implicitly created only for scalar outputs"),
    row("requires_grad_false_on_non_leaf",
        lambda m: setattr(m.ones(2, requires_grad=True) * 2, "requires_grad", False),
        "you can only change requires_grad flags of leaf variables"),
    row("retain_grad_without_grad", lambda m: m.ones(2).retain_grad(), "can't retain_grad on"),
    row("numpy_of_requires_grad", lambda m: m.ones(2, requires_grad=True).numpy(),
        "call numpy() on"),
    row("int_tensor_requires_grad", lambda m: m.tensor([1, 2], requires_grad=True),
        "floating point"),
    # -- other owners' ops --------------------------------------------------------------------
    row("matmul_shapes", lambda m: m.ones(2, 3) @ m.ones(4, 5),
        "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    row("matmul_0d", lambda m: m.tensor(1.0) @ m.ones(2),
        "both arguments to matmul need to be at least 1D"),
    row("matmul_1d_sizes", lambda m: m.ones(3) @ m.ones(4), "inconsistent tensor size"),
    row("matmul_batched_sizes", lambda m: m.ones(2, 2, 3) @ m.ones(2, 4, 5),
        "Expected size for first two dimensions of batch2 tensor"),
    row("linear_weight_shape", lambda m: m.nn.functional.linear(m.ones(4, 3), m.ones(5, 4)),
        "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
    row("linear_bias_shape",
        lambda m: m.nn.functional.linear(m.ones(4, 3), m.ones(5, 3), m.ones(4)),
        "The expanded size of the tensor (5) must match the existing size (4)"),
    row("add_sizes_mismatch_out_of_place", lambda m: m.ones(3) + m.ones(4),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 0"),
    row("where_sizes_mismatch", lambda m: m.where(m.ones(3) > 0, m.ones(3), m.ones(4)),
        "The size of tensor a (3) must match the size of tensor b (4)"),
    row("where_float_condition", lambda m: m.where(m.ones(3), m.ones(3), m.ones(3)),
        "where expected condition to be a boolean tensor"),
    row("clamp_without_bounds", lambda m: m.ones(3).clamp(),
        "At least one of 'min' or 'max' must not be None"),
    row("add_str_out_of_place", lambda m: m.ones(3) + "a", "str"),
    row("sum_dim_out_of_range", lambda m: m.ones(3).sum(dim=5),
        "Dimension out of range (expected to be in range of [-1, 0], but got 5)"),
    row("sum_float_dim", lambda m: m.ones(3).sum(dim=1.5), "float"),
    row("mean_of_int", lambda m: m.tensor([1, 2]).mean(),
        "Input dtype must be either a floating point or complex dtype"),
    row("amax_of_empty", lambda m: m.ones(0).amax(), "amax(): Expected reduction dim"),
    row("softmax_dim_out_of_range", lambda m: m.ones(3).softmax(dim=2),
        "Dimension out of range (expected to be in range of [-1, 0], but got 2)"),
    row("cross_entropy_target_out_of_range",
        lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 5])),
        "Target 5 is out of bounds"),
    row("cross_entropy_batch_sizes",
        lambda m: m.nn.functional.cross_entropy(m.ones(2, 3), m.tensor([0, 1, 2])),
        "Expected input batch_size (2) to match target batch_size (3)"),
    row("mse_loss_sizes", lambda m: m.nn.functional.mse_loss(m.ones(3), m.ones(4)),
        "The size of tensor a (3) must match the size of tensor b (4)"),
    row("ones_negative_size", lambda m: m.ones(-1),
        "Trying to create tensor with negative dimension -1"),
    row("arange_zero_step", lambda m: m.arange(0, 1, 0), "step must be nonzero"),
    row("tensor_ragged", lambda m: m.tensor([[1.0, 2.0], [3.0]]),
        "expected sequence of length 2 at dim 1 (got 1)"),
    row("zeros_unknown_device_type", lambda m: m.zeros(2, device="nosuchdev"),
        "device type at start of device string"),
]


def _outcome(module: Any, call: Callable[[Any], Any]) -> BaseException | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(module)
        except Exception as exc:
            return exc
    return None


def test_table_has_enough_rows() -> None:
    assert len(ROWS) >= 60


@pytest.mark.parametrize("call, phrase", ROWS)
def test_error_as_torch_raises_it(call: Callable[[Any], Any], phrase: str | None) -> None:
    expected = _outcome(torch, call)
    got = _outcome(rg, call)
    if phrase is None:  # a control: torch accepts the call, so must retrograd
        assert expected is None, f"the row is wrong: torch raised {expected!r}"
        assert got is None, f"retrograd raised {type(got).__name__}: {got}"
        return
    assert expected is not None, "the row is wrong: torch does not raise"
    assert phrase.lower() in str(expected).lower(), f"the row is wrong: torch says {expected}"
    assert got is not None, f"retrograd does not raise; torch raises {expected!r}"
    assert isinstance(got, type(expected)), (
        f"retrograd raised {type(got).__name__} ({got}); torch raises "
        f"{type(expected).__name__} ({expected})")
    assert phrase.lower() in str(got).lower(), f"{phrase!r} not in retrograd's message: {got}"


def test_duplicate_parameter_warns_as_in_torch() -> None:
    p = rg.nn.Parameter(rg.ones(2))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        rg.optim.SGD([p, p], lr=0.1)


def test_shape_errors_are_also_value_errors() -> None:
    """Code written against the old classes (``except ValueError``) still catches them."""
    for call in (lambda: rg.ones(2, 3).reshape(4), lambda: rg.ones(3).expand(2, 4),
                 lambda: rg.cat([rg.ones(2, 3), rg.ones(2, 4)]),
                 lambda: rg.ones(3).add_(rg.ones(2, 3)), lambda: rg.ones(2).to("nosuchdev")):
        with pytest.raises(ValueError):
            call()
        with pytest.raises(RuntimeError):
            call()
