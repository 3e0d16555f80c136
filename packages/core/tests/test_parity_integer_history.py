"""Integer and bool tensors given history by a recorded in-place write, against PyTorch.

``m[mask] = w[0]`` or ``m.fill_(w[0])`` on an integer or bool ``m`` gives it a history (as in
PyTorch). Any op whose output would then be an integer or bool tensor with history is refused
with PyTorch's "Autograd not support dtype"; ops with a float result record, and ops with no
gradient (comparisons, detach) are plain. Before, retrograd recorded them all."""

from __future__ import annotations

import pytest
from torch_parity import same

WRITES = {
    "index_put": lambda lib, m, w: m.__setitem__(lib.tensor([False, False]), w[0]),
    "fill_": lambda lib, m, w: m.fill_(w[0]),
    "fill_through_view": lambda lib, m, w: m[0:1].fill_(w[0]),
}

USES = {
    "select": lambda lib, m, w: m[0],
    "add_int": lambda lib, m, w: m + 1,
    "mul_float": lambda lib, m, w: m * 1.5,
    "to_float": lambda lib, m, w: m.float(),
    "eq": lambda lib, m, w: m == 1,
    "sum": lambda lib, m, w: m.sum(),
    "view": lambda lib, m, w: m.view(2),
    "clone": lambda lib, m, w: m.clone(),
    "add_leaf": lambda lib, m, w: m + w,
    "detach": lambda lib, m, w: m.detach(),
    "history": lambda lib, m, w: (m.requires_grad, m.is_leaf),
}


@pytest.mark.parametrize("dtype", ["bool", "int64", "int32"])
@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("use", list(USES))
def test_op_on_integer_tensor_with_history(dtype, write, use):
    def program(lib):
        w = lib.tensor([1.5, -1.0], requires_grad=True)
        m = lib.tensor([1, 0], dtype=getattr(lib, dtype))
        WRITES[write](lib, m, w)
        out = USES[use](lib, m, w)
        return out, getattr(out, "requires_grad", None)

    same(program, "Autograd not support dtype")


@pytest.mark.parametrize("taken", ["before", "after"])
def test_view_of_integer_tensor_with_history_is_taken_again(taken):
    """PyTorch takes such a view again (AsStridedBackward0) without the dtype refusal."""
    def program(lib):
        w = lib.tensor([1.5, -1.0], requires_grad=True)
        m = lib.tensor([True, False, True])
        if taken == "before":
            v = m[1:]
        m.fill_(w[0])
        if taken == "after":
            with lib.no_grad():
                v = m.detach()[1:]
            return v.is_leaf, v.requires_grad
        return v.is_leaf, v.requires_grad, v.grad_fn.name()

    same(program)
