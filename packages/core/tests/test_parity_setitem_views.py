"""``__setitem__``, ``copy_`` and views after in-place writes, against PyTorch.

Each program runs on torch and on retrograd (``lib``), and the two must agree: the same
values and dtypes, the same ``requires_grad`` and presence of a ``grad_fn`` for every tensor
the program returns (gradients too, where it returns them), or an error on both, retrograd's
an instance of torch's class.

Why these corners: the differential probe machine (``reliability/test_probe_machine.py``)
found that retrograd

- refused or mis-shaped ``t[key] = value`` where PyTorch drops the value's leading 1s
  (``t[0] = ones(1)``, ``t[mask] = ones(1, 3)``) or fills with a one-element value of another
  dtype (``t[mask] = tensor([5.], dtype=float32)`` into float64);
- gave an integer tensor written with ``copy_`` (or a ``__setitem__`` that is a ``copy_``)
  from a tensor that requires grad a history, where PyTorch's ``copy_`` records only into a
  differentiable dtype (its ``fill_`` and ``index_put`` do record, and so must retrograd);
- took a view again from its base only after a *recorded* in-place change, where PyTorch does
  after any change of the shared data (also under no_grad): a view made under no_grad is then
  refused, and a view taken from another view skips it (and its hooks).

The sweeps below cover the neighbours of each: every key kind, value shape, dtype and grad
mode, not only the programs the machine found.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import retrograd as rg


# -- the harness ------------------------------------------------------------------------------
def plain(v):
    """Tensors as (dtype, values, requires_grad, has grad_fn); containers recursively."""
    if isinstance(v, (torch.Tensor, rg.Tensor)):
        return (str(v.dtype).rsplit(".", 1)[-1], v.detach().tolist(), bool(v.requires_grad),
                v.grad_fn is not None)
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def outcome(program, lib, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", plain(program(lib, *args))
    except Exception as exc:  # noqa: BLE001 - compared with the oracle's
        return "raised", exc


def equal(a, b) -> bool:
    """Equal structure and values, a NaN equal to a NaN."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def differs(program, *args) -> str | None:
    """None when torch and retrograd agree on ``program(lib, *args)``, else what differs."""
    want, got = outcome(program, torch, *args), outcome(program, rg, *args)
    if want[0] == got[0] == "raised":
        if isinstance(got[1], type(want[1])):
            return None
    elif want[0] == got[0] == "ok" and equal(want[1], got[1]):
        return None
    show = [w if w[0] == "ok" else (w[0], f"{type(w[1]).__name__}: {w[1]}") for w in (want, got)]
    return f"{args}\n  torch:     {show[0]}\n  retrograd: {show[1]}"


def same(program, *args) -> None:
    why = differs(program, *args)
    assert why is None, why


# -- __setitem__: every key kind, value shape, dtype and grad mode ----------------------------
DTYPES = ["float32", "float64", "int64", "bool"]
FLOATS = ("float32", "float64")

KEYS_1D = {
    "int": lambda lib: 0,
    "slice": lambda lib: slice(1, None),
    "ellipsis": lambda lib: Ellipsis,
    "none": lambda lib: None,
    "list": lambda lib: [0, 1],
    "mask": lambda lib: lib.tensor([True, False, True]),
    "index": lambda lib: lib.tensor([0, 2]),
    "index_0d": lambda lib: lib.tensor(1),
}
KEYS_2D = {
    "int": lambda lib: 0,
    "slice": lambda lib: slice(1, None),
    "ellipsis": lambda lib: Ellipsis,
    "none": lambda lib: None,
    "int_slice": lambda lib: (1, slice(0, 2)),
    "mask_2d": lambda lib: lib.tensor([[False, False, False], [True, True, True]]),
    "mask_rows": lambda lib: lib.tensor([False, True]),
    "slice_mask": lambda lib: (slice(None), lib.tensor([True, False, True])),
    "int_mask": lambda lib: (1, lib.tensor([True, False, True])),
    "index": lambda lib: lib.tensor([1]),
}
VALUES = {  # shapes of a tensor value; "number" is a Python number of the value's kind
    "0d": (), "1": (1,), "1x1": (1, 1), "1x1x1": (1, 1, 1), "3": (3,), "1x3": (1, 3),
    "2": (2,), "1x2": (1, 2), "2x1": (2, 1), "number": None,
}
MODES = [  # (the value requires grad, the destination, grad mode)
    (False, "leaf", True), (True, "leaf", True), (True, "leaf", False),
    (True, "non-leaf", True), (False, "non-leaf", True), (True, "view", True),
]


