"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp of a function of tensors.

Signatures, options, output structure and strict-mode errors follow PyTorch's
torch/autograd/functional.py (BSD). The reverse-mode transforms call `autograd.grad`; `jvp` and
`hvp` use the double-backward trick as PyTorch does, and `jacobian(strategy="forward-mode")`
uses forward-mode AD (autograd/forward_ad.py), one tangent per input element.

    >>> import ndgrad as torch
    >>> from ndgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""
from .. import _creation
from .._tensor import Tensor
from . import grad_mode, forward_ad as fwAD

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name=None, fn_name=None):
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the {where} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got "
                               f"{el_v.size()}.")


_REQ_MSG = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_REQ_MSG[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_FILL_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This "
                   "is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it prevents "
                         "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MSG[stage].format(i=i))
            g = _creation.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input "
                               f"{i}. This is not allowed in strict mode when create_graph=True.")
        res += (g,)
    return res


def _stack(tensors):
    """torch.stack(tensors, 0)."""
    from ..ops import stack
    return stack(list(tensors), 0)


# Forward-mode Jacobians (here and in ndgrad.func.jacfwd) are built one column at a time: one
# forward pass per input element, with that element's one-hot basis vector as the tangent.

def _basis_duals(inputs, j, e):
    """`inputs` as dual tensors (in the current dual level) whose tangents are all zero but a 1
    at flat element `e` of input `j`."""
    duals = []
    for k, x in enumerate(inputs):
        t = _creation.zeros(tuple(x.shape), dtype=x.dtype)
        if k == j:
            t._data.reshape(-1)[e] = 1
        duals.append(fwAD.make_dual(x, t))
    return duals


def _collect_tangents(outs, columns):
    """Append the tangent of each of `outs` (zeros where it has none) to its list in `columns`
    (started on the first call); return the primals of `outs`."""
    unpacked = [fwAD.unpack_dual(o) for o in outs]
    if not columns:
        columns.extend([] for _ in outs)
    for column, u in zip(columns, unpacked):
        column.append(u.tangent if u.tangent is not None else _creation.zeros_like(u.primal))
    return [u.primal for u in unpacked]


def _jacobians_from_columns(columns, out, inputs):
    """d out / d inputs[k] for each k, shaped out.shape + inputs[k].shape, from `columns`: the
    tangents of `out` for the basis vectors of every element of every input, in order."""
    jacs, start = [], 0
    for inp in inputs:
        n = inp.nelement()
        shape = tuple(out.shape) + tuple(inp.shape)
        if n == 0:
            jacs.append(_creation.zeros(shape, dtype=out.dtype))
            continue
        st = _stack(columns[start:start + n])  # (n, *out.shape)
        start += n
        jacs.append(st.permute(tuple(range(1, st.dim())) + (0,)).reshape(shape))
    return jacs


def _setup(inputs, v, create_graph, fn_name):
    """The shared preamble of jvp / vhp / hvp (under enable_grad)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return is_inputs_tuple, inputs, v


def _call(func, inputs, fn_name, strict):
    """(is_outputs_tuple, outputs) of func(*inputs), checked for strict mode."""
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _last_grad(outputs, inputs, v, refs, create_graph, strict, stage):
    """The final grad call of vjp / jvp / vhp / hvp, with grad mode on only for create_graph;
    missing gradients become zeros shaped like `refs` (or an error in strict mode)."""
    with grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, refs, strict, create_graph, stage)


def _results(outputs, is_outputs_tuple, res, is_res_tuple, create_graph):
    """The (outputs, result) pair, detached unless create_graph, unpacked like the arguments."""
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_res_tuple))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of `func` at `inputs`."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    res = _last_grad(outputs, inputs, v, inputs, create_graph, strict, "back")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, v = _setup(inputs, v, create_graph, "jvp")
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        grad_outputs = tuple(_creation.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    res = _last_grad(grad_inputs, grad_outputs, v, outputs, create_graph, strict, "back_trick")
    return _results(outputs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
            'not supported together (yet). Please either set `strict=False` or '
            '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`.")
    columns = []  # columns[i]: d out_i for the basis vector of each input element, in order
    outputs = is_outputs_tuple = None
    for j, inp in enumerate(inputs):
        for e in range(inp.nelement()):
            with fwAD.dual_level():
                is_outputs_tuple, outs = _as_tuple_outputs(func(*_basis_duals(inputs, j, e)))
                primals = _collect_tangents(outs, columns)
            if outputs is None:
                outputs = primals
    jac = [[j.detach() for j in _jacobians_from_columns(columns[i], out, inputs)]
           for i, out in enumerate(outputs)]
    # lists, not tuples, exactly as PyTorch's forward-mode jacobian returns them
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _as_tuple_outputs(out):
    is_tuple = isinstance(out, tuple)
    return is_tuple, (out if is_tuple else (out,))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: J[i][j] has shape outputs[i].shape + inputs[j].shape.

    `vectorize` is accepted; the rows (reverse mode) or columns (forward mode) are computed one
    at a time either way."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (jac_ik, vj_k, inp_k) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_k is not None:
                        if strict and create_graph and not vj_k.requires_grad:
                            raise RuntimeError(
                                f"The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                f"create_graph=True.")
                        jac_ik.append(vj_k)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode.")
                        jac_ik.append(_creation.zeros_like(inp_k))
            jac += (tuple(
                _stack(jac_ik).reshape(tuple(out.shape) + tuple(inputs[k].shape)) if jac_ik else
                _creation.zeros(tuple(out.shape) + tuple(inputs[k].shape), dtype=inputs[k].dtype)
                for k, jac_ik in enumerate(jac_i)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function `func` at `inputs` (H[i][j] for tuple inputs)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def _scalar_gradient(func, inputs, v, create_graph, strict, fn_name):
    """The shared start of vhp / hvp (under enable_grad): the scalar output of func and its
    gradient, kept differentiable."""
    is_inputs_tuple, inputs, v = _setup(inputs, v, create_graph, fn_name)
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    _scalar_output(outputs, is_outputs_tuple, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_gradient(
            func, inputs, v, create_graph, strict, "vhp")
    res = _last_grad(jac, inputs, v, inputs, create_graph, strict, "double_back")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by the double-backward trick."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_creation.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    res = _last_grad(double_back, grad_jac, v, inputs, create_graph, strict, "double_back_trick")
    return _results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)
