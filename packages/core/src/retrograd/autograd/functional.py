"""Higher-order autograd helpers, as ``torch.autograd.functional``: ``vjp``, ``jvp``,
``jacobian``, ``hessian``, ``hvp``, ``vhp``.

Same signatures, return structures and errors as PyTorch: a result is a tuple where the
corresponding argument (``inputs``, or the function's outputs) was a tuple, and a single tensor
where it was a single tensor; ``jacobian`` of several outputs and inputs is a tuple (outputs) of
tuples (inputs). Forward-mode products (``jvp``, ``hvp``) use the double-backward trick, as
PyTorch's do. ``jacobian``/``hessian`` compute row by row (``vectorize=False``): retrograd has
no vmap, so ``vectorize=True`` raises ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

_Fn = Callable[..., Any]


def _as_tuple_nocheck(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(el)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the given {arg_name} has type {type(el)}."
            )
    return is_inp_tuple, inp


def _tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool,
                     need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate with respect to: with ``create_graph`` an input that
    requires grad is aliased (so the result stays connected to it), otherwise detached."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    if isinstance(inputs[0], Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prepend}v has invalid size: should be {el_other.shape} but got "
                f"{el_v.shape}."
            )


def _check_requires_grad(inputs: Any, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(
                    f"The hessian of the user-provided function with respect to input {i} is "
                    "independent of the input. This is not allowed in strict mode. You should "
                    "ensure that your function is thrice differentiable and that the hessian "
                    "depends on the inputs."
                )
            if input_type == "jacobian":
                raise RuntimeError(
                    "While computing the hessian, found that the jacobian of the user-provided "
                    f"function with respect to input {i} is independent of the input. This is "
                    "not allowed in strict mode. You should ensure that your function is twice "
                    "differentiable and that the jacobian depends on the inputs (this would be "
                    "violated by a linear function for example)."
                )
            if input_type == "grad_inputs":
                raise RuntimeError(
                    f"The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."
                )
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."
            )


def _autograd_grad(outputs: tuple[Any, ...], inputs: tuple[Tensor, ...],
                   grad_outputs: tuple[Any, ...] | None = None, create_graph: bool = False,
                   retain_graph: bool | None = None) -> tuple[Any, ...]:
    """``grad`` over the outputs that require grad (None for every input when none does)."""
    from .api import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs = []
    new_grad_outputs = []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    seeds = None if all(g is None for g in new_grad_outputs) else new_grad_outputs
    return grad(new_outputs, inputs, seeds, allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph)


def _fill_in_zeros(grads: tuple[Any, ...], refs: tuple[Tensor, ...], strict: bool,
                   create_graph: bool, stage: str) -> tuple[Tensor, ...]:
    from ..ops.creation import zeros_like

    res: list[Tensor] = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(
                        "The output of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode."
                    )
                if stage == "back_trick":
                    raise RuntimeError(
                        f"The gradient with respect to the input is independent of entry {i} "
                        "in the grad_outputs when using the double backward trick to compute "
                        "forward mode gradients. This is not allowed in strict mode."
                    )
                if stage == "double_back":
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode."
                    )
                raise RuntimeError(
                    "The hessian of the user-provided function is independent of entry "
                    f"{i} in the grad_jacobian. This is not allowed in strict mode as it "
                    "prevents from using the double backward trick to replace forward mode AD."
                )
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "jacobian" if "double" not in stage else "hessian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(grads_i)
    return tuple(res)


def _prepare_v(v: Any, fn_name: str, create_graph: bool, other: tuple[Tensor, ...],
               is_other_tuple: bool) -> tuple[Tensor, ...]:
    _, vt = _as_tuple(v, "v", fn_name)
    vt = _grad_preprocess(vt, create_graph=create_graph, need_graph=False)
    _validate_v(vt, other, is_other_tuple)
    return vt


def vjp(func: _Fn, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Returns ``(func_output, vjp)``; ``vjp`` has the structure of ``inputs``. ``v`` may be
    omitted when ``func`` returns a single one-element tensor. ``strict``: raise when an
    input does not influence the outputs (instead of returning zeros for it)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            v = _prepare_v(v, "vjp", create_graph, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single "
                "Tensor with a single element."
            )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func: _Fn, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs`` (by the double-backward
    trick: the vjp is linear in its vector, so differentiating it with respect to that vector
    gives ``J v``).

    Returns ``(func_output, jvp)``; ``jvp`` has the structure of the outputs. ``v`` may be
    omitted when the input is a single one-element tensor."""
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


def jacobian(func: _Fn, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``, one vjp per output element.

    For output ``i`` of shape ``So`` and input ``j`` of shape ``Si`` the block has shape
    ``So + Si``. A single tensor when ``func`` has one input and one output; a tuple over the
    inputs (one output) or the outputs (one input); else a tuple of tuples, outputs first.
    ``strict``: raise when an output does not depend on an input. Only
    ``strategy="reverse-mode"`` with ``vectorize=False`` is supported (no vmap, no forward-mode
    AD)."""
    from ..ops.creation import zeros_like
    from ..ops.shape import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "retrograd.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "retrograd.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.'
            )
        _as_tuple(inputs, "inputs", "jacobian")
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True`, and retrograd has no vmap: use "
            '`strategy="reverse-mode"`.'
        )
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "retrograd.autograd.functional.jacobian: `strict=True` and "
                    "`vectorized=True` are not supported together. Please either set "
                    "`strict=False` or `vectorize=False`."
                )
            raise NotImplementedError(
                "retrograd.autograd.functional.jacobian: vectorize=True needs vmap, which "
                "retrograd does not have; use vectorize=False (the default)"
            )
        result: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(outputs):
            jac_i: tuple[list[Tensor], ...] = tuple([] for _ in range(len(inputs)))
            flat = out.reshape(-1)
            for j in range(out.numel()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True."
                            )
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {el_idx}. This is not allowed in strict mode."
                            )
                        jac_i_el.append(zeros_like(inp_el))
            result.append(tuple(
                _stack_rows(stack, jac_i_el, out, inputs[el_idx])
                for el_idx, jac_i_el in enumerate(jac_i)
            ))
        jac = _grad_postprocess(tuple(result), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(stack: Any, rows: list[Tensor], out: Tensor, inp: Tensor) -> Tensor:
    if not rows:  # an output with no elements
        from ..ops.creation import zeros

        return zeros(*(out.shape + inp.shape), dtype=inp.dtype, device=inp.device)
    return stack(rows, dim=0).reshape(out.shape + inp.shape)


def hessian(func: _Fn, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of the scalar function ``func`` at ``inputs``: the Jacobian of its
    gradient. For inputs ``i`` and ``j`` the block has shape ``Si + Sj``; a single tensor for
    a single input, else a tuple of tuples."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_check(outputs: tuple[Any, ...], is_outputs_tuple: bool,
                           fn_name: str) -> None:
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )


def vhp(func: _Fn, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The vector-Hessian product ``v^T H`` of the scalar function ``func`` at ``inputs``.
    Returns ``(func_output, vhp)``; ``vhp`` has the structure of ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, "vhp", create_graph, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "vhp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _scalar_function_check(outputs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def hvp(func: _Fn, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """The Hessian-vector product ``H v`` of the scalar function ``func`` at ``inputs`` (by
    the double-backward trick). Returns ``(func_output, hvp)``; ``hvp`` has the structure of
    ``inputs``."""
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, "hvp", create_graph, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].numel() != 1:
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element."
            )
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(
            outputs, "outputs of the user-provided function", "hvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        _scalar_function_check(outputs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))
