"""Small pieces of PyTorch's API that PyTorch-written programs call, against PyTorch:
``autograd.graph.increment_version``, ``is_inference``, a custom Function's node class
(``<Name>Backward``), ``t == None``, the dtype aliases (``double``, ``long`` ...) and the
``grad_fn`` a stale view's repr shows."""

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


def function_node_class(lib):
    class Func(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    y = Func.apply(lib.ones(1, requires_grad=True))
    return type(y.grad_fn).__name__, y.grad_fn.name(), Func._backward_cls.__name__


def compared_with_none(lib):
    t = lib.tensor([1.0])
    return t == None, t != None  # noqa: E711 - the operator is what is compared


def dtype_aliases(lib):
    return [str(lib.ones(1, dtype=d).dtype).rpartition(".")[2]
            for d in (lib.double, lib.float, lib.half, lib.long, lib.int)]


def repr_of_a_refused_view(lib):
    a = lib.ones(1, requires_grad=True)
    with lib.no_grad():
        b = a[:]
        b *= 2
    return repr(b)


def repr_of_a_stale_view(lib):
    a = lib.ones(2, requires_grad=True) * 1
    v = a[:1]
    a.mul_(2)
    return repr(v)


PROGRAMS = {
    "repr_of_a_refused_view": (repr_of_a_refused_view, None),
    "repr_of_a_stale_view": (repr_of_a_stale_view, None),
    "function_node_class": (function_node_class, None),
    "compared_with_none": (compared_with_none, None),
    "dtype_aliases": (dtype_aliases, None),
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
