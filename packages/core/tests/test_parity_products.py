"""The products ops against PyTorch: ``bmm``, ``addmm``, ``baddbmm``, ``einsum``,
``tensordot``, ``kron``, ``norm`` and ``linalg.vector_norm`` -- values, dtypes, gradients,
double backward, node names and errors (class and key phrase)."""

from __future__ import annotations

import math

import pytest
from torch_parity import same

import retrograd.linalg  # noqa: F401  (``lib.linalg`` on retrograd)


def leaf(lib, *shape, scale=1.0, shift=0.0):
    n = math.prod(shape)
    vals = [((i * 7) % 11 - 5) * 0.3 * scale + shift for i in range(n)]
    return lib.tensor(vals, dtype=lib.float64).reshape(shape).requires_grad_()


def dtype_name(x):
    return str(x.dtype).rpartition(".")[2]


def grads_and_second(lib, out, *inputs):
    """The output, its node's name, first gradients (create_graph) and second gradients."""
    loss = (out * out).sum() if out.ndim else out * out
    grads = lib.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    total = sum((g * g).sum() for g in grads if g is not None)
    second = lib.autograd.grad(total, inputs, allow_unused=True)
    return out, out.grad_fn.name(), dtype_name(out), grads, second


# -- values, gradients, double backward, node names ----------------------------------------
PROGRAMS = {
    "bmm": lambda lib: (lambda a, b: grads_and_second(lib, lib.bmm(a, b), a, b))(
        leaf(lib, 2, 3, 4), leaf(lib, 2, 4, 2, shift=0.1)),
    "bmm_method_transposed": lambda lib: (lambda a, b: grads_and_second(
        lib, a.transpose(1, 2).bmm(b), a, b))(leaf(lib, 2, 4, 3), leaf(lib, 2, 4, 2)),
    "addmm": lambda lib: (lambda i, a, b: grads_and_second(lib, lib.addmm(i, a, b), i, a, b))(
        leaf(lib, 2), leaf(lib, 3, 4), leaf(lib, 4, 2, shift=0.2)),
    "addmm_beta_alpha": lambda lib: (lambda i, a, b: grads_and_second(
        lib, lib.addmm(i, a, b, beta=0.5, alpha=-2), i, a, b))(
        leaf(lib, 3, 1), leaf(lib, 3, 4), leaf(lib, 4, 2)),
    "addmm_beta0": lambda lib: (lambda i, a, b: grads_and_second(
        lib, i.addmm(a, b, beta=0), i, a, b))(leaf(lib, 3, 2), leaf(lib, 3, 4), leaf(lib, 4, 2)),
    "baddbmm": lambda lib: (lambda i, a, b: grads_and_second(
        lib, lib.baddbmm(i, a, b, beta=2, alpha=0.5), i, a, b))(
        leaf(lib, 3, 2), leaf(lib, 2, 3, 4), leaf(lib, 2, 4, 2)),
    "einsum_matmul": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.einsum("ij,jk->ik", a, b) * 1, a, b))(leaf(lib, 2, 3), leaf(lib, 3, 4)),
    "einsum_implicit_batched": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.einsum("bij,bjk", a, b) * 1, a, b))(leaf(lib, 2, 2, 3), leaf(lib, 2, 3, 2)),
    "einsum_trace": lambda lib: (lambda a: grads_and_second(
        lib, lib.einsum("ii", a) * 1, a))(leaf(lib, 3, 3)),
    "einsum_diagonal_and_sum": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.einsum("iij,k->ik", a, b) * 1, a, b))(leaf(lib, 3, 3, 2), leaf(lib, 4)),
    "einsum_ellipsis_broadcast": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.einsum("...ij,...ij->...i", a, b) * 1, a, b))(leaf(lib, 2, 1, 3),
                                                                 leaf(lib, 4, 3)),
    "einsum_list_three": lambda lib: (lambda a, b, c: grads_and_second(
        lib, lib.einsum("ij,j,jk->ik", [a, b, c]) * 1, a, b, c))(
        leaf(lib, 2, 3), leaf(lib, 3), leaf(lib, 3, 2)),
    "einsum_spaces_uppercase": lambda lib: (lambda a: grads_and_second(
        lib, lib.einsum("Ab -> bA", a) * 1, a))(leaf(lib, 2, 3)),
    "tensordot": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.tensordot(a, b, ([1, 2], [2, 0])) * 1, a, b))(leaf(lib, 2, 3, 4),
                                                                leaf(lib, 4, 2, 3)),
    "tensordot_int": lambda lib: (lambda a, b: grads_and_second(
        lib, lib.tensordot(a, b, 1) * 1, a, b))(leaf(lib, 2, 3), leaf(lib, 3, 4)),
    "kron": lambda lib: (lambda a, b: grads_and_second(lib, lib.kron(a, b) * 1, a, b))(
        leaf(lib, 2, 3), leaf(lib, 3)),
    "norm_fro": lambda lib: (lambda a: grads_and_second(lib, lib.norm(a), a))(leaf(lib, 2, 3)),
    "norm_p1_dim": lambda lib: (lambda a: grads_and_second(lib, a.norm(1, dim=1), a))(
        leaf(lib, 2, 3, shift=0.05)),
    "norm_inf_ties": lambda lib: (lambda a: grads_and_second(
        lib, lib.norm(a, float("inf"), dim=0, keepdim=True), a))(
        lib.tensor([[1.0, -2.0], [-1.0, 2.0], [0.5, 1.0]], dtype=lib.float64,
                   requires_grad=True)),
    "norm_minus_inf": lambda lib: (lambda a: grads_and_second(
        lib, lib.norm(a, float("-inf")), a))(leaf(lib, 5, shift=0.05)),
    "norm_p0": lambda lib: (lambda a: grads_and_second(lib, lib.norm(a, 0) * a.sum(), a))(
        leaf(lib, 2, 2, shift=0.05)),
    "norm_p3_dims": lambda lib: (lambda a: grads_and_second(
        lib, lib.norm(a, 3, dim=(0, -1)), a))(leaf(lib, 2, 3, 2, shift=0.05)),
    # the subgradient at 0 is 0, as in PyTorch (its second derivative there, nan, is not
    # compared: retrograd gives 0)
    "norm_2_at_zero": lambda lib: (lambda a: grads_and_second(lib, lib.norm(a, dim=1), a)[:4])(
        lib.zeros(2, 3, dtype=lib.float64).requires_grad_()),
    "vector_norm": lambda lib: (lambda a: grads_and_second(
        lib, lib.linalg.vector_norm(a, dim=-1), a))(leaf(lib, 2, 3)),
    "vector_norm_ord1_keepdim": lambda lib: (lambda a: grads_and_second(
        lib, lib.linalg.vector_norm(a, 1, dim=0, keepdim=True), a))(leaf(lib, 2, 3, shift=.05)),
    "vector_norm_0d": lambda lib: (lambda a: grads_and_second(
        lib, lib.linalg.vector_norm(a), a))(lib.tensor(-3.0, dtype=lib.float64,
                                                      requires_grad=True)),
    "float32_values": lambda lib: tuple(dtype_name(r) for r in (
        lib.bmm(lib.ones(1, 2, 2), lib.ones(1, 2, 2)), lib.addmm(lib.ones(2), lib.ones(2, 2),
                                                                 lib.ones(2, 2)),
        lib.einsum("i,i", lib.ones(3), lib.ones(3)), lib.norm(lib.ones(3)),
        lib.kron(lib.ones(2), lib.ones(2, dtype=lib.float64)))),
    "no_grad_fn_without_requires_grad": lambda lib: (
        lib.bmm(lib.ones(1, 2, 2), lib.ones(1, 2, 2)).grad_fn,
        lib.einsum("ij->", lib.ones(2, 2)).grad_fn, lib.norm(lib.ones(3)).grad_fn),
    "empty_norm": lambda lib: (lib.norm(lib.ones(0)), lib.linalg.vector_norm(lib.ones(2, 0), 1,
                                                                            dim=1)),
}


