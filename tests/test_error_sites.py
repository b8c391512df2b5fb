"""Autograd errors that say where (issue 7): each error is provoked here, and the message must
keep PyTorch's text and name this file's own lines."""
import gc
import sys
import weakref

import pytest

import ndgrad
from ndgrad.autograd import graph


def _line():
    """The caller's current line (use as `L = _line(); <statement>` on one line)."""
    return sys._getframe(1).f_lineno


def _at(line):
    return f'File "{__file__}", line {line}'


def _torch_message(program, fallback):
    """PyTorch's message for `program` (the oracle), or `fallback` when torch is not installed."""
    try:
        import torch
    except ImportError:
        return fallback
    with pytest.raises(RuntimeError) as info:
        program(torch)
    return str(info.value)


# ---------------------------------------------------------------- in-place (version counter)

def _inplace_program(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def test_inplace_error_names_the_saving_op_its_line_and_the_modifying_line():
    x = ndgrad.ones(3, requires_grad=True)
    L1 = _line(); y = x.exp()  # noqa: E702
    L2 = _line(); y.add_(1)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    first = msg.splitlines()[0]
    assert first.startswith("one of the variables needed for gradient computation has been "
                            "modified by an inplace operation")
    assert "ExpBackward0" in msg
    assert _at(L1) in msg and _at(L2) in msg
    assert msg.index(_at(L1)) < msg.index(_at(L2))


def test_inplace_error_first_line_is_pytorchs():
    pytest.importorskip("torch")
    expected = _torch_message(_inplace_program, None)
    with pytest.raises(RuntimeError) as info:
        _inplace_program(ndgrad)
    assert str(info.value).splitlines()[0] == expected


def test_inplace_error_names_the_first_bump_after_saving():
    x = ndgrad.ones(3, requires_grad=True)
    y = x * 1
    z = y * y                               # saves y at version 0
    L1 = _line(); y.mul_(2)  # noqa: E702
    L2 = _line(); y.add_(1)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    msg = str(info.value)
    assert "is at version 2; expected version 0" in msg
    assert _at(L1) in msg and _at(L2) not in msg


def test_inplace_through_a_view_names_the_view_line():
    x = ndgrad.ones(4, requires_grad=True)
    y = x * 1
    L1 = _line(); z = y.sin()  # noqa: E702
    L2 = _line(); y[1:3].mul_(0)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    msg = str(info.value)
    assert "modified by an inplace operation" in msg
    assert _at(L1) in msg and _at(L2) in msg


# ---------------------------------------------------------------- second backward

def _twice_program(lib):
    x = lib.ones(3, requires_grad=True)
    z = x.exp().sum()
    z.backward()
    z.backward()


def test_second_backward_names_the_freeing_backward_and_the_node():
    expected = _torch_message(_twice_program, graph.ERR_BACKWARD_TWICE)
    x = ndgrad.ones(3, requires_grad=True)
    L1 = _line(); z = x.exp().sum()  # noqa: E702
    L2 = _line(); z.backward()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        z.backward()
    msg = str(info.value)
    assert msg.splitlines()[0] == expected
    assert "ExpBackward0" in msg
    assert _at(L1) in msg and _at(L2) in msg


def test_second_backward_through_a_custom_function_names_lines():
    class Square(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ndgrad.ones(3, requires_grad=True)
    L1 = _line(); z = Square.apply(x).sum()  # noqa: E702
    L2 = _line(); z.backward()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        z.backward()
    msg = str(info.value)
    assert msg.startswith("Trying to backward through the graph a second time")
    assert _at(L1) in msg and _at(L2) in msg


# ---------------------------------------------------------------- errors inside backward

def test_custom_function_backward_bug_is_chained_with_the_forward_line():
    class Bad(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.reshape(5, 7)  # a bug: wrong shape

    x = ndgrad.ones(2, requires_grad=True)
    L1 = _line(); y = Bad.apply(x)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "shape '[5, 7]' is invalid for input of size 2" in msg  # PyTorch's text
    assert "BadBackward" in msg and _at(L1) in msg
    assert isinstance(info.value.__cause__, RuntimeError)
    assert _at(L1) not in str(info.value.__cause__)


def test_error_in_a_formula_names_the_forward_op_and_line():
    from ndgrad.ops._registry import defop
    broken = defop("test_sites_broken", lambda xp, self: xp.negative(self),
                   self=lambda grad: grad.reshape(5, 7))
    x = ndgrad.ones(2, requires_grad=True)
    L1 = _line(); y = broken(x)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "TestSitesBrokenBackward0" in msg and _at(L1) in msg
    assert info.value.__cause__ is not None


def test_non_runtime_errors_keep_their_type():
    class Oops(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x + 0

        @staticmethod
        def backward(ctx, g):
            raise ValueError("custom failure")

    x = ndgrad.ones(2, requires_grad=True)
    L1 = _line(); y = Oops.apply(x)  # noqa: E702
    with pytest.raises(ValueError, match="custom failure") as info:
        y.sum().backward()
    assert _at(L1) in str(info.value)


# ---------------------------------------------------------------- the sites themselves

def test_site_through_a_module_call_is_the_callers_line():
    nn = pytest.importorskip("ndgrad.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("nn.Linear not available")
    lin = nn.Linear(2, 2)
    L1 = _line(); y = lin(ndgrad.ones(1, 2))  # noqa: E702
    assert graph.format_site(y.grad_fn._site).startswith(_at(L1))


@pytest.mark.parametrize("make", [
    lambda x: ndgrad.tanh(x).sum(),                    # recorder path (a simple op's node)
    lambda x: ((ndgrad.ones(2, 3, dtype=x.dtype) @ x.unsqueeze(1)) ** 2).sum(),  # mm's formula through _record
    lambda x: ndgrad.cumsum(x * x, 0).sum(),           # a formula of several ops
])
def test_nodes_recorded_by_a_create_graph_backward_name_the_grad_call(make):
    x = ndgrad.tensor([0.3, -0.2, 0.5], dtype=ndgrad.float64, requires_grad=True)
    y = make(x)
    L1 = _line(); g, = ndgrad.autograd.grad(y, x, create_graph=True)  # noqa: E702
    seen, stack = set(), [g.grad_fn]
    while stack:  # every node the backward recorded (not the forward's own nodes)
        n = stack.pop()
        if n is None or n in seen or n.__class__.__name__ == "AccumulateGrad":
            continue
        seen.add(n)
        stack.extend(c for c, _ in n.next_functions)
    made = [n for n in seen if graph.format_site(n._site).startswith(_at(L1))]
    assert made, [graph.format_site(n._site) for n in seen]
    assert all(graph.format_site(n._site).startswith(f'File "{__file__}"') for n in seen)


def test_ops_of_a_custom_backward_name_the_backward_line():
    class Cube(ndgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            # (normalize records its ops several ndgrad frames below this line)
            return grad * 3 * ndgrad.nn.functional.normalize(x, dim=0)  # (LINE_CUBE)

    x = ndgrad.tensor([0.3, 0.2], dtype=ndgrad.float64, requires_grad=True)
    y = Cube.apply(x)
    g, = ndgrad.autograd.grad(y.sum(), x, create_graph=True)
    line = next(i for i, t in enumerate(open(__file__), 1) if "(LINE_CUBE)" in t and "return" in t)
    seen, stack = set(), [g.grad_fn]
    while stack:  # the nodes the custom backward recorded
        n = stack.pop()
        if n is None or n in seen or n is y.grad_fn or n.__class__.__name__ == "AccumulateGrad":
            continue
        seen.add(n)
        stack.extend(c for c, _ in n.next_functions)
    assert len(seen) > 3
    assert all(graph.format_site(n._site).startswith(_at(line)) for n in seen), \
        [graph.format_site(n._site) for n in seen]


def test_ops_of_a_hook_in_a_create_graph_backward_name_the_hook_line():
    x = ndgrad.tensor([0.3, 0.2], dtype=ndgrad.float64, requires_grad=True)
    y = x * x
    y.register_hook(lambda g: ndgrad.nn.functional.normalize(g, dim=0))  # (LINE_HOOK)
    g, = ndgrad.autograd.grad(ndgrad.tanh(y).sum(), x, create_graph=True)
    line = next(i for i, t in enumerate(open(__file__), 1) if "(LINE_HOOK)" in t and "lambda" in t)
    sites = []
    seen, stack = set(), [g.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        sites.append(graph.format_site(n._site))
        stack.extend(c for c, _ in n.next_functions)
    assert sum(s.startswith(_at(line)) for s in sites) > 3, sites


def test_sites_keep_no_frame_alive():
    class Big:
        pass

    def build():
        big = Big()
        x = ndgrad.ones(2, requires_grad=True)
        return x.exp(), weakref.ref(big)

    y, ref = build()
    gc.collect()
    assert ref() is None
    assert graph.format_site(y.grad_fn._site).startswith(f'File "{__file__}"')


def test_sites_can_be_switched_off():
    ndgrad.autograd.set_error_sites(False)
    try:
        x = ndgrad.ones(3, requires_grad=True)
        y = x.exp()
        assert y.grad_fn._site is None
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        msg = str(info.value)
        assert msg.startswith("one of the variables needed for gradient computation")
        assert "unknown location" in msg
    finally:
        ndgrad.autograd.set_error_sites(True)


# ---------------------------------------------------------------- updates outside autograd
# Optimizers, nn.init, batch norm's running statistics and clip_grad change arrays in place
# without an op; they still bump the version through Tensor._bump_version, so the error names the
# user's line that called step() / the initialiser / the module.

def _modified_at(msg):
    """The site the message gives for the in-place modification."""
    return msg.split("modified by an in-place operation at ", 1)[1]


def _backward_fails_at(y):
    """y.backward() must fail on a modified saved tensor: the site given for the modification."""
    with pytest.raises(RuntimeError) as info:
        y.backward()
    return _modified_at(str(info.value))


def _graph_saving_a_grad():
    """A leaf with a .grad, and a graph that saved that .grad (for another leaf's gradient)."""
    w = ndgrad.ones(3, requires_grad=True)
    (w * w).sum().backward()
    v = ndgrad.ones(3, requires_grad=True)
    return w, (v * w.grad).sum()


def _step_program(lib):
    w = lib.ones(3, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    opt.step()
    y.backward()


def test_optimizer_step_error_first_line_is_pytorchs():
    pytest.importorskip("torch")
    expected = _torch_message(_step_program, None)
    with pytest.raises(RuntimeError) as info:
        _step_program(ndgrad)
    assert str(info.value).splitlines()[0] == expected


@pytest.mark.parametrize("make", [
    lambda ps: ndgrad.optim.SGD(ps, lr=0.1),
    lambda ps: ndgrad.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: ndgrad.optim.Adam(ps),
    lambda ps: ndgrad.optim.AdamW(ps, amsgrad=True),
    lambda ps: ndgrad.optim.RMSprop(ps, momentum=0.5, centered=True),
    lambda ps: ndgrad.optim.Adagrad(ps),
    lambda ps: ndgrad.optim.Adadelta(ps),
], ids=["sgd", "sgd-momentum", "adam", "adamw-amsgrad", "rmsprop", "adagrad", "adadelta"])
def test_optimizer_step_names_the_step_line(make):
    w = ndgrad.ones(3, requires_grad=True)
    opt = make([w])
    L1 = _line(); y = (w * w).sum()  # noqa: E702
    y.backward(retain_graph=True)
    L2 = _line(); opt.step()  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.backward()
    msg = str(info.value)
    assert "is at version 1; expected version 0" in msg
    assert "MulBackward0" in msg and _at(L1) + "," in msg
    assert _modified_at(msg).startswith(_at(L2) + ",")


def test_lbfgs_step_names_the_step_line():
    w = ndgrad.ones(3, requires_grad=True)
    opt = ndgrad.optim.LBFGS([w], max_iter=2)
    y = (w * w).sum()
    y.backward(retain_graph=True)

    def closure():
        opt.zero_grad()
        loss = ((w - 2) ** 2).sum()
        loss.backward()
        return loss

    L1 = _line(); opt.step(closure)  # noqa: E702
    assert _backward_fails_at(y).startswith(_at(L1) + ",")


def test_zero_grad_in_place_names_its_line():
    w, y = _graph_saving_a_grad()
    L1 = _line(); ndgrad.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)  # noqa: E702
    assert _backward_fails_at(y).startswith(_at(L1) + ",")


def test_clip_grad_value_names_its_line():
    w, y = _graph_saving_a_grad()
    L1 = _line(); ndgrad.nn.utils.clip_grad_value_([w], 0.5)  # noqa: E702
    assert _backward_fails_at(y).startswith(_at(L1) + ",")


@pytest.mark.parametrize("init", [
    lambda t: ndgrad.nn.init.normal_(t),
    lambda t: ndgrad.nn.init.zeros_(t),
    lambda t: ndgrad.nn.init.xavier_uniform_(t),
    lambda t: ndgrad.nn.init.kaiming_normal_(t),
    lambda t: ndgrad.nn.init.orthogonal_(t),
], ids=["normal_", "zeros_", "xavier_uniform_", "kaiming_normal_", "orthogonal_"])
def test_nn_init_names_the_callers_line(init):
    w = ndgrad.ones(3, 4, requires_grad=True)
    y = (w * w).sum()
    init(w)  # the site is the first frame outside ndgrad: the lambda's line above
    site = _backward_fails_at(y)
    assert site.startswith(f'File "{__file__}", line ') and "<lambda>" in site.splitlines()[0]


def test_nn_init_normal_names_its_line():
    w = ndgrad.ones(3, 4, requires_grad=True)
    y = (w * w).sum()
    L1 = _line(); ndgrad.nn.init.normal_(w)  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.backward()
    msg = str(info.value)
    assert "is at version 1; expected version 0" in msg
    assert _modified_at(msg).startswith(_at(L1) + ",")


def test_batch_norm_running_stats_name_the_module_call():
    bn = ndgrad.nn.BatchNorm1d(3)
    x = ndgrad.randn(4, 3, requires_grad=True)
    y = (bn.running_mean * x).sum()
    L1 = _line(); bn(x)  # noqa: E702
    assert _backward_fails_at(y).startswith(_at(L1) + ",")


def test_transpose_in_place_names_its_line():
    x = ndgrad.ones(2, 3, requires_grad=True) * 1
    z = (x * x).sum()
    L1 = _line(); x.t_()  # noqa: E702
    assert _backward_fails_at(z).startswith(_at(L1) + ",")


@pytest.mark.parametrize("call", ["backward", "grad_inputs"])
def test_grad_accumulation_bump_names_the_backward_call(call):
    """The engine's in-place accumulation into .grad is remembered at the backward() line that
    ran it (the engine passes that site on; no stack walk per leaf)."""
    x = ndgrad.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    w = ndgrad.ones(3, requires_grad=True)
    y = (w * x.grad).sum()  # saves x.grad
    if call == "backward":
        L = _line(); (x * 3).sum().backward()  # noqa: E702
    else:
        L = _line(); (x * 3).sum().backward(inputs=[x])  # noqa: E702
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert f"modified by an in-place operation at {_at(L)}" in str(info.value)


def test_site_through_a_wrapped_tensor_method_is_the_callers_line():
    # (Tensor methods whose argument errors count positions without self are generated
    # wrappers: their frame is ndgrad's, not the user's)
    a = ndgrad.ones(2, 2, requires_grad=True)
    L1 = _line(); y = a.mm(a)  # noqa: E702
    L2 = _line(); z = a.unsqueeze(0)  # noqa: E702
    assert graph.format_site(y.grad_fn._site).startswith(_at(L1))
    assert graph.format_site(z.grad_fn._site).startswith(_at(L2))
