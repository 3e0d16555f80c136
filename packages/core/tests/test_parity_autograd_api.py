"""Small pieces of PyTorch's autograd API that PyTorch-written programs call, against PyTorch:
``autograd.graph.increment_version`` and ``is_inference``."""

from __future__ import annotations

import pytest
from torch_parity import same


def bump_a_view_and_a_list(lib):
    x = lib.zeros(2)
    v = x[1:]
    lib.autograd.graph.increment_version(v)
    first = x._version
    lib.autograd.graph.increment_version([x, v])
    return first, x._version


def bump_a_number(lib):
    lib.autograd.graph.increment_version(3)


def bumped_saved_tensor_refused(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    lib.autograd.graph.increment_version(x)
    y.sum().backward()


def inference_tensors(lib):
    with lib.inference_mode():
        t = lib.zeros(1)
    return lib.is_inference(t), lib.is_inference(lib.zeros(1))


def is_inference_of_a_number(lib):
    return lib.is_inference(1.0)


PROGRAMS = {
    "increment_version": (bump_a_view_and_a_list, None),
    "increment_version_of_a_number": (bump_a_number, "Iterable[Tensor]"),
    "increment_version_then_backward": (bumped_saved_tensor_refused, "modified by an inplace"),
    "is_inference": (inference_tensors, None),
    "is_inference_of_a_number": (is_inference_of_a_number, "must be Tensor"),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_matches_torch(name):
    program, phrase = PROGRAMS[name]
    same(program, phrase)
