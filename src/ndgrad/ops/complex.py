# Complex numbers: conj, real/imag, angle, polar, complex, view_as_real/view_as_complex.
# See ops/_registry.py for the language.
#
# Note [Complex gradients]
# ndgrad follows PyTorch's convention ("Autograd for Complex Numbers"): the gradient of a real
# loss L with respect to z = x + iy is dL/dx + i dL/dy (the conjugate Wirtinger derivative,
# times two). For a holomorphic f with derivative f'(z), a formula `grad * f'(z)` becomes
# `grad * conj(f'(z))`; a real input whose gradient comes out complex keeps its real part
# (the engine's cast, PyTorch's handle_r_to_c). On real tensors `_cj` returns its argument
# itself, so the real formulas pay one type test and nothing else.
import builtins

from .. import _dtype as D
from .._tensor import Tensor
from ._registry import defop

__all__ = ["conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "real",
           "imag", "angle", "polar", "complex", "view_as_real", "view_as_complex"]


def _cj(x):
    """conj(x) for complex tensors and numbers; x itself otherwise (free on the real path)."""
    if isinstance(x, Tensor):
        return _conj(x) if x.dtype._category == 3 else x
    if x.__class__ is builtins.complex:
        return x.conjugate()
    return x


def _cj_raw(x):
    """_cj on arrays and numbers (the raw execution of formulas, ops/_raw.py)."""
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return x.conj() if dt.kind == "c" else x
    return x.conjugate() if x.__class__ is builtins.complex else x


_cj._raw = _cj_raw


def _is_complex(x):
    """Whether a formula's argument is complex (a Tensor, or an array in the raw execution)."""
    return x.dtype._category == 3


_is_complex._raw = lambda x: x.dtype.kind == "c"


def cast_grad(grad, dtype):
    """A gradient cast to its input's dtype; a complex gradient of a real input keeps its real
    part (Note [Complex gradients])."""
    if grad.dtype._category == 3 and dtype._category != 3:
        grad = _real(grad)
        if grad.dtype is dtype:
            return grad
    return grad.to(dtype)


def _conj_fwd(xp, self):
    return xp.conj(self)


def _conj_t(grad):
    return conj(grad)


_conj = defop("conj", _conj_fwd, self=_conj_t, jvp="linear")
_conj_physical = defop("conj_physical", _conj_fwd, self=_conj_t, jvp="linear")
_resolve = defop("resolve_conj", lambda xp, self: xp.array(self, copy=True),
                 node_name="CloneBackward0", self=lambda grad: grad, jvp="linear")


def conj(input):
    """torch.conj(input): the complex conjugate (the input itself when it is not complex). The
    result reports is_conj() True, as PyTorch's lazily conjugated view does."""
    if input.dtype._category != 3:
        return input
    r = _conj(input)
    if not is_conj(input):
        r._is_conj = True
    return r


def conj_physical(input):
    """torch.conj_physical(input): the conjugate, materialized."""
    if input.dtype._category != 3:
        return input
    return _conj_physical(input)


from ._argcheck import check_tensor as _check_tensor  # noqa: E402


def resolve_conj(input):
    """torch.resolve_conj(input): input itself unless is_conj(); then a conjugated copy."""
    _check_tensor("resolve_conj", input)
    return _resolve(input) if is_conj(input) else input


def resolve_neg(input):
    """torch.resolve_neg(input): ndgrad has no lazy negation, so the input itself."""
    _check_tensor("resolve_neg", input)
    return input


def is_conj(input):
    """torch.is_conj(input): True for the result of conj() on a complex tensor."""
    return input.__dict__.get("_is_conj", False) if hasattr(input, "__dict__") else False


def is_neg(input):
    """torch.is_neg(input): always False (no lazy negation)."""
    return False


def _real_fwd(xp, self):
    return self.real


def _imag_fwd(xp, self):
    return self.imag


_real = defop("real", _real_fwd, view=True, node_name="SelectBackward0",
              self=lambda grad: grad, jvp="linear")
_imag = defop("imag", _imag_fwd, view=True, node_name="SelectBackward0",
              self=lambda grad: grad * 1j, jvp="linear")


def real(input):
    """torch.real(input): the real part, a view (the input itself when it is real)."""
    if input.dtype._category != 3:
        return input
    return _real(input)


def imag(input):
    """torch.imag(input): the imaginary part, a view; complex tensors only."""
    if input.dtype._category != 3:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _imag(input)


