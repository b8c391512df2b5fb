"""gradcheck / gradgradcheck: compare autograd's Jacobians with central finite differences."""
from .._backend import numpy as np, to_numpy

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable_outputs(out):
    from .._tensor import Tensor
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o._requires_grad)


def _numerical_jacobians(func, inputs, eps):
    """J[i][k] has shape (numel of output k, numel of input i), by central differences."""
    from .._tensor import Tensor
    from .grad_mode import no_grad
    outs = [to_numpy(o._data).copy() for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
    jac = []
    for t in inputs:
        if not (isinstance(t, Tensor) and t._requires_grad):
            jac.append(None)
            continue
        data = t._data
        flat = data.reshape(-1) if data.flags.c_contiguous else None
        cols = [np.zeros((o.size, data.size)) for o in outs]
        for j in range(data.size):
            idx = np.unravel_index(j, data.shape) if data.ndim else ()
            orig = data[idx].copy()
            data[idx] = orig + eps
            if True:
                plus = [to_numpy(o._data).astype(np.float64).reshape(-1)
                        for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
            data[idx] = orig - eps
            if True:
                minus = [to_numpy(o._data).astype(np.float64).reshape(-1)
                         for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor)]
            data[idx] = orig
            for k, (p, m) in enumerate(zip(plus, minus)):
                cols[k][:, j] = (p - m) / (2 * eps)
        jac.append(cols)
    return jac


def _analytical_jacobians(func, inputs):
    from .._tensor import Tensor, _make
    from . import grad as autograd_grad
    out = func(*inputs)
    outs = [o for o in _as_tuple(out) if isinstance(o, Tensor)]
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t._requires_grad]
    jac = [[np.zeros((o._data.size, t._data.size)) for o in outs] if
           (isinstance(t, Tensor) and t._requires_grad) else None for t in inputs]
    pos = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    for k, o in enumerate(outs):
        if not o._requires_grad:
            continue
        for r in range(o._data.size):
            g = np.zeros(o._data.size, dtype=o._data.dtype)
            g[r] = 1
            grads = autograd_grad(o, diff_inputs, _make(g.reshape(o._data.shape)),
                                  retain_graph=True, allow_unused=True)
            for i, gi in zip(pos, grads):
                if gi is not None:
                    if gi._data.shape != inputs[i]._data.shape:
                        raise GradcheckError(
                            f"Gradient for input {i} has shape {tuple(gi.shape)}, expected "
                            f"{tuple(inputs[i].shape)}")
                    jac[i][k][r, :] = to_numpy(gi._data).reshape(-1)
    return jac, outs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """True when autograd's gradients of `func` at `inputs` match finite differences.

    Inputs that require grad should be float64. On a mismatch, raises GradcheckError naming the
    output, the input and the first mismatching Jacobian entry (or returns False)."""
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._requires_grad and t.dtype.name not in ("float64", "complex128"):
            import warnings
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning)
    if not any(isinstance(t, Tensor) and t._requires_grad for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    analytical, outs = _analytical_jacobians(func, inputs)
    numerical = _numerical_jacobians(func, inputs, eps)
    for i, (a_cols, n_cols) in enumerate(zip(analytical, numerical)):
        if a_cols is None:
            continue
        for k, (a, n) in enumerate(zip(a_cols, n_cols)):
            # rows are outputs, columns inputs; report as PyTorch does (input x output)
            bad = ~np.isclose(a, n, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                r, c = [int(v[0]) for v in np.nonzero(bad)]
                msg = (f"Jacobian mismatch for output {k} with respect to input {i},\n"
                       f"numerical:{_fmt(n.T)}\nanalytical:{_fmt(a.T)}\n"
                       f"first mismatch: d(output {k})[{r}] / d(input {i})[{c}]: "
                       f"numerical {n[r, c]!r}, analytical {a[r, c]!r}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def _fmt(m):
    from .._creation import tensor
    return repr(tensor(m, dtype=None)) if m.size < 400 else f" array of shape {m.shape}"


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradients of `func` (checks second derivatives through create_graph)."""
    from .._tensor import Tensor
    from .._creation import randn_like
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        from .._tensor import _make
        grad_outputs = tuple(
            _make(rng.standard_normal(o._data.shape).astype(o._data.dtype)).requires_grad_()
            for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    diff_pos = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]

    def new_func(*args):
        inp = args[:n]
        gos = args[n:]
        outs = _differentiable_outputs(func(*inp))
        diff_in = [inp[i] for i in diff_pos]
        grads = autograd_grad(outs, diff_in, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g._requires_grad)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
