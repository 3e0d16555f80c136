"""Differential tests of custom Functions against PyTorch.

Each test writes one small program against a library namespace ``L`` and runs it on torch and
on retrograd: the results (values, identities, versions, node names), the error (retrograd's
class must be torch's class or a subclass of it; both messages must hold the key phrase) and
the warnings must agree.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
import torch

import retrograd as rg


def _val(t: Any) -> Any:
    """A tensor's values as nested Python lists (floats rounded), None as None."""
    if t is None:
        return None
    out = t.detach().tolist() if hasattr(t, "detach") else t.tolist()

    def rnd(v: Any) -> Any:
        if isinstance(v, list):
            return [rnd(x) for x in v]
        return round(v, 6) if isinstance(v, float) else v

    return rnd(out)


def _fname(fn: Any) -> Any:
    """A node's name, without torch's C++ namespace."""
    if fn is None:
        return None
    return fn.name().replace("torch::autograd::", "")


def _nexts(t: Any) -> list[Any]:
    return [(_fname(f), nr) for f, nr in t.grad_fn.next_functions]


TORCH = SimpleNamespace(
    name="torch", lib=torch, tensor=torch.tensor, ones=torch.ones, zeros=torch.zeros,
    Function=torch.autograd.Function,
    once_differentiable=torch.autograd.function.once_differentiable,
    no_grad=torch.no_grad, grad=torch.autograd.grad, float64=torch.float64,
    int64=torch.int64, val=_val, fname=_fname, nexts=_nexts,
)
RG = SimpleNamespace(
    name="retrograd", lib=rg, tensor=rg.tensor, ones=rg.ones, zeros=rg.zeros,
    Function=rg.autograd.Function, once_differentiable=rg.autograd.once_differentiable,
    no_grad=rg.no_grad, grad=rg.autograd.grad, float64=rg.float64, int64=rg.int64,
    val=_val, fname=_fname, nexts=_nexts,
)


def _run(prog: Callable[[Any], Any], L: Any) -> tuple[Any, Any, list[Any]]:
    log: list[Any] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, exc = prog(L, log), None
        except Exception as e:  # noqa: BLE001 - the outcome is compared
            result, exc = None, e
    user = [w for w in caught if "reference cycle" not in str(w.message)]
    return (result, exc, log + [(w.category.__name__, str(w.message)) for w in user])


def check(prog: Callable[[Any, list[Any]], Any], phrase: str | None = None,
          warns: str | None = None) -> Any:
    """Run ``prog`` on both libraries and compare. ``phrase``: both must raise, with it in
    the message. ``warns``: both must warn once with it in the message."""
    t_res, t_exc, t_log = _run(prog, TORCH)
    r_res, r_exc, r_log = _run(prog, RG)
    if phrase is None:
        if t_exc is not None:
            raise AssertionError(f"torch raised {t_exc!r}")
        if r_exc is not None:
            raise AssertionError(f"retrograd raised where torch gave {t_res!r}") from r_exc
    else:
        assert t_exc is not None, f"torch did not raise (gave {t_res!r})"
        assert phrase in str(t_exc), f"phrase not in torch's message: {t_exc}"
        assert r_exc is not None, f"retrograd did not raise (gave {r_res!r}); torch: {t_exc}"
        assert isinstance(r_exc, type(t_exc)), (type(r_exc), type(t_exc), str(r_exc))
        assert phrase in str(r_exc), f"phrase not in retrograd's message: {r_exc}"
    assert r_res == t_res, f"\nretrograd: {r_res}\ntorch:     {t_res}"
    if warns is not None:
        t_w = [m for m in t_log if isinstance(m, tuple) and warns in m[1]]
        r_w = [m for m in r_log if isinstance(m, tuple) and warns in m[1]]
        assert len(t_w) == 1 and len(r_w) == 1 and t_w[0][0] == r_w[0][0], (t_log, r_log)
        t_log = [m for m in t_log if m not in t_w]
        r_log = [m for m in r_log if m not in r_w]
    assert r_log == t_log, f"\nretrograd: {r_log}\ntorch:     {t_log}"
    return t_res


def x2(L: Any) -> Any:
    return L.tensor([1.0, 2.0], requires_grad=True)