def _angle_fwd(xp, self):
    if self.dtype.kind == "c":
        return xp.angle(self)
    # PyTorch: 0 for x >= 0, pi for x < 0, nan stays nan
    r = xp.where(self < 0, xp.pi, 0.0).astype(self.dtype, copy=False)
    return xp.where(xp.isnan(self), self, r)


def _angle_grad(grad, self):
    if self.dtype._category != 3:  # (zeros, as PyTorch's: also where the gradient is inf/nan)
        from .._creation import zeros_like
        return zeros_like(grad)
    from .pointwise import where, abs as _abs
    # d angle = Im(conj(z) dz) / |z|^2: the gradient is grad * i z / |z|^2 (0 at z = 0)
    a = _abs(self)
    return where(self == 0, 0.0, grad * (self * 1j) / (a * a))


angle = defop("angle", _angle_fwd, promote="float", self=_angle_grad)


def _polar_fwd(xp, abs, angle):
    return (abs * xp.cos(angle) + 1j * (abs * xp.sin(angle))).astype(
        D.dtype.to_complex(D._BY_NP[abs.dtype]).np)


def _polar_grads(grad, result):
    from .pointwise import sgn
    g = conj(grad)
    return real(g * sgn(result)), real(g * (result * 1j))


_polar = defop("polar", _polar_fwd, inputs=("abs", "angle"), backward=_polar_grads)


def _check_real_pair(a, b):
    if a.dtype is not b.dtype:
        from ._inplace import _type_name
        raise RuntimeError(f"Expected object of scalar type {_type_name(a.dtype)} but got scalar "
                           f"type {_type_name(b.dtype)} for second argument")
    if not a.dtype.is_floating_point:
        from ._inplace import _type_name
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_type_name(a.dtype)} and {_type_name(b.dtype)}")


def polar(abs, angle):
    """torch.polar(abs, angle): abs * (cos(angle) + i sin(angle))."""
    _check_real_pair(abs, angle)
    return _polar(abs, angle)


def _complex_fwd(xp, real, imag):
    out = xp.empty(xp.broadcast_shapes(real.shape, imag.shape),
                   dtype=D.dtype.to_complex(D._BY_NP[real.dtype]).np)
    out.real = real
    out.imag = imag
    return out


_complex = defop("complex", _complex_fwd,
                 real=lambda grad: real_part(grad), imag=lambda grad: imag_part(grad))
real_part, imag_part = real, imag


def complex(real, imag):
    """torch.complex(real, imag): real + i imag, from two floating tensors of one dtype."""
    _check_real_pair(real, imag)
    return _complex(real, imag)


def _var_fwd(xp, self):
    if self.ndim and self.strides[-1] == self.itemsize:
        return self[..., None].view(self.real.dtype)
    return xp.stack([self.real, self.imag], -1)


def _vac_fwd(xp, self):
    if not self.flags.c_contiguous:
        self = xp.ascontiguousarray(self)
    return self.view(D.dtype.to_complex(D._BY_NP[self.dtype]).np)[..., 0]


_view_as_real = defop("view_as_real", _var_fwd, view=True,
                      self=lambda grad: _view_as_complex(grad.contiguous()), jvp="linear")
_view_as_complex = defop("view_as_complex", _vac_fwd, view=True,
                         self=lambda grad: view_as_real(grad), jvp="linear")


def view_as_real(input):
    """torch.view_as_real(input): a complex (..., ) tensor as a real (..., 2) view."""
    if input.dtype._category != 3:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting "
                           "tensor will NOT alias the original.")
    return _view_as_real(input)


def view_as_complex(input):
    """torch.view_as_complex(input): a real (..., 2) tensor as a complex (...) view."""
    from ._inplace import _type_name
    if input.dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {_type_name(input.dtype)}")
    d = input._data
    if d.ndim == 0 or d.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if d.strides[-1] != d.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * d.itemsize) for s, n in zip(d.strides[:-1], d.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.dtype is D.float16:
        raise NotImplementedError("\"view_as_complex\" not implemented for 'Half'")
    return _view_as_complex(input)


def _real_prop(self):
    return real(self)


def _imag_prop(self):
    return imag(self)


def _set_part(which):
    def setter(self, value):
        if which == "imag" and self.dtype._category != 3:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        (real(self) if which == "real" else imag(self)).copy_(value)
    return setter


PROPERTIES = {"real": property(_real_prop, _set_part("real")),
              "imag": property(_imag_prop, _set_part("imag"))}
MORE_FUNCTIONS = {f.__name__: f for f in (
    conj, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg, real, imag, angle, polar,
    complex, view_as_real, view_as_complex)}
MORE_METHODS = {n: MORE_FUNCTIONS[n] for n in (
    "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "angle")}
