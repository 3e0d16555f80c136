"""The view ops that take part of a tensor or split it into views (``narrow``, ``select``,
``unbind``, ``split``, ``chunk``, ``diagonal``, ``as_strided``) and the in-place metadata ops
(``transpose_``, ``t_``, ``squeeze_``, ``unsqueeze_``, ``as_strided_``) against PyTorch: each
program runs on torch and on retrograd, and the values, gradients (also of a double
backward), node names and errors (class and key phrase) are compared.

Why: these ops return views with PyTorch's autograd semantics -- the outputs of unbind and
split come from ONE node (several output slots) and may not be changed in place while
recording; the in-place metadata ops change a tensor's own shape and are recorded on its
history. Each case is written once against a library handle ``lib``."""

from __future__ import annotations

import pytest
from torch_parity import same

A = [[1.0, -2.0, 3.0, 0.5], [0.5, 4.0, -1.5, 2.0], [-3.0, 1.0, 2.5, -0.25]]
W = [[0.25, 1.5, -0.75, 1.0], [2.0, -0.5, 1.25, 0.5], [1.0, 3.0, -2.0, 0.75]]


def leaf(lib, data=A):
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def grads_of(lib, fn, *inputs):
    """``fn(*inputs)`` (a tensor or tuple of tensors), the gradients of a weighted sum of it,
    and the gradients of the sum of the squares of those (create_graph: a double backward)."""
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum(((o * o) * (k + 1)).sum() for k, o in enumerate(outs))
    grads = lib.autograd.grad(loss, inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
    names = [o.grad_fn.name() for o in outs]
    return {"out": outs, "grads": grads, "second": second, "names": names,
            "views": [o._is_view() for o in outs], "nr": [o.output_nr for o in outs]
            if hasattr(outs[0], "output_nr") else None}


CASES = {
    "narrow": lambda x: x.narrow(1, 1, 2),
    "narrow_neg_start": lambda x: x.narrow(1, -3, 2),
    "narrow_full": lambda x: x.narrow(0, 0, 3),
    "narrow_empty": lambda x: x.narrow(0, 3, 0),
    "narrow_fn": lambda x: type(x).__module__ and x.narrow(-1, 0, 1),
    "select": lambda x: x.select(1, 2),
    "select_neg": lambda x: x.select(-2, -1),
    "unbind0": lambda x: x.unbind(),
    "unbind1": lambda x: x.unbind(1),
    "split_int": lambda x: x.split(2, 1),
    "split_exact": lambda x: x.split(3),
    "split_big": lambda x: x.split(5),
    "split_list": lambda x: x.split([1, 3], 1),
    "split_with_sizes": lambda x: x.split_with_sizes([2, 1]),
    "chunk2": lambda x: x.chunk(2),
    "chunk3_dim1": lambda x: x.chunk(3, 1),
    "unsafe_split": lambda x: x.unsafe_split(2),
    "unsafe_split_with_sizes": lambda x: x.unsafe_split_with_sizes([1, 2]),
    "unsafe_chunk": lambda x: x.unsafe_chunk(2, 1),
    "tensor_split_sections": lambda x: x.tensor_split(3, 1),
    "tensor_split_indices": lambda x: x.tensor_split([1, 3], 1),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
    "diagonal_neg_offset": lambda x: x.diagonal(-1),
    "diagonal_swapped": lambda x: x.diagonal(0, 1, 0),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 4), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_view_op_values_grads_double_backward(name):
    def program(lib):
        x = leaf(lib)
        return grads_of(lib, lambda t: CASES[name](t * 1), x)

    same(program)


def test_functions_match_methods():
    def program(lib):
        x = leaf(lib)
        return [lib.narrow(x, 0, 1, 2), lib.select(x, 1, 0), lib.unbind(x, 1),
                lib.split(x, 2), lib.chunk(x, 2, 1), lib.diagonal(x, 1),
                lib.split_with_sizes(x, [1, 2]), lib.tensor_split(x, 2)]

    same(program)


def test_narrow_tensor_start():
    same(lambda lib: leaf(lib).narrow(1, lib.tensor(2), 2).grad_fn.name())


def test_3d_diagonal_and_dtypes():
    def program(lib):
        x = lib.arange(24, dtype=lib.float32).reshape(2, 3, 4).requires_grad_()
        d = x.diagonal(1, 0, 2)
        d.sum().backward()
        i = lib.arange(12).reshape(3, 4)
        return d, x.grad, str(d.dtype).rpartition(".")[2], i.diagonal(), i.unbind(1), i.split(2), i.narrow(0, 1, 1)

    same(program)


def test_views_share_memory():
    def program(lib):
        x = lib.zeros(3, 4)
        x.narrow(1, 1, 2).fill_(1.0)
        x.select(0, 2).fill_(2.0)
        x.unbind(1)[0].fill_(3.0)
        x.diagonal().fill_(4.0)
        x.split(1)[0].add_(1.0)
        return x

    same(program)


def test_unused_outputs_get_zero_gradient():
    def program(lib):
        x = leaf(lib)
        a, b, c = x.unbind()
        (b * 3).sum().backward()
        g1 = x.grad.clone()
        p, q = x.chunk(2, 1)
        q.sum().backward()
        return g1, x.grad

    same(program)


def test_sibling_outputs_backward_one_after_another():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        xs = x.unbind()
        grads = []
        for t in xs:
            t.backward()
            grads.append(x.grad.clone())
        return grads

    same(program)


# -- errors -----------------------------------------------------------------------------------
ERRORS = {
    "narrow_dim": (lambda x: x.narrow(2, 0, 1), "Dimension out of range"),
    "narrow_start": (lambda x: x.narrow(0, 4, 1), "start out of range"),
    "narrow_length": (lambda x: x.narrow(0, 1, 5), "exceeds dimension size"),
    "narrow_neg_length": (lambda x: x.narrow(0, 1, -1), "length must be non-negative"),
    "select_index": (lambda x: x.select(0, 3), "out of range for tensor of size"),
    "select_dim": (lambda x: x.select(2, 0), "Dimension out of range"),
    "unbind_dim": (lambda x: x.unbind(2), "Dimension out of range"),
    "split_zero": (lambda x: x.split(0), "split_size can only be 0"),
    "split_neg": (lambda x: x.split(-1), "split_size be non-negative"),
    "split_sizes_sum": (lambda x: x.split([1, 1]), "to sum exactly to 3"),
    "split_sizes_neg": (lambda x: x.split_with_sizes([4, -1]), "only non-negative entries"),
    "chunk_zero": (lambda x: x.chunk(0), "greater than 0"),
    "diagonal_same_dims": (lambda x: x.diagonal(0, 1, 1), "cannot be identical"),
    "diagonal_dim": (lambda x: x.diagonal(0, 0, 3), "Dimension out of range"),
    "tensor_split_zero": (lambda x: x.tensor_split(0), "must be larger than 0"),
    "as_strided_neg_stride": (lambda x: x.as_strided((2, 2), (-1, 1)), "Negative strides"),
    "as_strided_bounds": (lambda x: x.as_strided((20, 2), (1, 1)), "out of bounds"),
    "as_strided_lengths": (lambda x: x.as_strided((2, 2), (1,)), "mismatch in length"),
    "t_3d": (lambda x: x.reshape(3, 2, 2).t_(), "expects a tensor with <= 2 dimensions"),
    "transpose_dim": (lambda x: x.transpose_(0, 3), "Dimension out of range"),
    "unsqueeze_dim": (lambda x: x.unsqueeze_(4), "Dimension out of range"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    fn, phrase = ERRORS[name]
    same(lambda lib: fn(lib.tensor(A).clone()), phrase)


def test_zero_dim_refused():
    same(lambda lib: lib.tensor(1.0).narrow(0, 0, 1), "cannot be applied to a 0-dim tensor")
    same(lambda lib: lib.tensor(1.0).select(0, 0), "cannot be applied to a 0-dim tensor")
    same(lambda lib: lib.tensor(1.0).unbind(), "tensor has no dimensions")
    same(lambda lib: lib.tensor(1.0).split(1), "at least a 1-dimensional tensor")


# -- multi-output views: PyTorch's in-place rules -----------------------------------------------
MULTI = "This view is the output of a function that returns multiple views."


@pytest.mark.parametrize("make", ["unbind", "split", "split_list", "chunk", "split_with_sizes"])
def test_inplace_on_multi_output_view_refused(make):
    pick = {"unbind": lambda t: t.unbind(), "split": lambda t: t.split(1),
            "split_list": lambda t: t.split([1, 2]), "chunk": lambda t: t.chunk(3),
            "split_with_sizes": lambda t: t.split_with_sizes([2, 1])}[make]
    same(lambda lib: pick(leaf(lib) * 1)[0].mul_(2), MULTI)
    same(lambda lib: pick(leaf(lib) * 1)[1].view(-1).add_(1), MULTI)  # a view of one
    same(lambda lib: pick(leaf(lib) * 1)[0].t_(), MULTI)  # an in-place view op alike


def test_multi_output_message_names_output_and_op():
    same(lambda lib: (leaf(lib) * 1).unbind()[2].mul_(2),
         "Output 2 of Unbind is a view and is being modified inplace.")
    same(lambda lib: (leaf(lib) * 1).split(2)[1].zero_(),
         "Output 1 of Split is a view and is being modified inplace.")


def test_base_modified_then_multi_output_view_used():
    def program(lib):
        y = leaf(lib) * 1
        parts = y.unbind()
        y.mul_(2)
        return parts[0] * 2

    same(program, "its base or another view of its base has been modified inplace")


def test_multi_output_view_of_plain_tensor():
    def ok(lib):  # nothing requires grad: not recorded, not refused
        x = lib.tensor(A)
        v = x.unbind()[0]
        v.add_(1)
        return x, v._is_view()

    def refused(lib):  # recorded (the operand requires grad): refused
        x = lib.tensor(A)
        x.unbind()[0].copy_(leaf(lib)[0])

    same(ok)
    same(refused, MULTI)


def test_multi_output_views_under_no_grad():
    def program(lib):
        y = leaf(lib) * 1
        with lib.no_grad():
            parts = y.unbind()
        parts[0].add_(1)

    same(program, "A view was created in no_grad mode")

    def inplace_under_no_grad(lib):
        y = leaf(lib) * 1
        parts = y.unbind()
        with lib.no_grad():
            parts[0].add_(1)
        return y

    same(inplace_under_no_grad)


def test_unsafe_split_outputs_may_change_in_place():
    def program(lib):
        x = leaf(lib)
        b = x + x
        s1, s2, s3 = b.unsafe_split(1)
        s1.mul_(s2)
        s1.sum().backward()
        return s1.grad_fn.name(), s1._is_view(), x.grad

    same(program)


def test_narrow_select_inplace_rebases_base():
    def program(lib):
        x = leaf(lib)
        y = x * 1
        y.narrow(1, 1, 2).mul_(3)
        y.select(0, 2).add_(y.select(0, 0).detach())
        y.diagonal().mul_(2)
        (y * y).sum().backward()
        return y, x.grad, y.grad_fn.name().rpartition("::")[2]

    same(program)


# -- in-place metadata ops ----------------------------------------------------------------------
INPLACE_VIEWS = {
    "t_": lambda t: t.t_(),
    "transpose_": lambda t: t.transpose_(0, 1),
    "swapdims_": lambda t: t.swapdims_(1, 0),
    "squeeze_all": lambda t: t.unsqueeze(0).squeeze_(),
    "squeeze_dim": lambda t: t.unsqueeze(1).squeeze_(1),
    "squeeze_dims": lambda t: t.unsqueeze(0).squeeze_((0,)),
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "as_strided_": lambda t: t.as_strided_((2, 3), (1, 2), 1),
    "view_t_": lambda t: t.view(4, 3).t_(),
    "select_unsqueeze_": lambda t: t[1].unsqueeze_(0),
}


@pytest.mark.parametrize("name", sorted(INPLACE_VIEWS))
def test_inplace_view_ops(name):
    def program(lib):
        x = leaf(lib)
        b = x * 1
        r = INPLACE_VIEWS[name](b)
        out = {"shape": list(r.shape), "node": r.grad_fn.name(), "view": r._is_view(),
               "version": b._version}
        (r * r * lib.arange(r.numel(), dtype=lib.float64).reshape(r.shape)).sum().backward()
        out["grad"] = x.grad
        return out

    same(program)


def test_inplace_view_op_then_inplace_write():
    def program(lib):
        x = leaf(lib)
        b = x * 1
        v = b[0:2]
        v.t_()
        v.mul_(lib.arange(8, dtype=lib.float64).reshape(4, 2))
        (b * b).sum().backward()
        return b, x.grad, b.grad_fn.name().rpartition("::")[2], v.grad_fn.name()

    same(program)


def test_inplace_view_op_under_no_grad_then_write():
    def program(lib):
        x = leaf(lib)
        b = x * 1
        v = b[1]
        with lib.no_grad():
            v.unsqueeze_(0)
        v.mul_(2)
        b.sum().backward()
        return list(v.shape), v.grad_fn.name(), x.grad

    same(program)


def test_inplace_view_op_refusals():
    same(lambda lib: leaf(lib).t_(), "a leaf Variable that requires grad")
    same(lambda lib: leaf(lib).view(12).unsqueeze_(0), "a view of a leaf Variable")

    def no_grad_view(lib):
        y = leaf(lib) * 1
        with lib.no_grad():
            v = y[0]
        v.unsqueeze_(0)

    same(no_grad_view, "A view was created in no_grad mode")


def test_is_view():
    def program(lib):
        x = leaf(lib)
        y = x * 1
        return [x.detach()._is_view(), y.detach()._is_view(), y[0]._is_view(),
                y.narrow(0, 0, 1)._is_view(), x.data._is_view(), y._is_view(),
                x.detach()[0]._is_view(), lib.tensor(A).unbind()[0]._is_view()]

    same(program)


def test_view_ops_on_array_api_strict():
    """The kernels fall back to Array-API calls where the array library makes no strided
    views (``diagonal`` is then a copy, no view): values and gradients, also of a double
    backward, are PyTorch's."""
    xp = pytest.importorskip("array_api_strict")
    import torch
    from torch_parity import close, plain

    import retrograd as rg
    from retrograd.backends.base import Backend
    from retrograd.backends.registry import register_backend, unregister_backend

    def run(lib, **device):
        x = lib.tensor(A, dtype=lib.float64, requires_grad=True, **device)
        y = x * 1
        parts = [y.narrow(1, 1, 2), y.select(0, 1), y.diagonal(1), y.diagonal(-1, 1, 0)]
        parts += list(y.unbind(1)) + list(y.split([1, 2])) + list(y.chunk(2, 1))
        loss = sum(((p * p) * (k + 1)).sum() for k, p in enumerate(parts))
        (gx,) = lib.autograd.grad(loss, [x], create_graph=True)
        (gx * gx).sum().backward()
        z = x * 1
        z.narrow(1, 1, 2).mul_(3)  # in place through a slice: the base rebased
        (gz,) = lib.autograd.grad((z * z).sum(), [x])
        return plain([parts, gx, x.grad, z, gz])

    register_backend("strict", Backend("strict", xp))
    try:
        got = run(rg, device="strict")
    finally:
        unregister_backend("strict")
    want = run(torch)
    assert close(got, want), f"torch {want}\nretrograd {got}"


def test_one_node_several_slots():
    """retain_grad, hooks and a direct call of the node see each output's own slot."""
    def retained(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        a, b = x.unbind()
        a.retain_grad()
        b.retain_grad()
        (a * 3 + b * b).sum().backward()
        return a.grad, b.grad, x.grad

    def hooked(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        a, b = x.split(1)
        seen = []
        b.register_hook(lambda g: seen.append(g.tolist()))
        (a.sum() + (b * 2).sum()).backward()
        return seen, x.grad

    def called(lib):
        x = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
        a, b = x.unbind()
        return (a.grad_fn(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64) * 2),
                len(a.grad_fn.next_functions), a.grad_fn is b.grad_fn, b.output_nr)

    def used_before_base_changed(lib):
        y = leaf(lib) * 1
        a, b, c = y.unbind()
        z = a * 2
        y.mul_(3)
        z.sum().backward()
        return y

    for program in (retained, hooked, called, used_before_base_changed):
        same(program)
