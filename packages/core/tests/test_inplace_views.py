"""In-place ops, version counters, history rebasing and views."""

import numpy as np
import pytest

import retrograd as rg

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_inplace_on_nonleaf_is_recorded_like_torch(op):
    a = np.array([1.5, -2.0, 0.5])
    b = np.array([0.7, 1.3, -0.4])
    x = rg.tensor(a, dtype=rg.float64, requires_grad=True)
    w = rg.tensor(b, dtype=rg.float64, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    tw = torch.tensor(b, requires_grad=True)
    h, th = x * 2, tx * 2
    getattr(h, op)(w)
    getattr(th, op)(tw)
    assert h._version == 1
    (h * h).sum().backward()
    (th * th).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_setitem_recorded_like_torch():
    a = np.arange(6.0).reshape(2, 3)
    x = rg.tensor(a, dtype=rg.float64, requires_grad=True)
    v = rg.tensor([10.0, 20.0], dtype=rg.float64, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    tv = torch.tensor([10.0, 20.0], dtype=torch.float64, requires_grad=True)
    h, th = x * 1.5, tx * 1.5
    h[:, 1] = v
    th[:, 1] = tv
    h[0, 0] = 7.0
    th[0, 0] = 7.0
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy())
    (h * h).sum().backward()
    (th * th).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


def test_inplace_ops_bump_version_also_under_no_grad():
    t = rg.zeros(3)
    t.add_(1)
    t.mul_(2)
    with rg.no_grad():
        t.sub_(1)
        t.div_(2)
        t.fill_(4)
        t.zero_()
        t.copy_(rg.ones(3))
        t[0] = 5.0
    t += 1
    t -= 1
    t *= 2
    t /= 2
    assert t._version == 12
    assert t.tolist() == [5.0, 1.0, 1.0]


def test_views_share_version_counter():
    base = rg.zeros(2, 3)
    views = [base.view(6), base.reshape(3, 2), base.transpose(0, 1), base.permute(1, 0),
             base.T, base[0], base[:, 1:], base.detach(), base.unsqueeze(0),
             base[None, ...]]
    for v in views:
        before = base._version
        v_before = v._version
        with rg.no_grad():
            v.add_(1) if v.shape != () else None
        assert base._version == before + 1 and v._version == v_before + 1


def test_inplace_through_view_seen_by_saved_node():
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    with rg.no_grad():
        y[1:].mul_(2)  # through a view of y, which MulBackward saved
    with pytest.raises(rg.VersionMismatch):
        z.backward()
    w = rg.tensor([1.0, 2.0], requires_grad=True)
    s = (w.sin()).sum()  # SinBackward saves its input
    with rg.no_grad():
        w.detach().mul_(3)  # detach shares the version counter too
    with pytest.raises(rg.VersionMismatch):
        s.backward()


def test_inplace_through_view_with_grad_rebases_the_base_like_torch():
    """Formerly refused; now recorded as PyTorch records it (CopySlices on the base, the view
    taken again from the base's new history). More cases: test_parity_view_inplace.py."""
    out = []
    for lib in (torch, rg):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        v.mul_(2)
        (y * y).sum().backward()
        out.append((y.tolist(), y._version, v._version, x.grad.tolist(), v.requires_grad))
    assert out[1] == out[0] == ([2.0, 4.0, 3.0], 1, 1, [8.0, 16.0, 6.0], True)


def test_stale_view_after_inplace_on_base_is_regenerated_like_torch():
    """Formerly refused as stale; now taken again from the base's current history when
    next used, as PyTorch does."""
    out = []
    for lib in (torch, rg):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[:2]
        y.mul_(2)  # recorded: y gets a new history; v's history is stale
        (v * 1).sum().backward()
        out.append(x.grad.tolist())
    assert out[1] == out[0] == [2.0, 2.0, 0.0]


def test_reshape_copy_does_not_share_counter():
    base = rg.zeros(3, 4)
    nc = base.T  # non-contiguous view
    r = nc.reshape(12)  # must copy
    with rg.no_grad():
        r.add_(1)
    assert base._version == 0 and base.sum().item() == 0.0


def test_view_of_non_contiguous_raises():
    with pytest.raises(rg.RetrogradError, match="reshape"):
        rg.zeros(3, 4).T.view(12)


def test_leaf_inplace_under_no_grad_keeps_leaf():
    w = rg.ones(2, requires_grad=True)
    with rg.no_grad():
        w.sub_(0.5)
    assert w.is_leaf and w.requires_grad and w.tolist() == [0.5, 0.5]


def test_inplace_on_leaf_without_grad_with_grad_operand_becomes_nonleaf():
    buf = rg.zeros(3)
    x = rg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buf.add_(x * 2)
    assert not buf.is_leaf and buf.requires_grad
    buf.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_copy_and_fill_gradients():
    src = rg.tensor([1.0, 2.0], requires_grad=True)
    h = rg.tensor([5.0, 5.0], requires_grad=True) * 1
    h.copy_(src * 3)
    h.sum().backward()
    assert src.grad.tolist() == [3.0, 3.0]
    a = rg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.fill_(7.0)
    (b * a).sum().backward()
    assert a.grad.tolist() == [7.0, 7.0]


def test_flatten_of_nothing_to_merge_is_the_tensor_itself_as_in_pytorch():
    import torch

    x = rg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    v = rg.exp(x)
    w = v.flatten()  # 1-D: PyTorch returns the same tensor, so retain_grad on it is v's
    assert w is v
    w.retain_grad()
    v.sum().backward()
    tx = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    tv = tx.exp()
    tw = tv.flatten()
    tw.retain_grad()
    tv.sum().backward()
    assert (tw is tv) and np.array_equal(w.grad.numpy(), tw.grad.numpy())
    m = rg.ones(2, 3)
    assert m.flatten(1, 1) is m and m.flatten(-1) is m
    assert m.flatten().shape == (6,) and rg.tensor(2.0).flatten().shape == (1,)
    for bad, kind in (((5,), IndexError), ((0, -3), IndexError), ((1.0,), TypeError)):
        with pytest.raises(kind, match="flatten"):
            m.flatten(*bad)
