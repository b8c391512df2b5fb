"""gradcheck / gradgradcheck: autograd's Jacobians against central finite differences.

    >>> from ndgrad.autograd import gradcheck
    >>> x = ndgrad.randn(3, dtype=ndgrad.float64, requires_grad=True)
    >>> gradcheck(ndgrad.tanh, (x,))
    True

Slow mode builds every Jacobian entry both ways: J[k][i] for output k and input i, the
numerical one column by column (perturb one input element by +-eps), the analytical one row by
row (one backward per output element). Fast mode (HIPS autograd's random projection, PyTorch's
fast_mode) compares one number per (output, input) pair, u^T J v, computed by one backward
(u^T J, then . v) and by one finite difference along v (J v, then u . ); on a mismatch it falls
back to slow mode for that pair so the report still names the first wrong entry.
Besides the Jacobians, as PyTorch does: backward must scale with grad_output (zero in, zero
out), be reentrant (two runs agree within nondet_tol), and, with check_forward_ad, forward-mode
tangents must match the numerical Jacobian's columns.
Complex inputs and outputs count as pairs of reals, as in PyTorch: a complex output element
gives two rows (its real and imaginary parts; their backward runs with grad_output 1 and 1j),
a complex input element two columns (perturbed by eps and by i eps), and the analytical
gradient z.grad = dL/dx + i dL/dy fills both (Note [Complex gradients] in ops/complex.py).
"""
from .._backend import numpy as np, to_numpy, xp_of

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _is_diff(t):
    from .._tensor import Tensor
    return isinstance(t, Tensor) and t._requires_grad


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_diff(o))


def _float_outputs(out):
    from .._tensor import Tensor
    return [o for o in _as_tuple(out) if isinstance(o, Tensor)
            and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _flat(a):
    """An array as float64 reals, flattened; complex elements as (real, imag) pairs."""
    a = to_numpy(a)
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).astype(np.float64).reshape(-1)
    return a.astype(np.float64).reshape(-1)


def _rsize(a):
    """The number of reals in an array (two per complex element)."""
    return a.size * 2 if a.dtype.kind == "c" else a.size


def _unflat(v, a):
    """A real (host) vector as an array like `a`, on `a`'s device (pairs become complex
    elements)."""
    if a.dtype.kind == "c":
        v = v[0::2] + 1j * v[1::2]
    return _on(v.reshape(a.shape).astype(a.dtype), a)


def _on(host, like):
    """A host array moved to the device of `like` (explicitly, once)."""
    return host if type(like) is np.ndarray else xp_of(like).asarray(host)


def _eval(func, inputs):
    # run with grad mode as it is: func may itself differentiate (gradgradcheck)
    return [_flat(o._data) for o in _float_outputs(func(*inputs))]


def _unit(data, j):
    """(index, step) of the j-th real coordinate of an array (imaginary parts: the odd ones)."""
    if data.dtype.kind == "c":
        j, im = divmod(j, 2)
        step = 1j if im else 1
    else:
        step = 1
    idx = np.unravel_index(j, data.shape) if data.ndim else ()
    return idx, step


# ---------------------------------------------------------------- Jacobians, slow mode

def _numerical_jacobians(func, inputs, eps):
    """jac[i][k]: (numel of output k, numel of input i), by central differences."""
    jac = []
    n_out = None
    for t in inputs:
        if not _is_diff(t):
            jac.append(None)
            continue
        data = t._data
        cols = None
        nr = _rsize(data)
        for j in range(nr):
            idx, step = _unit(data, j)
            orig = data[idx].copy()
            data[idx] = orig + eps * step
            plus = _eval(func, inputs)
            data[idx] = orig - eps * step
            minus = _eval(func, inputs)
            data[idx] = orig
            if cols is None:
                cols = [np.zeros((p.size, nr)) for p in plus]
            for k, (p, m) in enumerate(zip(plus, minus)):
                cols[k][:, j] = (p - m) / (2 * eps)
        if cols is None:  # an empty input
            if n_out is None:
                n_out = [o.size for o in _eval(func, inputs)]
            cols = [np.zeros((n, 0)) for n in n_out]
        jac.append(cols)
    return jac


def _vjp(outs, diff_inputs, k, g):
    from .._tensor import _make
    from . import grad as autograd_grad
    o = outs[k]
    if not o._requires_grad:
        return [None] * len(diff_inputs)
    return autograd_grad(o, diff_inputs, _make(_on(g.reshape(o._data.shape), o._data)),
                         retain_graph=True,
                         allow_unused=True)


