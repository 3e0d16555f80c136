"""More in-place forms against PyTorch (``torch_parity.same``): the written values, the
version bump, the node that rebases the history, the gradients through it, the augmented
operators, and the refusals (a result dtype that cannot be written back, a leaf that requires
grad, a shape the other operand cannot broadcast to)."""

from __future__ import annotations

import pytest
from torch_parity import same

X = [[1.5, -2.25, 3.0], [0.5, -0.75, 2.0]]
Y = [[0.5, 4.0, -1.0], [2.0, -0.5, 1.25]]


def _t(lib, data=X, dtype=None, grad=False):
    return lib.tensor(data, dtype=dtype or lib.float64, requires_grad=grad)


def through(lib, write, *others):
    """``write`` applied in place to a non-leaf made from a leaf, then a backward: the
    value, the node, the version bump and the leaf's gradient (and the others')."""
    leaf = _t(lib, grad=True)
    x = leaf * 1.0
    before = x._version
    res = write(x, *others)
    assert res is x
    (x * lib.tensor(Y, dtype=x.dtype)).sum().backward()
    grads = [leaf.grad] + [o.grad for o in others if getattr(o, "requires_grad", False)]
    return x, x.grad_fn.name(), x._version - before, grads


WRITES = {
    "ceil_": lambda lib: through(lib, lambda x: x.ceil_()),
    "trunc_": lambda lib: through(lib, lambda x: x.trunc_()),
    "frac_": lambda lib: through(lib, lambda x: x.frac_()),
    "exp2_": lambda lib: through(lib, lambda x: x.exp2_()),
    "log2_": lambda lib: through(lib, lambda x: x.abs_().log2_()),
    "log10_": lambda lib: through(lib, lambda x: x.abs_().log10_()),
    "deg2rad_": lambda lib: through(lib, lambda x: x.deg2rad_()),
    "rad2deg_": lambda lib: through(lib, lambda x: x.rad2deg_()),
    "negative_": lambda lib: through(lib, lambda x: x.negative_()),
    "absolute_": lambda lib: through(lib, lambda x: x.absolute_()),
    "logit_": lambda lib: through(lib, lambda x: x.sigmoid_().logit_()),
    "logit_ eps": lambda lib: through(lib, lambda x: x.sigmoid_().logit_(0.2)),
    "copysign_": lambda lib: through(lib, lambda x: x.copysign_(-1.0)),
    "copysign_ tensor": lambda lib: through(lib, lambda x, y: x.copysign_(y), _t(lib, Y)),
    "multiply_": lambda lib: through(lib, lambda x, y: x.multiply_(y), _t(lib, Y, grad=True)),
    "subtract_": lambda lib: through(lib, lambda x: x.subtract_(2.0)),
    "true_divide_": lambda lib: through(lib, lambda x, y: x.true_divide_(y),
                                        _t(lib, Y, grad=True)),
    "float_power_": lambda lib: through(lib, lambda x: x.float_power_(2)),
    "tril_": lambda lib: through(lib, lambda x: x.tril_()),
    "triu_ 1": lambda lib: through(lib, lambda x: x.triu_(1)),
    "cumsum_": lambda lib: through(lib, lambda x: x.cumsum_(1)),
    "cumprod_": lambda lib: through(lib, lambda x: x.cumprod_(0)),
    "addmm_": lambda lib: through(lib, lambda x, a, b: x.addmm_(a, b, beta=0.5, alpha=2),
                                  _t(lib, [[1.0, 2.0], [3.0, -1.0]], grad=True),
                                  _t(lib, Y, grad=True)),
    "baddbmm_": lambda lib: through(
        lib, lambda x, a, b: x.unsqueeze_(0).baddbmm_(a, b, alpha=0.5).squeeze_(0),
        _t(lib, [[[1.0, 2.0], [3.0, -1.0]]], grad=True), _t(lib, [Y], grad=True)),
    "eq_": lambda lib: through(lib, lambda x: x.eq_(3.0)),
    "ne_ tensor": lambda lib: through(lib, lambda x, y: x.ne_(y), _t(lib, X, grad=True)),
    "lt_ tensor": lambda lib: through(lib, lambda x, y: x.lt_(y), _t(lib, Y, grad=True)),
    "le_": lambda lib: through(lib, lambda x: x.le_(0.5)),
    "gt_ broadcast": lambda lib: through(lib, lambda x, y: x.gt_(y), _t(lib, [0.0, 1.0, 2.0])),
    "ge_": lambda lib: through(lib, lambda x: x.ge_(-0.75)),
}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_inplace_form(case):
    same(WRITES[case])


def test_logical_and_bitwise_inplace():
    def program(lib):
        a = lib.tensor([1.0, 0.0, 2.0, 0.0])
        b = lib.tensor([3, 5, 6])
        m = lib.tensor([True, False, True])
        c = b.clone()
        c &= 6
        d = b.clone()
        d |= lib.tensor([8, 8, 8])
        e = b.clone()
        e ^= 1
        f = b.clone()
        f //= 2
        g = m.clone()
        g &= lib.tensor([True, True, False])
        h = lib.tensor([7.5, -7.5])
        h //= 2
        return (a.clone().logical_not_(), a.clone().logical_and_(lib.tensor([1.0, 1, 0, 0])),
                a.clone().logical_or_(lib.tensor([0.0, 1, 0, 0])),
                a.clone().logical_xor_(lib.tensor([1.0, 1, 1, 1])), b.clone().bitwise_not_(),
                b.clone().bitwise_and_(3), b.clone().bitwise_or_(1), b.clone().bitwise_xor_(7),
                b.clone().floor_divide_(4), c, d, e, f, g, h, m.clone().bitwise_not_())

    same(program)


def test_refusals():
    same(lambda lib: lib.tensor([1, 2]).logit_(), "can't be cast")
    same(lambda lib: lib.tensor([1, 2]).exp2_(), "can't be cast")
    same(lambda lib: lib.tensor([1, 2]).floor_divide_(2.5), "can't be cast")
    same(lambda lib: lib.ones(2).float_power_(2), "requires dtype Double")
    same(lambda lib: lib.ones(2).bitwise_and_(1), "not implemented for 'Float'")
    same(lambda lib: _t(lib, grad=True).ceil_(), "leaf Variable that requires grad")
    same(lambda lib: _t(lib).eq_(lib.ones(3, 3)), "must match the size")
    same(lambda lib: _t(lib).copysign_(lib.ones(4)), "must match the size")


def test_a_refused_write_leaves_the_tensor_as_it_was():
    def program(lib):
        x = lib.tensor([1, 2])
        v = x._version
        try:
            x.floor_divide_(2.5)
        except RuntimeError:
            pass
        return x, x._version - v

    same(program)


def test_inplace_comparison_through_a_view_rebases_the_base():
    def program(lib):
        leaf = _t(lib, grad=True)
        base = leaf * 2.0
        base[0].gt_(1.0)
        base.sum().backward()
        return base, leaf.grad, base.grad_fn.name()

    same(program)
