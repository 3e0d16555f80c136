"""Views and inference mode, against PyTorch: a view of an inference tensor is not
differentiable (inside inference mode or out of it), and a view made inside inference mode
of a normal tensor is refused with PyTorch's inference-mode words when it or its base is
later changed in place in normal mode."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from torch_parity import same


def _view_of_inference_inside(lib: Any) -> Any:
    with lib.inference_mode():
        c = lib.ones(2, 3, requires_grad=True)
        v = c.view(-1)
    return v.requires_grad, v.grad_fn is None, v.is_leaf


def _view_of_inference_outside(lib: Any) -> Any:
    with lib.inference_mode():
        c = lib.ones(2, 3, requires_grad=True)
    v = c.view(-1)
    return v.requires_grad, v.grad_fn is None, v.is_leaf


def _backward_of_view_of_inference(lib: Any) -> Any:
    with lib.inference_mode():
        c = lib.ones(2, 3, requires_grad=True)
    c.view(-1).sum().backward()


def _indexed_view_of_inference(lib: Any) -> Any:
    with lib.inference_mode():
        c = lib.ones(2, 3, requires_grad=True)
    v = c[0]
    return v.requires_grad, (v * 2).requires_grad


def _inference_view_written_outside(lib: Any) -> Any:
    w = lib.ones(2, 3, requires_grad=True).clone()
    with lib.inference_mode():
        v = w.view(-1)
    v.mul_(2)


def _base_written_then_inference_view_used(lib: Any) -> Any:
    w = lib.ones(2, 3, requires_grad=True).clone()
    with lib.inference_mode():
        v = w.view(-1)
    w.mul_(2)
    return v * 1


def _plain_inference_view_written_with_grad(lib: Any) -> Any:
    w = lib.ones(2, 3)
    with lib.inference_mode():
        v = w.view(-1)
    v.mul_(lib.ones(6, requires_grad=True))


def _inference_view_of_normal_tensor_used(lib: Any) -> Any:
    w = lib.ones(2, 3, requires_grad=True).clone()
    with lib.inference_mode():
        v = w.view(-1)
    y = v * 2
    return v.requires_grad, v.grad_fn is None, y.requires_grad


PROGRAMS = {
    "view_of_inference_inside": (_view_of_inference_inside, None),
    "view_of_inference_outside": (_view_of_inference_outside, None),
    "backward_of_view_of_inference": (_backward_of_view_of_inference,
                                      "element 0 of tensors does not require grad"),
    "indexed_view_of_inference": (_indexed_view_of_inference, None),
    "inference_view_written_outside": (
        _inference_view_written_outside,
        "A view was created in inference mode and is being modified inplace in normal mode"),
    "base_written_then_inference_view_used": (
        _base_written_then_inference_view_used,
        "A view was created in inference mode and its base or another view of its base has "
        "been modified inplace in normal mode"),
    "plain_inference_view_written_with_grad": (
        _plain_inference_view_written_with_grad,
        "A view was created in inference mode and is being modified inplace in normal mode"),
    "inference_view_of_normal_tensor_used": (_inference_view_of_normal_tensor_used, None),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inference_views_like_torch(name: str) -> None:
    program, phrase = PROGRAMS[name]
    returned = []

    def quiet(lib: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = program(lib)
        returned.append(lib)
        return result

    same(quiet, phrase)
    assert (torch in returned) == (phrase is None), (
        "the case is wrong: torch " + ("returned" if torch in returned else "raised"))
