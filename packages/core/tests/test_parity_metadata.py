"""What a tensor says about itself, against PyTorch: strides and contiguity of views,
``contiguous`` (and its ``CloneBackward0``), ``data_ptr``/``storage_offset`` of views, sizes in
bytes, ``type``, and the predicates ``isclose``, ``equal``, ``is_tensor``, ``numel``, ``t``.
Each program runs on torch and on retrograd (``torch_parity.same``)."""

from __future__ import annotations

import pytest
from torch_parity import same

import retrograd as rg


def _m(lib, shape=(3, 4), dtype=None):
    n = 1
    for s in shape:
        n *= s
    return lib.arange(float(n), dtype=dtype or lib.float64).reshape(*shape)


VIEWS = {
    "plain": lambda lib: _m(lib),
    "transpose": lambda lib: _m(lib).t(),
    "row": lambda lib: _m(lib)[1],
    "column": lambda lib: _m(lib)[:, 2],
    "step slice": lambda lib: _m(lib)[::2, 1::2],
    "unsqueeze front": lambda lib: _m(lib).unsqueeze(0),
    "unsqueeze middle": lambda lib: _m(lib).unsqueeze(1),
    "unsqueeze end": lambda lib: _m(lib).unsqueeze(-1),
    "None index": lambda lib: _m(lib)[:, None],
    "expand": lambda lib: lib.ones(3, dtype=lib.float64).expand(2, 3),
    "expand size-1": lambda lib: lib.ones(2, 1, dtype=lib.float64).expand(2, 4),
    "permute": lambda lib: _m(lib, (2, 3, 4)).permute(2, 0, 1),
    "size-1 dims": lambda lib: lib.ones(2, 1, 3),
    "empty": lambda lib: lib.ones(0, 3),
    "0-d": lambda lib: lib.tensor(2.0),
    "narrow": lambda lib: _m(lib).narrow(1, 1, 2),
    "diagonal": lambda lib: _m(lib, (3, 3)).diagonal(),
    "transpose of a slice": lambda lib: _m(lib)[1:3].t(),
    "one row of a transpose": lambda lib: _m(lib).t()[1:2],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_stride_and_contiguity_of_views(view):
    make = VIEWS[view]
    same(lambda lib: (make(lib).stride(), make(lib).is_contiguous(), make(lib).dim()))


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_contiguous_copies_only_what_is_not(view):
    def program(lib):
        x = make(lib)
        y = x.contiguous()
        return (y is x, y.is_contiguous(), y.stride(), y)

    make = VIEWS[view]
    same(program)


@pytest.mark.parametrize("view", ["transpose", "row", "step slice", "narrow", "diagonal"])
def test_storage_offset_and_data_ptr_of_views(view):
    def program(lib):
        base = _m(lib, (3, 3) if view == "diagonal" else (3, 4))
        x = VIEWS[view](lib) if view != "row" else base[1]
        if view in ("transpose", "step slice", "narrow", "diagonal"):
            x = {"transpose": base.t(), "step slice": base[::2, 1::2],
                 "narrow": base.narrow(1, 1, 2), "diagonal": base.diagonal()}[view]
        return (x.storage_offset(), (x.data_ptr() - base.data_ptr()) // x.element_size())

    same(program)


def test_stride_dim_and_errors():
    same(lambda lib: (_m(lib).stride(0), _m(lib).t().stride(-1)))
    same(lambda lib: _m(lib).stride(2), "Dimension out of range")


def test_contiguous_gradient_and_node():
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64,
                       requires_grad=True)
        y = x.t().contiguous()
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return (y.grad_fn.name(), x.contiguous() is x, g, gg)

    same(program)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_sizes_in_bytes_and_type_names(dtype):
    def program(lib):
        x = lib.ones(2, 3, dtype=getattr(lib, dtype))
        e = lib.ones(3, dtype=getattr(lib, dtype)).expand(4, 3)
        return (x.element_size(), x.itemsize, x.nbytes, e.nbytes, x.ndimension(),
                x.type().rpartition(".")[2])

    same(program)


def test_type_converts():
    same(lambda lib: lib.ones(2).type(lib.float64))
    same(lambda lib: str(lib.ones(2).type(lib.int32).type(lib.float16).dtype).rpartition(".")[2])
    same(lambda lib: lib.ones(2).type("float"), "invalid type")
    assert rg.ones(2).type("torch.IntTensor").dtype is rg.int32
    assert rg.ones(2).type("retrograd.DoubleTensor").dtype is rg.float64
    assert rg.ones(2).type() == "retrograd.FloatTensor"


def test_type_to_float_is_differentiable():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.type(lib.float64)
        y.sum().backward()
        return (y.grad_fn.name(), x.grad)

    same(program)


def _pair(lib):
    a = lib.tensor([1.0, float("nan"), float("inf"), 2.0, -float("inf"), 0.0])
    b = lib.tensor([1.00001, float("nan"), float("inf"), 2.1, float("inf"), 1e-9])
    return a, b


def test_isclose():
    same(lambda lib: lib.isclose(*_pair(lib)))
    same(lambda lib: lib.isclose(*_pair(lib), equal_nan=True))
    same(lambda lib: lib.isclose(*_pair(lib), rtol=0.1, atol=0.0))
    same(lambda lib: _pair(lib)[0].isclose(_pair(lib)[1], atol=0.2))
    same(lambda lib: lib.isclose(lib.tensor([1, 2, 10**15]), lib.tensor([1, 3, 10**15 + 1])))
    same(lambda lib: lib.isclose(lib.tensor([True, False]), lib.tensor([True, True])))
    same(lambda lib: lib.isclose(lib.ones(2, 1), lib.ones(3)))  # broadcast


def test_isclose_errors():
    same(lambda lib: lib.isclose(lib.ones(3), lib.ones(3, dtype=lib.int64)),
         "did not match")
    same(lambda lib: lib.isclose(lib.ones(3), 1.0), "must be Tensor")
    same(lambda lib: lib.isclose(lib.ones(3), lib.ones(2)), "must match the size")
    same(lambda lib: lib.isclose(lib.ones(3), lib.ones(3), rtol=-1.0), "rtol must be")
    same(lambda lib: lib.isclose(lib.ones(3), lib.ones(3), atol=-1.0), "atol must be")


def test_equal():
    same(lambda lib: lib.equal(*_pair(lib)))
    same(lambda lib: (lib.equal(_pair(lib)[0][:1], _pair(lib)[0][:1]),
                      lib.equal(lib.ones(2), lib.ones(2, 1)),
                      lib.equal(lib.ones(2), lib.ones(2, dtype=lib.int64)),
                      lib.ones(2).equal(lib.ones(2)),
                      lib.equal(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.5]))))
    same(lambda lib: lib.equal(lib.ones(2), 1), "must be Tensor")


def test_is_tensor_numel_t():
    same(lambda lib: (lib.is_tensor(lib.ones(2)), lib.is_tensor(3), lib.is_tensor([1.0]),
                      lib.numel(lib.ones(2, 3)), lib.numel(lib.tensor(1.0)),
                      lib.numel(lib.ones(0, 4))))
    same(lambda lib: lib.numel(3), "must be Tensor")
    same(lambda lib: lib.t(_m(lib)))
    same(lambda lib: lib.t(lib.ones(2, 2, 2)), "<= 2 dimensions")

    def grads(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = lib.t(x)
        (g,) = lib.autograd.grad((y * y * x).sum(), x)
        return (y.grad_fn.name(), g)

    same(grads)