def value_of(lib, shape, dtype, requires_grad):
    if shape is None:
        return {"float32": 4.0, "float64": 4.0, "int64": 4, "bool": True}[dtype]
    n = int(np.prod(shape, dtype=int))
    data = np.arange(5, 5 + n).reshape(shape)
    data = (data % 2 == 1) if dtype == "bool" else data
    return lib.tensor(data.tolist(), dtype=getattr(lib, dtype),
                      requires_grad=requires_grad and dtype in FLOATS)


def setitem_program(lib, shape, dtype, key, value_shape, value_dtype, requires_grad, dest,
                    grad_mode):
    """``t[key] = value`` on a tensor of ``shape`` and ``dtype``: a leaf, a non-leaf (float
    only: ``leaf * 1``), or a view of a non-leaf; then, where the result has a history, a
    backward, whose gradients are returned too."""
    leaf = lib.tensor(np.arange(1, 1 + int(np.prod(shape))).reshape(shape).tolist(),
                      dtype=getattr(lib, dtype), requires_grad=dest != "leaf")
    t = leaf if dest == "leaf" else leaf * 1
    written = t.view(-1).view(shape) if dest == "view" else t
    value = value_of(lib, value_shape, value_dtype, requires_grad)
    index = (KEYS_1D if len(shape) == 1 else KEYS_2D)[key](lib)
    with lib.set_grad_enabled(grad_mode):
        written[index] = value
    out = [t, t._version]
    if t.requires_grad and t.dtype in (lib.float32, lib.float64):
        weights = lib.tensor(np.arange(2, 2 + int(np.prod(shape))).reshape(shape).tolist(),
                             dtype=t.dtype)
        (t * weights).sum().backward()
        out += [leaf.grad, getattr(value, "grad", None)]
    return out


def _sweep(shape, key):
    bad = []
    for value_shape in VALUES:
        for dtype in DTYPES:
            for value_dtype in DTYPES:
                for requires_grad, dest, grad_mode in MODES:
                    if (requires_grad and value_dtype not in FLOATS) or (
                            dest != "leaf" and dtype not in FLOATS) or (
                            value_shape == "number" and requires_grad):
                        continue
                    why = differs(setitem_program, shape, dtype, key, VALUES[value_shape],
                                  value_dtype, requires_grad, dest, grad_mode)
                    if why is not None:
                        bad.append(why)
    assert not bad, f"{len(bad)} differences, the first ones:\n" + "\n".join(bad[:6])


@pytest.mark.parametrize("key", sorted(KEYS_1D))
def test_setitem_into_a_vector(key):
    _sweep((3,), key)


@pytest.mark.parametrize("key", sorted(KEYS_2D))
def test_setitem_into_a_matrix(key):
    _sweep((2, 3), key)


# -- the probe machine's programs, and their closest neighbours -------------------------------
def test_an_element_takes_a_one_element_vector():
    def program(lib, dtype):
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        t[0] = lib.ones(1)
        t[1] = lib.ones(1, 1) * 2
        return t

    for dtype in DTYPES:
        same(program, dtype)


def test_a_mask_takes_a_value_with_leading_ones():
    def program(lib, shape):
        t = lib.zeros(2, 3)
        t[lib.tensor([[False, False, False], [True, True, True]])] = lib.ones(*shape)
        return t

    for shape in [(1, 3), (1, 1, 3), (1, 1), (3,), (2, 3), (1, 2)]:
        same(program, shape)


def test_a_mask_fills_with_one_element_of_another_dtype():
    def program(lib, dtype, value, shape):
        t = lib.zeros(3, dtype=getattr(lib, dtype))
        t[lib.tensor([True, False, True])] = lib.tensor(value).reshape(shape)
        return t

    for dtype in DTYPES:
        for value in (5.5, -2.25, 3, True, float("nan")):
            for shape in [(), (1,), (1, 1)]:
                same(program, dtype, value, shape)


def test_an_index_put_of_another_dtype_is_still_refused():
    def program(lib, shape):
        t = lib.zeros(3, dtype=lib.float64)
        t[lib.tensor([0, 2])] = lib.ones(shape, dtype=lib.float32)
        return t

    for shape in [(), (1,), (2,), (3,)]:
        same(program, shape)


