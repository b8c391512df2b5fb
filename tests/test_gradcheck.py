"""gradcheck / gradgradcheck: they pass correct gradients and catch wrong ones, with a report
naming the first mismatching Jacobian entry."""
import warnings

import numpy as np
import pytest

import ndgrad
from ndgrad.autograd import gradcheck, gradgradcheck, GradcheckError, Function


def _x(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ndgrad.tensor(rng.uniform(0.5, 1.5, size=shape)).requires_grad_()


class WrongCube(Function):
    """x^3 with a deliberately wrong backward: 2 x^2 instead of 3 x^2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x ** 2


class RightCube(WrongCube):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class WrongSecond(Function):
    """sin-like: forward x^3, backward right in value but built from ops whose own derivative
    is wrong (first derivative fine, second wrong)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * WrongSquare3.apply(x)


class WrongSquare3(Function):
    """3 x^2 with backward 5 x (should be 6 x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 3 * x ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 5 * x


class Unscaled(Function):
    """Ignores grad_output (returns the gradient for grad_output = 1)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return ndgrad.ones_like(g) * 2


class Noisy(Function):
    """Correct on average, but backward adds tiny noise: not reentrant."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * (2 + ndgrad.tensor(np.random.default_rng().normal(0, 1e-9, g.shape)))


def test_passes_correct_gradients():
    x, y = _x(3), _x(2, 3, seed=1)
    assert gradcheck(lambda a, b: (ndgrad.tanh(a) * b).sum(0), (x, y))
    assert gradcheck(RightCube.apply, (x,))
    assert gradcheck(RightCube.apply, (x,), fast_mode=True)
    assert gradgradcheck(lambda a, b: ndgrad.exp(a) * b, (x, _x(3, seed=2)))
    assert gradcheck(ndgrad.exp, x, check_forward_ad=True)
    assert gradgradcheck(ndgrad.tanh, (x,), check_fwd_over_rev=True)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_catches_wrong_backward(fast_mode):
    x = _x(3)
    with pytest.raises(GradcheckError) as e:
        gradcheck(WrongCube.apply, (x,), fast_mode=fast_mode)
    msg = str(e.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "analytical:" in msg
    # the first wrong entry is d out[0] / d in[0]: numerically 3 x0^2, analytically 2 x0^2
    x0 = x.detach().numpy()[0]
    assert "d(output 0)[0] / d(input 0)[0]" in msg
    assert f"analytical {float(2 * x0 ** 2)!r}" in msg
    assert not gradcheck(WrongCube.apply, (x,), raise_exception=False, fast_mode=fast_mode)


def test_report_names_the_input_and_output():
    x, y = _x(2), _x(2, seed=1)
    with pytest.raises(GradcheckError, match="output 1 with respect to input 1"):
        gradcheck(lambda a, b: (a * 2, WrongCube.apply(b)), (x, y))


def test_catches_wrong_second_derivative():
    x = _x(3)
    assert gradcheck(WrongSecond.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(WrongSecond.apply, (x,))


def test_backward_not_multiplied_by_grad_output():
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(lambda a: Unscaled.apply(a).sum(), (_x(3),))


def test_nondeterministic_backward():
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Noisy.apply, (_x(3),), atol=1e-4)
    assert gradcheck(Noisy.apply, (_x(3),), atol=1e-4, nondet_tol=1e-6)


def test_forward_ad_check_catches_wrong_jvp_rule(monkeypatch):
    from ndgrad.autograd import forward_ad
    x = _x(3)
    assert gradcheck(ndgrad.tanh, (x,), check_forward_ad=True, check_backward_ad=False)
    monkeypatch.setitem(forward_ad._RULES, "tanh", {"self": lambda tangent: tangent * 2})
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch"):
        gradcheck(ndgrad.tanh, (x,), check_forward_ad=True, check_backward_ad=False)


def test_argument_errors_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ndgrad, torch):
        with pytest.raises(ValueError) as e:
            lib.autograd.gradcheck(lib.exp, (lib.ones(2, dtype=lib.float64),))
        if lib is ndgrad:
            ours = str(e.value)
    assert ours == str(e.value)
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(ndgrad.exp, (ndgrad.ones(2, requires_grad=True),), atol=1e-2, rtol=1e-2,
                  eps=1e-3)


def test_module_path_like_torch():
    from ndgrad.autograd.gradcheck import gradcheck as gc, GradcheckError as GE
    assert gc is gradcheck and GE is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    import inspect
    params = inspect.signature(gradcheck).parameters
    for name in ("eps", "atol", "rtol", "raise_exception", "nondet_tol", "check_undefined_grad",
                 "check_grad_dtypes", "check_batched_grad", "check_forward_ad",
                 "check_backward_ad", "fast_mode", "masked"):
        assert name in params


def test_fast_mode_on_larger_input():
    x = _x(40, 30)
    w = _x(30, 5, seed=3)
    assert gradcheck(lambda a, b: ndgrad.tanh(a @ b), (x, w), fast_mode=True)