# PyTorch's einsum and tensordot are composites (permute, bmm, view ...): their output's node
# is ViewBackward0, SumBackward1 ... where retrograd records one EinsumBackward0; the programs
# multiply by 1 so that the compared node is the same MulBackward0
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_parity(name):
    same(PROGRAMS[name], tol=1e-9)


# -- errors ---------------------------------------------------------------------------------
def t(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


ERRORS = {
    "bmm_2d": (lambda lib: lib.bmm(t(lib, 2, 3), t(lib, 2, 3, 2)), "batch1 must be a 3D tensor"),
    "bmm_2d_second": (lambda lib: lib.bmm(t(lib, 2, 3, 4), t(lib, 4, 5)),
                      "batch2 must be a 3D tensor"),
    "bmm_sizes": (lambda lib: lib.bmm(t(lib, 2, 3, 4), t(lib, 2, 5, 5)),
                  "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but "
                  "got: [2, 5]."),
    "bmm_batch": (lambda lib: lib.bmm(t(lib, 2, 3, 4), t(lib, 3, 4, 5)),
                  "Expected size for first two dimensions of batch2 tensor"),
    "bmm_dtype": (lambda lib: lib.bmm(t(lib, 2, 3, 4), t(lib, 2, 4, 5, dtype=lib.float64)),
                  "expected scalar type Float but found Double"),
    "addmm_sizes": (lambda lib: lib.addmm(t(lib, 3), t(lib, 2, 3), t(lib, 4, 3)),
                    "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)"),
    "addmm_expand": (lambda lib: lib.addmm(t(lib, 4), t(lib, 2, 3), t(lib, 3, 3)),
                     "must match the existing size"),
    "addmm_vector": (lambda lib: lib.addmm(t(lib, 2), t(lib, 3), t(lib, 3, 3)),
                     "mat1 must be a matrix, got 1-D tensor"),
    "addmm_dtype": (lambda lib: lib.addmm(t(lib, 3, 5), t(lib, 3, 4),
                                          t(lib, 4, 5, dtype=lib.float64)),
                    "self and mat2 must have the same dtype, but got Float and Double"),
    "baddbmm_expand": (lambda lib: lib.baddbmm(t(lib, 4), t(lib, 2, 3, 4), t(lib, 2, 4, 5)),
                       "must match the existing size"),
    "baddbmm_dtype": (lambda lib: lib.baddbmm(t(lib, 3, 5, dtype=lib.float64), t(lib, 2, 3, 4),
                                              t(lib, 2, 4, 5)),
                      "Input dtypes must be the same, got: input double, batch1: float"),
    "einsum_fewer": (lambda lib: lib.einsum("ij,jk", t(lib, 2, 3)),
                     "fewer operands were provided than specified in the equation"),
    "einsum_more": (lambda lib: lib.einsum("ij", t(lib, 2, 3), t(lib, 3, 4)),
                    "more operands were provided than specified in the equation"),
    "einsum_ndim": (lambda lib: lib.einsum("ijk", t(lib, 2, 3)),
                    "does not match the number of dimensions (2) for operand 0"),
    "einsum_size": (lambda lib: lib.einsum("ij,jk", t(lib, 2, 3), t(lib, 4, 4)),
                    "subscript j has size 4 for operand 1 which does not broadcast"),
    "einsum_output_missing": (lambda lib: lib.einsum("ij->k", t(lib, 2, 3)),
                              "output subscript k does not appear"),
    "einsum_output_twice": (lambda lib: lib.einsum("ij->ii", t(lib, 2, 3)),
                            "output subscript i appears more than once"),
    "einsum_bad_subscript": (lambda lib: lib.einsum("i1", t(lib, 2, 3)),
                             "invalid subscript given at index 1"),
    "einsum_dtype": (lambda lib: lib.einsum("ij,jk", t(lib, 2, 3),
                                            t(lib, 3, 4, dtype=lib.float64)),
                     "expected scalar type Float but found Double"),
    "tensordot_sizes": (lambda lib: lib.tensordot(t(lib, 2, 3), t(lib, 4, 4), 1),
                        "contracted dimensions need to match, but first has size 3 in dim -1 "
                        "and second has size 4 in dim 0"),
    "vector_norm_int": (lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])),
                        "Expected a floating point or complex tensor as input. Got Long"),
    "vector_norm_bad_dim": (lambda lib: lib.linalg.vector_norm(t(lib, 2, 3), dim=2),
                            "Dimension out of range"),
    "norm_inf_empty": (lambda lib: lib.norm(t(lib, 0), float("inf")),
                       "does not have an identity"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    program, phrase = ERRORS[name]
    same(program, phrase)


def test_einsum_backward_through_composed_kernel():
    """The composed einsum (a namespace without one) gives the native kernel's values."""
    import numpy as np

    from retrograd.backends.kernels_products import _composed_einsum

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 3, 2)), rng.standard_normal((2, 4))
    for eq, ops in (("iij,jk->ik", (a, b)), ("iij->", (a,)), ("ijk,kl->lji", (a, b))):
        np.testing.assert_allclose(_composed_einsum(np, eq, *ops), np.einsum(eq, *ops))