def test_integer_and_bool_tensors_written_from_a_grad_tensor():
    """``copy_`` (also a ``__setitem__`` that is one) leaves them leaves; ``fill_`` (also a
    0-d value into a bigger slot) and the masked fill record, as in PyTorch."""
    writes = {
        "copy_": lambda lib, t, x: t.copy_(x),
        "copy_ broadcast": lambda lib, t, x: t.copy_(x[:1]),
        "slice": lambda lib, t, x: t.__setitem__(slice(1, None), x[1:]),
        "slice, 1x2": lambda lib, t, x: t.__setitem__(slice(1, None), x[1:].reshape(1, 2)),
        "element, 0-d": lambda lib, t, x: t.__setitem__(0, x[2]),
        "element, 1-d": lambda lib, t, x: t.__setitem__(0, x[:1]),
        "ellipsis": lambda lib, t, x: t.__setitem__(Ellipsis, x),
        "slice, 0-d (a fill_)": lambda lib, t, x: t.__setitem__(slice(1, None), x[0]),
        "fill_": lambda lib, t, x: t.fill_(x[1]),
        "mask, 0-d": lambda lib, t, x: t.__setitem__(lib.tensor([True, False, True]), x[0]),
        "mask, 1-d": lambda lib, t, x: t.__setitem__(lib.tensor([True, False, True]), x[:1]),
        "index": lambda lib, t, x: t.__setitem__(lib.tensor([0, 2]), x[:2]),
        "view copy_": lambda lib, t, x: t[1:].copy_(x[:2]),
    }

    def program(lib, dtype, name, no_grad_view):
        x = lib.tensor([1.5, -1.0, -1.75], requires_grad=True)
        t = lib.tensor([2, -3, -2], dtype=getattr(lib, dtype))
        if no_grad_view:
            with lib.no_grad():
                t = t[:]
        writes[name](lib, t, x)
        return t, t.is_leaf, t._version

    for dtype in ("int64", "int32", "bool", "float16", "float64"):
        for name in writes:
            for no_grad_view in (False, True):
                same(program, dtype, name, no_grad_view)


def test_an_integer_copy_from_a_grad_tensor_then_used():
    def program(lib):
        x = lib.tensor([1.5, -1.0, -1.75], requires_grad=True)
        i = lib.tensor([2, -3, -2])
        i[1:] = x[1:]
        j = lib.tensor([2, -3, -2])
        j.copy_(x)
        return i * 2, j + x, i.is_leaf, j.is_leaf

    same(program)


# -- views after an unrecorded write of their base --------------------------------------------
def no_grad_view(lib, make, write, use):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = x if make == "leaf" else x * 1
    with lib.no_grad():
        v = base[::1]
        if write == "base":
            base.add_(1.0)
        elif write == "other view":
            base[1:].mul_(3.0)
        elif write == "the view itself":
            v.sub_(1.0)
        elif write == "setitem":
            base[0] = 5.0
        elif write == "copy_":
            base.copy_(lib.tensor([4.0, 5.0, 6.0]))
        elif write == "fill_":
            base.fill_(2.0)
    if write == "alias":
        base.detach().zero_()
    if use == "op":
        return v * 2
    if use == "second operand":
        return lib.tensor([1.0, 1.0, 1.0]) * v
    if use == "under no_grad":
        with lib.no_grad():
            return v * 2
    if use == "reduction":
        return v.sum()
    return lib.tanh(v)


@pytest.mark.parametrize("write", ["base", "other view", "the view itself", "setitem", "copy_",
                                   "fill_", "alias", "none"])
def test_a_no_grad_view_after_its_base_changed(write):
    """Refused once the data changed (by any write, recorded or not) while grad mode is on,
    as in PyTorch; usable under no_grad, and when nothing changed."""
    for make in ("leaf", "non-leaf"):
        for use in ("op", "second operand", "under no_grad", "reduction", "tanh"):
            same(no_grad_view, make, write, use)


def test_a_no_grad_view_of_a_tensor_without_grad_stays_usable():
    def program(lib):
        b = lib.zeros(3)
        with lib.no_grad():
            v = b[0:]
        b.add_(1.0)
        out = v * 2
        v.register_hook(lambda g: None)  # refused: v needs no gradient
        return out

    same(program)