# ------------------------------------------------------------------------------------------
# 1. mark_dirty
# ------------------------------------------------------------------------------------------
def _dbl(L: Any) -> Any:
    class Dbl(L.Function):
        @staticmethod
        def forward(ctx, t):
            t.mul_(2)
            ctx.mark_dirty(t)
            return t

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    return Dbl


def test_mark_dirty_rebases_the_input_onto_the_node():
    def prog(L, log):
        x = x2(L)
        c = x.clone()
        v0 = c._version
        r = _dbl(L).apply(c)
        c.sum().backward()
        return (r is c, v0, c._version, L.fname(c.grad_fn), c.requires_grad, c.is_leaf,
                L.val(c), L.val(x.grad), L.nexts(c))

    assert check(prog)[7] == [2.0, 2.0]


def test_mark_dirty_leaf_that_requires_grad_is_refused():
    def prog(L, log):
        x = x2(L)
        try:
            _dbl(L).apply(x)
        finally:
            log.append((x._version, L.val(x), x.grad_fn, x.requires_grad))

    check(prog, phrase="a leaf Variable that requires grad has been used in an in-place "
                       "operation.")


def test_mark_dirty_view_of_a_tensor_made_in_forward_is_refused():
    def prog(L, log):
        class F(L.Function):
            @staticmethod
            def forward(ctx, inp):
                out = inp.clone().view_as(inp)
                ctx.mark_dirty(out)
                return out

            @staticmethod
            def backward(ctx, g):
                return g

        F.apply(x2(L).clone())

    check(prog, phrase="ctx.mark_dirty() received a tensor that was not an input")


def test_view_returned_under_no_grad_is_a_no_grad_view():
    def prog(L, log):
        class Alias(L.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:]

            @staticmethod
            def backward(ctx, g):
                return g

        inp = x2(L)
        with L.no_grad():
            out = Alias.apply(inp)
        out.zero_()

    check(prog, phrase="A view was created in no_grad mode and is being modified inplace")