def _analytical_jacobians(outs, inputs, check_grad_dtypes):
    """jac[i][k] as above, one backward per output element."""
    diff_inputs = [t for t in inputs if _is_diff(t)]
    pos = [i for i, t in enumerate(inputs) if _is_diff(t)]
    jac = [[np.zeros((_rsize(o._data), _rsize(t._data))) for o in outs] if _is_diff(t) else None
           for t in inputs]
    for k, o in enumerate(outs):
        for r in range(_rsize(o._data)):
            idx, step = _unit(o._data, r)
            g = np.zeros(o._data.shape, dtype=o._data.dtype)
            g[idx] = step
            for i, gi in zip(pos, _vjp(outs, diff_inputs, k, g)):
                if gi is None:
                    continue
                _check_grad(gi, inputs[i], check_grad_dtypes)
                jac[i][k][r, :] = _flat(gi._data)
    return jac


def _check_grad(g, t, check_grad_dtypes):
    if g._data.shape != t._data.shape:
        raise GradcheckError("Analytical gradient has incorrect size")
    if check_grad_dtypes and g.dtype is not t.dtype:
        raise GradcheckError("Gradient has dtype mismatch")


def _forward_jacobians(func, inputs):
    """jac[i][k] by forward mode: one dual evaluation per input element."""
    from .._tensor import _make
    from . import forward_ad as fwAD
    jac = []
    for i, t in enumerate(inputs):
        if not _is_diff(t):
            jac.append(None)
            continue
        cols = None
        for j in range(_rsize(t._data)):
            with fwAD.dual_level():
                idx, step = _unit(t._data, j)
                tangent = np.zeros(t._data.shape, dtype=t._data.dtype)
                tangent[idx] = step
                args = list(inputs)
                args[i] = fwAD.make_dual(t, _make(_on(tangent, t._data)))
                outs = _float_outputs(func(*args))
                if cols is None:
                    cols = [np.zeros((_rsize(o._data), _rsize(t._data))) for o in outs]
                for k, o in enumerate(outs):
                    tg = fwAD.unpack_dual(o).tangent
                    if tg is not None:
                        cols[k][:, j] = _flat(tg._data)
        jac.append(cols or [])
    return jac


def _fmt(m):
    from .._creation import tensor
    return repr(tensor(m)) if m.size <= 400 else f" array of shape {m.shape}"


def _first_mismatch(a, n, atol, rtol):
    """None, or the first (row, col) of the output-major Jacobians that is not close."""
    bad = ~np.isclose(a, n, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    r, c = (int(v[0]) for v in np.nonzero(bad))
    return r, c


def _mismatch_msg(a, n, k, i, rc, forward=False):
    # PyTorch prints the Jacobians input-major (rows: input elements); ours are output-major
    r, c = rc
    mode = "computed with forward mode " if forward else ""
    return (f"Jacobian {mode}mismatch for output {k} with respect to input {i},\n"
            f"numerical:{_fmt(n.T)}\nanalytical:{_fmt(a.T)}\n"
            f"first mismatch: d(output {k})[{r}] / d(input {i})[{c}]: numerical "
            f"{float(n[r, c])!r}, analytical {float(a[r, c])!r}\n")


def _compare(analytical, numerical, atol, rtol, forward=False):
    for i, (a_cols, n_cols) in enumerate(zip(analytical, numerical)):
        if a_cols is None:
            continue
        for k, (a, n) in enumerate(zip(a_cols, n_cols)):
            if a.shape != n.shape:
                raise GradcheckError(
                    f"Jacobian shapes differ for output {k} with respect to input {i}: "
                    f"numerical {n.shape}, analytical {a.shape}")
            rc = _first_mismatch(a, n, atol, rtol)
            if rc is not None:
                raise GradcheckError(_mismatch_msg(a, n, k, i, rc, forward))


# ---------------------------------------------------------------- other backward checks

def _check_mul_by_grad_output(outs, inputs):
    """Zero grad_outputs must give zero gradients (backward multiplies by grad_output)."""
    from .._tensor import _make
    from . import grad as autograd_grad
    diff_inputs = [t for t in inputs if _is_diff(t)]
    pairs = [(o, _make(xp_of(o._data).zeros_like(o._data))) for o in outs if o._requires_grad]
    if not pairs:
        return
    gs = autograd_grad([o for o, _ in pairs], diff_inputs, [g for _, g in pairs],
                       retain_graph=True, allow_unused=True)
    for g in gs:
        if g is not None and np.any(to_numpy(g._data) != 0):
            raise GradcheckError("backward not multiplied by grad_output")


def _check_reentrant(outs, inputs, nondet_tol, rng):
    diff_inputs = [t for t in inputs if _is_diff(t)]
    for k, o in enumerate(outs):
        u = rng.standard_normal(o._data.size).astype(o._data.dtype)
        first = _vjp(outs, diff_inputs, k, u)
        second = _vjp(outs, diff_inputs, k, u)
        for g1, g2 in zip(first, second):
            if g1 is None or g2 is None:
                continue
            diff = np.max(np.abs(to_numpy(g1._data) - to_numpy(g2._data)), initial=0.0)
            if diff > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}.")


# ---------------------------------------------------------------- fast mode