def test_a_write_before_the_view_is_made_is_not_a_change():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            x.add_(1.0)
            v = x[::1]
        return v * 2

    same(program)


def hooked_views(lib, write, where, retain):
    """x, a view v of it with a hook (or retain_grad), w taken from v; then x's data changes
    and w (or v) is differentiated: PyTorch takes the view again from x, skipping v's node."""
    x0 = lib.tensor([[0.0, 1.0], [2.0, 3.0]], requires_grad=True)
    x = x0 if where == "leaf" else x0 * 1
    v = x[:]
    seen = []
    if retain:
        v.retain_grad()
    else:
        v.register_hook(lambda g: seen.append(g.tolist()))
    w = v.unsqueeze(0)
    if write == "no_grad":
        with lib.no_grad():
            x.sub_(1.0)
    elif write == "alias":
        x.detach()[0, 0] = 9.0
    elif write == "through v, no_grad":
        with lib.no_grad():
            v[0, 1] = 4.0
    elif write == "recorded" and where == "non-leaf":
        x.mul_(2.0)
    w.backward(lib.ones(1, 2, 2))
    return seen, x0.grad, (v.grad if retain else None)


@pytest.mark.parametrize("write", ["no_grad", "alias", "through v, no_grad", "recorded",
                                   "none"])
def test_hooks_on_a_view_its_base_bypassed(write):
    for where in ("leaf", "non-leaf"):
        for retain in (False, True):
            same(hooked_views, write, where, retain)


def test_a_view_used_itself_after_an_unrecorded_write():
    """The view's own node is made again: the hook stays with the old one, retain_grad
    follows the new one, as in PyTorch."""
    def program(lib, retain):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v = x.view(2)
        seen = []
        if retain:
            v.retain_grad()
        else:
            v.register_hook(lambda g: seen.append(g.tolist()))
        with lib.no_grad():
            x.mul_(2.0)
        (v * 3).sum().backward()
        return seen, x.grad, (v.grad if retain else None)

    for retain in (False, True):
        same(program, retain)


def test_grad_of_a_view_taken_again():
    """``autograd.grad`` takes a stale view again before it looks for it in the graph: the
    new node is not in a graph built before the write."""
    def program(lib, built_after):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v = x[:]
        y = (v * 3).sum()
        with lib.no_grad():
            x.add_(0.0)
        if built_after:
            y = (v * 2).sum()
        return lib.autograd.grad(y, [v], allow_unused=True)

    for built_after in (False, True):
        same(program, built_after)


def test_a_custom_function_view_after_an_unrecorded_write():
    def program(lib):
        class Alias(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.view_as(a)

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        v = Alias.apply(x)
        with lib.no_grad():
            x.add_(1.0)
        return v * 2

    same(program)


STALE_USES = {
    "register_hook": lambda lib, x, v: v.register_hook(lambda g: None) and None,
    "post-accumulate hook": lambda lib, x, v: v.register_post_accumulate_grad_hook(
        lambda t: None) and None,
    "retain_grad": lambda lib, x, v: v.retain_grad(),
    "requires_grad_(False)": lambda lib, x, v: v.requires_grad_(False),
    "requires_grad_(True)": lambda lib, x, v: v.requires_grad_(True),
    "backward": lambda lib, x, v: v.backward(lib.ones(2)),
    "autograd.grad input": lambda lib, x, v: lib.autograd.grad((x * 2).sum(), [v]),
    "detach": lambda lib, x, v: v.detach() * 2,
    "clone": lambda lib, x, v: v.clone(),
}


@pytest.mark.parametrize("use", sorted(STALE_USES))
def test_a_stale_view_through_the_tensor_api(use):
    """Where PyTorch reads the ``grad_fn`` of a view whose base changed (taking it again, or
    refusing a view made under no_grad) and where it reads only the field."""
    def program(lib, made, write):
        x = lib.tensor([1.0, 2.0], requires_grad=made != "no_grad, plain base")
        with lib.set_grad_enabled(made == "grad mode"):
            v = x[::1]
        with lib.no_grad():
            if write:
                x.add_(1.0)
        return STALE_USES[use](lib, x, v)

    for made in ("grad mode", "no_grad", "no_grad, plain base"):
        for write in (True, False):
            if use == "register_hook" and made == "grad mode" and write:
                continue  # torch 2.13 crashes (SIGSEGV) unless the view's grad_fn was read
            same(program, made, write)