def test_view_of_an_input_not_requiring_grad_is_a_custom_function_view():
    def prog(L, log):
        class MyFn(L.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.view_as(inp)

            @staticmethod
            def backward(ctx, grad):
                return grad

        view_a = MyFn.apply(x2(L).detach())
        view_a += x2(L)

    check(prog, phrase="This view was created inside a custom Function")


def test_mark_dirty_view_of_leaf_is_refused():
    def prog(L, log):
        x = x2(L)
        try:
            _dbl(L).apply(x[:1])
        finally:
            log.append((x._version, L.val(x), x.grad_fn))

    check(prog, phrase="a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation.")


def test_mark_dirty_not_returned_is_refused_and_history_unchanged():
    def prog(L, log):
        class NotRet(L.Function):
            @staticmethod
            def forward(ctx, t):
                t.mul_(2)
                ctx.mark_dirty(t)
                return t * 3

            @staticmethod
            def backward(ctx, g):
                return 2 * g

        x = x2(L)
        c = x.clone()
        try:
            NotRet.apply(c)
        finally:
            log.append((c._version, L.fname(c.grad_fn), L.val(c)))

    check(prog, phrase="Some elements marked as dirty during the forward method were not "
                       "returned as output")


def test_mark_dirty_not_returned_is_refused_under_no_grad_too():
    def prog(L, log):
        class NotRet(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.mark_dirty(t)
                return t * 3

            @staticmethod
            def backward(ctx, g):
                return g

        with L.no_grad():
            NotRet.apply(L.tensor([1.0]))

    check(prog, phrase="marked as dirty during the forward method were not returned")


def test_mark_dirty_of_a_leaf_without_grad_while_recording():
    def prog(L, log):
        class Dbl2(L.Function):
            @staticmethod
            def forward(ctx, t, w):
                t.mul_(2)
                ctx.mark_dirty(t)
                return t

            @staticmethod
            def backward(ctx, g):
                return 2 * g, g

        y = L.tensor([1.0, 2.0])
        w = x2(L)
        r = Dbl2.apply(y, w)
        r.sum().backward()
        return (r is y, y.is_leaf, y.requires_grad, y._version, L.fname(y.grad_fn),
                L.val(w.grad), L.val(y))

    check(prog)


def test_mark_dirty_bump_is_seen_by_an_earlier_saving_node():
    def prog(L, log):
        x = x2(L)
        c = x.clone()
        s = c * c
        _dbl(L).apply(c)
        s.sum().backward()

    check(prog, phrase="modified by an inplace operation")


def test_mark_dirty_saved_before_the_change_is_saved_at_the_new_version():
    def prog(L, log):
        class SB(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t)
                t.mul_(2)
                ctx.mark_dirty(t)
                return t

            @staticmethod
            def backward(ctx, g):
                (t,) = ctx.saved_tensors
                log.append((L.val(t), t._version, L.fname(t.grad_fn)))
                return 2 * g * t

        x = x2(L)
        c = x.clone()
        r = SB.apply(c)
        r.sum().backward()
        out = L.val(x.grad)
        c2 = x.clone()
        r2 = SB.apply(c2)
        r2.add_(1)  # after the save: backward must see it
        try:
            r2.sum().backward()
        except RuntimeError as e:
            out = (out, "modified by an inplace operation" in str(e))
        return out

    assert check(prog) == ([4.0, 8.0], True)


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns():
    def prog(L, log):
        class MNO(L.Function):
            @staticmethod
            def forward(ctx, t):
                u = t * 2
                u.mul_(2)
                ctx.mark_dirty(u)
                return u

            @staticmethod
            def backward(ctx, g):
                return 4 * g

        x = x2(L)
        r = MNO.apply(x)
        r.sum().backward()
        return L.val(r), L.val(x.grad)

    check(prog, warns="ctx.mark_dirty() received a tensor that was not an input")


def test_mark_dirty_under_no_grad_returns_a_detached_alias_of_a_leaf():
    def prog(L, log):
        x = x2(L)
        with L.no_grad():
            r = _dbl(L).apply(x)
        return (r is x, r._base is None, r.requires_grad, x._version, r._version,
                L.val(x), x.requires_grad, x.is_leaf)

    check(prog)


def test_mark_dirty_view_with_several_outputs_is_refused():
    def prog(L, log):
        class DV2(L.Function):
            @staticmethod
            def forward(ctx, t):
                t.mul_(2)
                ctx.mark_dirty(t)
                return t, t * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return 2 * g1 + 6 * g2

        c = L.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        try:
            DV2.apply(c[:2])
        finally:
            log.append((c._version, L.fname(c.grad_fn)))

    check(prog, phrase="your Function cannot return more than one Tensor")


def test_mark_dirty_non_tensor_is_refused():
    def prog(L, log):
        class MNT(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.mark_dirty(t, 3)
                return t

            @staticmethod
            def backward(ctx, g):
                return g

        MNT.apply(x2(L).clone())

    check(prog, phrase="mark_dirty can only accept variables, but argument")


def test_mark_dirty_view_of_a_non_leaf_rebases_its_base():
    """PyTorch rebases the base of a dirty view through CopySlices and takes the view again
    from it: the gradient reaches the base's history through the Function's backward."""
    def prog(L, log):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        c = x.clone()
        v = c[:2]
        r = _dbl(L).apply(v)
        c.sum().backward()
        # (v's node taken again: AsStridedBackward0 in PyTorch, the view's own step in
        # retrograd -- semantics.md, "graph of a view written in place")
        return (r is v, L.val(c), L.val(v), L.fname(c.grad_fn), v.requires_grad, v.is_leaf,
                L.val(x.grad))

    assert check(prog)[-1] == [2.0, 2.0, 1.0]


def test_mark_dirty_view_other_views_and_retain_grad_follow():
    """Another view of the base taken before is taken again; retain_grad on the base
    follows its new history; a second Function call through a view of a view."""
    def prog(L, log):
        x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        c = x * 1
        c.retain_grad()
        other = c[1]
        row = c[0]
        col = row[1:]
        _dbl(L).apply(col)
        _dbl(L).apply(row)
        (c * L.tensor([[1.0, 10.0, 100.0], [1.0, 1.0, 1.0]])).sum().backward(retain_graph=True)
        y = (other * 3).sum()
        gx = L.grad(y, x)[0]
        return L.val(c), L.val(x.grad), L.val(c.grad), L.val(gx), L.fname(c.grad_fn)

    check(prog)


def test_mark_dirty_view_of_a_plain_tensor_with_a_grad_operand():
    """A view of a tensor that needs no gradient, written in place by a Function with an
    operand that does: PyTorch rebases the plain base too (it now requires grad)."""
    class AddInto:
        @staticmethod
        def make(L: Any) -> Any:
            class Add(L.Function):
                @staticmethod
                def forward(ctx, t, o):
                    t.add_(o)
                    ctx.mark_dirty(t)
                    return t

                @staticmethod
                def backward(ctx, g):
                    return g, g

            return Add

    def prog(L, log):
        base = L.zeros(2, 3)
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        AddInto.make(L).apply(base[1], w)
        (base * 2).sum().backward()
        return (L.val(base), base.requires_grad, L.fname(base.grad_fn), L.val(w.grad))

    check(prog)


# ------------------------------------------------------------------------------------------
# 2. outputs that are views: inputs returned as-is, views made in forward
# ------------------------------------------------------------------------------------------
def _ident(L: Any) -> Any:
    class Ident(L.Function):
        @staticmethod
        def forward(ctx, t):
            return t

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    return Ident


def _first(L: Any) -> Any:
    class First(L.Function):
        @staticmethod
        def forward(ctx, t):
            return t[:1]

        @staticmethod
        def backward(ctx, g):
            return L.lib.cat([g, L.zeros(1)])

    return First


def test_input_returned_as_is_is_a_new_view_with_the_node():
    def prog(L, log):
        x = x2(L)
        c = x.clone()
        r = _ident(L).apply(c)
        out = (r is c, r._base is c, L.fname(r.grad_fn), r.requires_grad, r.output_nr)
        r.sum().backward()
        with L.no_grad():
            r.mul_(1)  # a view: the version is shared
        return out, L.val(x.grad), c._version, r._version

    check(prog)


def test_input_returned_as_is_refuses_inplace_with_grad_on():
    def prog(L, log):
        r = _ident(L).apply(x2(L).clone())
        r.mul_(2)

    check(prog, phrase="Output 0 of Ident is a view and is being modified inplace. This view "
                       "was created inside a custom Function (or because an input was "
                       "returned as-is)")


def test_leaf_returned_as_is_refuses_inplace():
    def prog(L, log):
        x = x2(L)
        r = _ident(L).apply(x)
        log.append((r is x, r._base is x, r.is_leaf))
        r.add_(1)

    check(prog, phrase="This view was created inside a custom Function")


def test_view_made_in_forward_refuses_inplace():
    def prog(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        r = _first(L).apply(x.clone())
        log.append((r._base is not None, L.fname(r.grad_fn)))
        r.mul_(2)

    check(prog, phrase="Output 0 of First is a view and is being modified inplace")


def test_view_made_in_forward_gradient():
    def prog(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        r = _first(L).apply(x)
        r.sum().backward()
        return L.val(r), r._base is x, L.val(x.grad)

    check(prog)


def test_input_returned_as_is_under_no_grad_is_a_view_that_may_change():
    def prog(L, log):
        c = x2(L).clone()
        with L.no_grad():
            r = _ident(L).apply(c)
            r.mul_(2)
        y = L.tensor([1.0, 2.0])
        r2 = _ident(L).apply(y)  # nothing requires grad: no node
        r2.mul_(2)  # grad mode on: allowed, nothing records
        return (r is c, r._base is c, r.requires_grad, c._version, r2 is y, r2._base is y,
                r2.grad_fn, L.val(y))

    check(prog)


def test_input_without_grad_returned_as_is_while_recording():
    def prog(L, log):
        class InOther(L.Function):
            @staticmethod
            def forward(ctx, t, u):
                return u

            @staticmethod
            def backward(ctx, g):
                return g, g

        x = x2(L)
        y = L.ones(2)
        r = InOther.apply(x, y)
        log.append((r is y, r._base is y, r.requires_grad, L.fname(r.grad_fn)))
        r.mul_(1)

    check(prog, phrase="Output 0 of InOther is a view")


def test_integer_input_returned_as_is_may_change_in_place():
    def prog(L, log):
        class IntIn(L.Function):
            @staticmethod
            def forward(ctx, t, u):
                return u

            @staticmethod
            def backward(ctx, g):
                return g, None

        i = L.ones(3, dtype=L.int64)
        r = IntIn.apply(x2(L), i)
        r.mul_(2)
        return r is i, r._base is i, r.requires_grad, r.grad_fn, L.val(i)

    check(prog)


def test_view_output_of_a_multi_output_function():
    def prog(L, log):
        class Two(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t, t * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + 2 * g2

        a, b = Two.apply(x2(L).clone())
        b.mul_(2)  # not a view: fine
        a.mul_(2)

    check(prog, phrase="This view is the output of a function that returns multiple views")


def test_non_differentiable_input_returned_is_a_detached_alias():
    def prog(L, log):
        class NDI(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.mark_non_differentiable(t)
                return t

            @staticmethod
            def backward(ctx, g):
                return g

        x = x2(L)
        r = NDI.apply(x)
        r.mul_(3)
        return r is x, r._base is None, r.requires_grad, r.grad_fn, x._version, L.val(x)

    check(prog)


# ------------------------------------------------------------------------------------------
# 3. materialized gradients
# ------------------------------------------------------------------------------------------
def _two(L: Any, materialize: bool, non_diff: bool) -> Any:
    class Two(L.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.set_materialize_grads(materialize)
            a, b = t * 2, t * 3
            if non_diff:
                ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.log.append((L.val(ga), L.val(gb)))
            return 2 * ga + (0 if gb is None else 3 * gb)

    return Two


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("non_diff", [True, False])
def test_unused_output_gradient_is_zeros_unless_not_materialized(materialize, non_diff):
    def prog(L, log):
        x = x2(L).double()
        a, b = _two(L, materialize, non_diff).apply(x)
        a.grad_fn.log = log
        a.sum().backward()
        return b.requires_grad, b.grad_fn is None

    check(prog)


def test_materialized_gradient_keeps_the_output_dtype():
    def prog(L, log):
        class IntOut(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2, (t > 1).long()

            @staticmethod
            def backward(ctx, ga, gb):
                log.append((L.val(gb), str(gb.dtype).split(".")[-1]))
                return 2 * ga

        x = x2(L)
        a, b = IntOut.apply(x)
        a.sum().backward()
        return b.requires_grad, L.val(x.grad)

    check(prog)


# ------------------------------------------------------------------------------------------
# 4 and 9. what backward returns
# ------------------------------------------------------------------------------------------
def _returning(L: Any, fn: Callable[..., Any], nargs: int = 2) -> Any:
    class R(L.Function):
        @staticmethod
        def forward(ctx, t, k=2.0):
            return t * k

        @staticmethod
        def backward(ctx, g):
            return fn(L, g)

    return R


def _bw(L: Any, fn: Callable[..., Any]) -> Any:
    x = x2(L)
    _returning(L, fn).apply(x, 2.0).sum().backward()
    return L.val(x.grad)


def test_trailing_nones_are_accepted():
    assert check(lambda L, log: _bw(L, lambda L, g: (2 * g, None, None, None))) == [2.0, 2.0]


def test_extra_gradient_that_is_not_none_is_refused():
    check(lambda L, log: _bw(L, lambda L, g: (2 * g, None, g)),
          phrase="returned an incorrect number of gradients (expected 2, got 3)")
    check(lambda L, log: _bw(L, lambda L, g: (2 * g, None, 5)),
          phrase="returned an incorrect number of gradients (expected 2, got 3)")


def test_too_few_gradients_are_refused():
    check(lambda L, log: _bw(L, lambda L, g: 2 * g),
          phrase="function RBackward returned an incorrect number of gradients (expected 2, "
                 "got 1)")
    check(lambda L, log: _bw(L, lambda L, g: [2 * g, None]),
          phrase="incorrect number of gradients (expected 2, got 1)")


def test_gradient_for_a_non_tensor_input_must_be_none():
    check(lambda L, log: _bw(L, lambda L, g: (2 * g, 3.0)),
          phrase="returned a gradient different than None at position 2, but the "
                 "corresponding forward input was not a Variable")


def test_non_tensor_gradient_is_refused():
    check(lambda L, log: _bw(L, lambda L, g: ("s", None)),
          phrase="expected Variable or None (got str)")


def test_gradient_of_the_wrong_shape_is_refused():
    check(lambda L, log: _bw(L, lambda L, g: (L.ones(3), None)),
          phrase="Function RBackward returned an invalid gradient at index 0 - got [3] but "
                 "expected shape compatible with [2]")
    check(lambda L, log: _bw(L, lambda L, g: (L.ones(1), None)),
          phrase="got [1] but expected shape compatible with [2]")
    check(lambda L, log: _bw(L, lambda L, g: (L.ones(()), None)),
          phrase="got [] but expected shape compatible with [2]")


def test_gradient_index_counts_tensor_inputs_and_skips_inputs_without_grad():
    def prog(L, log):
        class WS(L.Function):
            @staticmethod
            def forward(ctx, k, a, t):
                return t * 2

            @staticmethod
            def backward(ctx, g):
                return None, L.ones(7), L.ones(5)  # a needs no grad: not checked

        WS.apply(3, L.ones(2), x2(L)).sum().backward()

    check(prog, phrase="invalid gradient at index 1 - got [5] but expected shape compatible "
                       "with [2]")


def test_expandable_gradient_is_summed_and_other_dtype_cast():
    def prog(L, log):
        x = x2(L)
        _returning(L, lambda L, g: (L.ones(3, 2), None)).apply(x).sum().backward()
        out = [L.val(x.grad)]
        x.grad = None
        _returning(L, lambda L, g: (L.ones(2, dtype=L.float64) * 5, None)).apply(x).sum() \
            .backward()
        out.append((L.val(x.grad), str(x.grad.dtype).split(".")[-1]))
        return out

    assert check(prog)[0] == [3.0, 3.0]


# ------------------------------------------------------------------------------------------
# 5. once_differentiable
# ------------------------------------------------------------------------------------------
def _cube_once(L: Any) -> Any:
    class OD(L.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        @L.once_differentiable
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 3 * t * t * g

    return OD


def test_once_differentiable_create_graph_then_differentiate_again():
    def prog(L, log):
        x = x2(L)
        (g,) = L.grad((_cube_once(L).apply(x) ** 2).sum(), x, create_graph=True)
        log.append((L.val(g), g.requires_grad, len(g.grad_fn.next_functions)))
        g.sum().backward()

    check(prog, phrase="trying to differentiate twice a function that was marked with "
                       "@once_differentiable")


def test_once_differentiable_create_graph_with_a_seed_without_history():
    def prog(L, log):
        x = x2(L)
        (g,) = L.grad(_cube_once(L).apply(x).sum(), x, create_graph=True)
        return L.val(g), g.requires_grad, g.grad_fn

    assert check(prog)[0] == [3.0, 12.0]


def test_once_differentiable_backward_create_graph_accumulates():
    def prog(L, log):
        x = x2(L)
        (_cube_once(L).apply(x) ** 2).sum().backward(create_graph=True)
        log.append((L.val(x.grad), x.grad.requires_grad))
        x.grad.sum().backward()

    check(prog, phrase="trying to differentiate twice")


# ------------------------------------------------------------------------------------------
# 6. tensors passed by keyword
# ------------------------------------------------------------------------------------------
def _kw(L: Any) -> Any:
    class KW(L.Function):
        @staticmethod
        def forward(ctx, t, k=1.0, w=None, v=None):
            ctx.log = (ctx.needs_input_grad, type(w).__name__ == "Tensor", k)
            return t * w * v

        @staticmethod
        def backward(ctx, g):
            return 2 * g, None, 3 * g, 4 * g

    return KW


def test_keyword_tensors_are_inputs_in_parameter_order():
    def prog(L, log):
        x, w, v = x2(L), x2(L), x2(L)
        r = _kw(L).apply(x, 2.0, v=v, w=w)
        log.append(r.grad_fn.log)
        log.append(L.nexts(r))
        r.sum().backward()
        return L.val(x.grad), L.val(w.grad), L.val(v.grad)

    assert check(prog) == ([2.0, 2.0], [3.0, 3.0], [4.0, 4.0])


@pytest.mark.parametrize("call,phrase", [
    (lambda F, x: F.apply(x, nope=x), "forward() got an unexpected keyword argument 'nope'"),
    (lambda F, x: F.apply(x, 1.0, k=x), "forward() got multiple values for argument 'k'"),
    (lambda F, x: F.apply(x, w=x), "forward() missing required argument: 'k' (position 1)"),
    (lambda F, x: F.apply(x, ctx=x), "unexpected keyword argument 'ctx'"),
])
def test_keyword_binding_errors(call, phrase):
    check(lambda L, log: call(_kw(L), x2(L)), phrase=phrase)


def test_keyword_only_parameter_is_refused():
    def prog(L, log):
        class KWO(L.Function):
            @staticmethod
            def forward(ctx, t, *, w):
                return t * w

            @staticmethod
            def backward(ctx, g):
                return g, g

        KWO.apply(x2(L), w=x2(L))

    check(prog, phrase="forward() got an unexpected keyword argument 'w'")


# ------------------------------------------------------------------------------------------
# 7. the same tensor returned twice
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fresh", "input", "dirty"])
def test_same_tensor_returned_twice(kind):
    def prog(L, log):
        class Same(L.Function):
            @staticmethod
            def forward(ctx, t):
                if kind == "fresh":
                    u = t * 2
                    return u, u
                if kind == "dirty":
                    t.mul_(2)
                    ctx.mark_dirty(t)
                return t, t

            @staticmethod
            def backward(ctx, g1, g2):
                log.append((L.val(g1), L.val(g2)))
                return g1 + 10 * g2

        x = x2(L)
        c = x.clone()
        a, b = Same.apply(c)
        out = (a is b, a is c, a.output_nr, b.output_nr, c._version)
        (a.sum() + 2 * b.sum()).backward()
        return out, L.val(x.grad)

    check(prog)


# ------------------------------------------------------------------------------------------
# 8. surface: setup_context, non-tensor outputs, saved tensors, vjp, names
# ------------------------------------------------------------------------------------------
def test_setup_context_style():
    def prog(L, log):
        class Mul(L.Function):
            @staticmethod
            def forward(t, w, k=3.0):
                return t * w * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                log.append((len(inputs), inputs[2], ctx.needs_input_grad, L.val(output)))
                ctx.k = inputs[2]
                ctx.save_for_backward(inputs[0], inputs[1])

            @staticmethod
            def backward(ctx, g):
                t, w = ctx.saved_tensors
                return g * w * ctx.k, g * t * ctx.k, None

        x, w = x2(L), L.tensor([3.0, 4.0], requires_grad=True)
        Mul.apply(x, w).sum().backward()
        Mul.apply(x, w=w, k=1.0).sum().backward()
        with L.no_grad():
            r = Mul.apply(x, w)
        return L.val(x.grad), L.val(w.grad), L.fname(Mul.apply(x, w).grad_fn), r.requires_grad

    check(prog)


def test_setup_context_with_a_ctx_forward_is_a_binding_error():
    def prog(L, log):
        class Both(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return 2 * g

        Both.apply(x2(L))

    check(prog, phrase="missing a required argument: 't'")


def test_non_tensor_outputs_pass_through_and_get_none():
    def prog(L, log):
        class NT(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2, 3, None, (t * 3,)

            @staticmethod
            def backward(ctx, *g):
                log.append([L.val(x) if hasattr(x, "shape") else x for x in g])
                return 2 * g[0]

        x = x2(L)
        out = NT.apply(x)
        res = ([type(o).__name__ for o in out], out[1], out[3][0].requires_grad)
        out[0].sum().backward()

        class Three(L.Function):
            @staticmethod
            def forward(ctx, t):
                return 3

            @staticmethod
            def backward(ctx, g):
                return None

        class NoneFirst(L.Function):
            @staticmethod
            def forward(ctx, t):
                return None, t * 2

            @staticmethod
            def backward(ctx, g0, g1):
                log.append((g0, L.val(g1)))
                return 2 * g1

        o = NoneFirst.apply(x)
        o[1].sum().backward()
        return res, Three.apply(x), o[0], o[1].output_nr, L.val(x.grad)

    check(prog)


def test_mark_non_differentiable_and_needs_input_grad():
    def prog(L, log):
        class NI(L.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                log.append(ctx.needs_input_grad)
                out = a * b * k
                idx = out * 0
                ctx.mark_non_differentiable(idx)
                return out, idx

            @staticmethod
            def backward(ctx, g, gi):
                return g, None, None

        x = x2(L)
        out, idx = NI.apply(x, L.ones(2), 3)
        with L.no_grad():
            NI.apply(x, L.ones(2), 3)
        return (out.requires_grad, idx.requires_grad, idx.grad_fn, idx.is_leaf,
                L.nexts(out), L.nexts(NI.apply(3.0, x, L.ones(2))[0]))

    check(prog)


def test_mark_non_differentiable_non_tensor_is_refused():
    def prog(L, log):
        class M(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.mark_non_differentiable(3)
                return t * 2

            @staticmethod
            def backward(ctx, g):
                return g

        with L.no_grad():
            M.apply(x2(L))

    check(prog, phrase="mark_non_differentiable only accepts variable arguments, but got")


def test_save_for_backward_non_tensor():
    def prog(L, log):
        class S(L.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t, 3)
                log.append(ctx.saved_tensors)  # nothing taken yet inside forward
                return t * 2

            @staticmethod
            def backward(ctx, g):
                return 2 * g

        with L.no_grad():
            S.apply(x2(L))  # not recording: not checked
        S.apply(x2(L))

    check(prog, phrase="save_for_backward can only save variables, but argument 1 is of "
                       "type int")


def _sq(L: Any, clear: bool = False) -> Any:
    class Sq(L.Function):
        clear_saved_tensors_on_access = clear

        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    return Sq


def test_saved_tensors_after_release():
    def prog(L, log):
        x = x2(L)
        y = _sq(L).apply(x)
        log.append(y.grad_fn.saved_tensors[0] is x)
        y.sum().backward()
        log.append(L.val(x.grad))
        log.append(y.grad_fn.saved_tensors)

    check(prog, phrase="Trying to backward through the graph a second time")


def test_clear_saved_tensors_on_access():
    def prog(L, log):
        x = x2(L)
        y = _sq(L, clear=True).apply(x)
        y.sum().backward(retain_graph=True)
        log.append(L.val(x.grad))
        y.sum().backward()

    check(prog, phrase="saved_tensors can only be accessed once when "
                       "clear_saved_tensors_on_access=True")


def test_saved_output_round_trips():
    def prog(L, log):
        class Exp(L.Function):
            @staticmethod
            def forward(ctx, t):
                out = t.exp()
                ctx.save_for_backward(out)
                return out

            @staticmethod
            def backward(ctx, g):
                (out,) = ctx.saved_tensors
                return g * out

        x = x2(L)
        y = Exp.apply(x)
        same = y.grad_fn.saved_tensors[0] is y
        (g,) = L.grad(y.sum(), x, create_graph=True)
        (gg,) = L.grad(g.sum(), x)
        return L.val(g), L.val(gg), same

    check(prog)


def test_vjp_alias_and_missing_backward():
    def prog(L, log):
        class V(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def vjp(ctx, g):
                return 5 * g

        x = x2(L)
        V.apply(x).sum().backward()
        return L.val(x.grad), L.Function.vjp is L.Function.backward

    check(prog)

    def both(L, log):
        class VB(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def vjp(ctx, g):
                return 2 * g

            @staticmethod
            def backward(ctx, g):
                return 2 * g

        VB.apply(x2(L)).sum().backward()

    check(both, phrase="Implementing both 'backward' and 'vjp' for a custom Function is not "
                       "allowed")

    def none(L, log):
        class NoB(L.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

        NoB.apply(x2(L)).sum().backward()

    check(none, phrase="You must implement either the backward or vjp method")


def test_missing_forward():
    def prog(L, log):
        class NoF(L.Function):
            pass

        NoF.apply(x2(L))

    check(prog, phrase="You must implement the forward function for custom autograd.Function")


def test_node_name_and_next_functions():
    def prog(L, log):
        x = x2(L)
        y = _sq(L).apply(x * 1)
        return L.fname(y.grad_fn), L.nexts(y), y.grad_fn.needs_input_grad

    assert check(prog)[0] == "SqBackward"
