"""Views of no elements, against PyTorch.

``t[1:]`` of a 1-row tensor, ``x[:, :0]``, the reshape, expand, transpose ... of an empty
tensor are views in PyTorch: they have a ``_base`` and share its version counter, so an
in-place op through one bumps the base's version (a saved base then fails its backward with
"modified by an inplace operation"), and one through a view of a leaf or of a no_grad view is
refused. NumPy cannot say so by comparing memory (``np.may_share_memory`` is False for an
empty array): the cpu backend asks which array owns the memory (``backends/numpy.py``
``_is_view``). Each program runs on torch and on retrograd; results -- or errors, class and
key phrase -- must agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
from torch_parity import same  # noqa: E402 - after the skip: it imports torch


def _same(program: Callable[[Any], Any], phrase: str | None = None) -> None:
    """``torch_parity.same``, where an error torch raises must come with its phrase."""
    returned = []

    def run(lib: Any) -> Any:
        result = program(lib)
        returned.append(lib)
        return result

    same(run, phrase)
    assert phrase is not None or torch in returned, "torch raised: give the phrase to check"


# every way to take an empty view: (name, make(lib) -> (base, view))
VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("slice-past-end", lambda m: (lambda t: (t, t[1:]))(m.zeros(1, 3))),
    ("slice-columns", lambda m: (lambda t: (t, t[:, :0]))(m.zeros(1, 3))),
    ("slice-backwards", lambda m: (lambda t: (t, t[:, 3:0]))(m.zeros(1, 3))),
    ("int-index", lambda m: (lambda t: (t, t[0]))(m.zeros(2, 0))),
    ("ellipsis", lambda m: (lambda t: (t, t[...]))(m.zeros(0, 3))),
    ("none-index", lambda m: (lambda t: (t, t[None]))(m.zeros(0, 3))),
    ("reshape", lambda m: (lambda t: (t, t.reshape(3, 0)))(m.zeros(0, 3))),
    ("reshape-same", lambda m: (lambda t: (t, t.reshape(0, 3)))(m.zeros(0, 3))),
    ("view", lambda m: (lambda t: (t, t.view(3, 0)))(m.zeros(0, 3))),
    ("view_as", lambda m: (lambda t: (t, t.view_as(m.zeros(3, 0))))(m.zeros(0, 3))),
    ("flatten", lambda m: (lambda t: (t, t.flatten()))(m.zeros(0, 3))),
    ("expand", lambda m: (lambda t: (t, t.expand(2, 0, 3)))(m.zeros(0, 3))),
    ("expand-same", lambda m: (lambda t: (t, t.expand(0, 3)))(m.zeros(0, 3))),
    ("expand_as", lambda m: (lambda t: (t, t.expand_as(m.zeros(4, 0))))(m.zeros(1, 0))),
    ("transpose", lambda m: (lambda t: (t, t.transpose(0, 1)))(m.zeros(0, 3))),
    ("T", lambda m: (lambda t: (t, t.T))(m.zeros(0, 3))),
    ("mT", lambda m: (lambda t: (t, t.mT))(m.zeros(2, 0, 3))),
    ("permute", lambda m: (lambda t: (t, t.permute(1, 0)))(m.zeros(0, 3))),
    ("squeeze", lambda m: (lambda t: (t, t.squeeze(1)))(m.zeros(0, 1))),
    ("unsqueeze", lambda m: (lambda t: (t, t.unsqueeze(0)))(m.zeros(0, 3))),
    ("view-of-empty-slice", lambda m: (lambda t: (t, t[1:].view(3, 0)))(m.zeros(1, 3))),
    # copies: advanced indexing makes new tensors, empty or not
    ("index-empty-list", lambda m: (lambda t: (t, t[m.tensor([], dtype=m.int64)]))(
        m.zeros(1, 3))),
    ("mask-none-true", lambda m: (lambda t: (t, t[t > 5]))(m.zeros(1, 3))),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=name) for name, f in VIEWS])
def test_empty_view_shares_the_version_counter(make: Callable[[Any], Any]) -> None:
    def program(m: Any) -> Any:
        base, v = make(m)
        is_view = v._base is not None
        base.add_(1.0)
        after_base = (base._version, v._version)
        v.mul_(2.0)
        return is_view, tuple(v.shape), after_base, (base._version, v._version)

    _same(program)


def test_empty_slice_of_one_row_is_a_view() -> None:
    """The probe's finding (test_probe_machine.py test_empty_slice_is_a_view)."""
    def program(m: Any) -> Any:
        t = m.zeros(1, 3)
        v = t[1:]
        t.add_(1.0)
        return v._base is not None, v._version

    _same(program)


def test_inplace_through_empty_view_invalidates_saved_base() -> None:
    def program(m: Any) -> Any:
        x = m.ones(1, 3, requires_grad=True)
        y = x.exp()  # saves its output
        y[:, :0].add_(1.0)
        y.sum().backward()

    _same(program, "modified by an inplace operation")


def test_inplace_through_view_of_empty_view_invalidates_saved_base() -> None:
    def program(m: Any) -> Any:
        x = m.zeros(1, 3, requires_grad=True)
        y = x.exp()
        y[1:].view(3, 0).zero_()
        y.sum().backward()

    _same(program, "modified by an inplace operation")


def test_inplace_through_empty_reshape_invalidates_saved_base() -> None:
    def program(m: Any) -> Any:
        x = m.zeros(0, 3, requires_grad=True)
        y = x.exp()
        y.reshape(3, 0).mul_(2.0)
        y.sum().backward()

    _same(program, "modified by an inplace operation")


def test_inplace_through_empty_view_rebases() -> None:
    def program(m: Any) -> Any:
        x = m.ones(1, 3, requires_grad=True)
        y = x * 2
        y[1:].mul_(3.0)
        name = y.grad_fn.name()
        y.sum().backward()
        return name, x.grad.tolist(), y._version

    _same(program)


def test_empty_view_of_leaf_refuses_inplace() -> None:
    def program(m: Any) -> Any:
        x = m.ones(1, 3, requires_grad=True)
        x[1:].add_(1.0)

    _same(program, "a view of a leaf Variable that requires grad is being used in an "
                   "in-place operation")


def test_empty_view_made_in_no_grad_refuses_inplace() -> None:
    def program(m: Any) -> Any:
        x = m.ones(1, 3, requires_grad=True)
        y = x * 2
        with m.no_grad():
            v = y[1:]
        v.mul_(2.0)

    _same(program, "A view was created in no_grad mode and is being modified inplace with "
                   "grad mode enabled")


def test_empty_view_gradient() -> None:
    def program(m: Any) -> Any:
        x = m.ones(2, 3, requires_grad=True)
        (x[2:].sum() + x[:, :0].sum() + x.reshape(3, 2)[:, 2:].sum() + x.sum()).backward()
        return x.grad.tolist()

    _same(program)