def _fast_check(func, inputs, outs, eps, atol, rtol, check_grad_dtypes, rng):
    """Compare u^T J v computed by reverse mode and by one finite difference, per pair."""
    diff_pos = [i for i, t in enumerate(inputs) if _is_diff(t)]
    diff_inputs = [inputs[i] for i in diff_pos]
    us = [rng.standard_normal(_rsize(o._data)) for o in outs]
    vs = {i: rng.standard_normal(_rsize(inputs[i]._data)) for i in diff_pos}
    # analytical: a[k][i] = <u_k^T J_ki, v_i>
    analytical = {}
    for k, o in enumerate(outs):
        gs = _vjp(outs, diff_inputs, k, _unflat(us[k], o._data))
        for i, g in zip(diff_pos, gs):
            if g is not None:
                _check_grad(g, inputs[i], check_grad_dtypes)
            analytical[k, i] = 0.0 if g is None else float(_flat(g._data) @ vs[i])
    # numerical: n[k][i] = <u_k, J_ki v_i>
    for i in diff_pos:
        data = inputs[i]._data
        orig = data.copy()
        step = _unflat(eps * vs[i], data)
        data[...] = orig + step
        plus = _eval(func, inputs)
        data[...] = orig - step
        minus = _eval(func, inputs)
        data[...] = orig
        for k in range(len(outs)):
            n = float(us[k] @ ((plus[k] - minus[k]) / (2 * eps)))
            a = analytical[k, i]
            # the tolerance scales with the sizes of the projections (as PyTorch's fast mode)
            scale = np.linalg.norm(us[k]) * np.linalg.norm(vs[i])
            if not abs(a - n) <= atol * scale + rtol * abs(n):
                return k, i, n, a
    return None


# ---------------------------------------------------------------- public API

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """True when the gradients of `func` at `inputs` match finite differences.

    Inputs that require grad should be float64. On a failure raises GradcheckError naming the
    output, the input and the first mismatching Jacobian entry (or returns False when
    raise_exception=False). check_undefined_grad, check_batched_grad and masked are accepted
    (ndgrad materialises undefined gradients as zeros; batched gradients are plain loops)."""
    import warnings
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if _is_diff(t) and t.dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning)
    if not any(_is_diff(t) for t in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    if not check_forward_ad and not check_backward_ad:
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    try:
        _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes,
                   check_forward_ad, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes, check_forward_ad,
               check_backward_ad, fast_mode):
    from .grad_mode import enable_grad
    rng = np.random.default_rng(0)
    with enable_grad():
        out = func(*inputs)
    outs = _float_outputs(out)
    numerical = None
    if check_backward_ad:
        for k, o in enumerate(outs):
            if not o._requires_grad and any(_is_diff(t) for t in inputs):
                # an output that does not require grad must have a zero numerical Jacobian
                numerical = numerical or _numerical_jacobians(func, inputs, eps)
                for cols in numerical:
                    if cols is not None and np.any(np.abs(cols[k]) > atol):
                        raise GradcheckError("Numerical gradient for function expected to be "
                                             "zero")
        if fast_mode:
            bad = _fast_check(func, inputs, outs, eps, atol, rtol, check_grad_dtypes, rng)
            if bad is not None:
                k, i, n, a = bad
                numerical = numerical or _numerical_jacobians(func, inputs, eps)
                slow = _analytical_jacobians(outs, inputs, check_grad_dtypes)
                rc = _first_mismatch(slow[i][k], numerical[i][k], atol, rtol)
                detail = "" if rc is None else "\nIn slow mode, " + _mismatch_msg(
                    slow[i][k], numerical[i][k], k, i, rc)
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n!r}\nanalytical:{a!r}\n\n"
                    "The above quantities relating the numerical and analytical jacobians are "
                    "computed in fast mode (u^T J v with random vectors u and v)." + detail)
        else:
            numerical = numerical or _numerical_jacobians(func, inputs, eps)
            analytical = _analytical_jacobians(outs, inputs, check_grad_dtypes)
            _compare(analytical, numerical, atol, rtol)
        _check_reentrant(outs, inputs, nondet_tol, rng)
        _check_mul_by_grad_output(outs, inputs)
    if check_forward_ad:
        numerical = numerical or _numerical_jacobians(func, inputs, eps)
        _compare(_forward_jacobians(func, inputs), numerical, atol, rtol, forward=True)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients of `func`: second derivatives through create_graph (and,
    with check_fwd_over_rev, forward mode over the backward pass)."""
    from .._tensor import _make
    from . import grad as autograd_grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _make(_unflat(rng.standard_normal(_rsize(o._data)), o._data)).requires_grad_()
            for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    diff_pos = [i for i, t in enumerate(inputs) if _is_diff(t)]

    def new_func(*args):
        inp = args[:n]
        gos = args[n:]
        outs = _differentiable_outputs(func(*inp))
        diff_in = [inp[i] for i in diff_pos]
        grads = autograd_grad(outs, diff_in, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
