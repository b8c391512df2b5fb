"""torch-level RNN operations (lstm, gru, rnn_tanh, rnn_relu and their cells) and numerical
functions (gradient, lu_solve, lu_unpack, histogramdd, nuclear_norm, ...)."""
import builtins
import functools

from . import _argcheck
from .._tensor import Tensor
from .._backend import xp_of
from ._spectral import _warn_once
from .indexing import _return_type
from .nn_ops import lstm_layer

__all__ = ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
           "lstm", "gru", "rnn_tanh", "rnn_relu",
           "gradient", "lu_solve", "lu_unpack", "histogramdd",
           "nuclear_norm", "frobenius_norm", "norm_except_dim"]


# ---------------------------------------------------------------- PyTorch's argument parsing
# PyTorch's parser refuses a first argument that is no Tensor before the op runs, naming it (or
# listing the overloads). _argcheck's after-failure errors know only its common parameter names
# (input, ...) and its own overload table, so these functions check their first argument here,
# and mark themselves as wrapped (_argcheck.wrap_namespace then leaves them be).

def _typename(a):
    return _argcheck._typename(a)


def _parsed(first, overloads=None):
    """Decorator: PyTorch's TypeError for a first argument that is no Tensor (`first`: its name
    in PyTorch; `overloads`: PyTorch's listed signatures, for an overloaded function). A function
    that PyTorch gives an out= gets _out's wrapper inside this check (which _out.install then
    leaves be), so that its after-failure errors do not replace this one."""
    from . import _out

    def wrap(fn):
        rule = _out.RULES.get(fn.__name__)
        inner = _argcheck.torch_errors(fn) if rule is None else \
            _out._with_out(fn, fn.__name__, rule)

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if "batch_sizes" in kwargs and overloads:   # (the packed overload by keyword)
                args, kwargs = _packed_by_keyword(args, kwargs)
            if args and not isinstance(args[0], Tensor):
                if overloads:
                    raise _argcheck.combination_error(fn.__name__, overloads, args, kwargs)
                raise TypeError(f"{fn.__name__}(): argument '{first}' (position 1) must be "
                                f"Tensor, not {_typename(args[0])}")
            return inner(*args, **kwargs)
        checked._torch_errors, checked._binding_first = True, False
        checked._ndgrad_out = rule is not None
        return checked
    return wrap


_PACKED = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout", "train",
           "bidirectional")


def _packed_by_keyword(args, kwargs):
    """The RNN functions' packed overload, (data, batch_sizes, hx, ...), given by keyword:
    its arguments by position (the function tells the overloads apart by their types)."""
    kwargs = dict(kwargs)
    named = _PACKED[len(args):]
    if all(n in kwargs for n in named):
        args = tuple(args) + tuple(kwargs.pop(n) for n in named)
    return args, kwargs


# ---------------------------------------------------------------- RNN cells and layers
# The step math is nn.RNNBase's own (_cell, _packed_step): they read only `mode` and
# `hidden_size` from `self`, so a bare RNNBase carrying those two serves as the stepper (the
# same trick nn.LSTMCell uses), and ATen's functions and the modules compute alike.

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _stepper(mode, hidden_size):
    from ..nn.modules.rnn import RNNBase
    step = RNNBase.__new__(RNNBase)
    step.__dict__.update(mode=mode, hidden_size=hidden_size)
    return step


def _size(t, d):
    """t.size(d) with ATen's error for a dim out of range."""
    return t.shape[_wrap_dim(d, t.dim())]


def _check_cell(mode, input, hx, w_ih, w_hh):
    """ATen's checks of an RNN cell's arguments, in its order: the weights' gate rows, the
    input's size, then each hidden state's batch and size."""
    hidden_size = _size(w_hh, 1)
    gates = _GATES[mode] * hidden_size
    if _size(w_ih, 0) != gates:
        raise RuntimeError(f"weight_ih first dim must be {_GATES[mode]} * hidden_size = {gates}, "
                           f"but got {w_ih.shape[0]}")
    if _size(w_hh, 0) != gates:
        raise RuntimeError(f"weight_hh first dim must be {_GATES[mode]} * hidden_size = {gates}, "
                           f"but got {w_hh.shape[0]}")
    if _size(input, 1) != _size(w_ih, 1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    for label, h in enumerate(hx):
        if input.shape[0] != _size(h, 0):
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                               f"batch size {h.shape[0]}")
        if _size(h, 1) != hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h.shape[1]}, "
                               f"expected {hidden_size}")


def _cell(mode, input, h, c, w_ih, w_hh, b_ih, b_hh):
    from ..nn import functional as F
    gi = F.linear(input, w_ih, b_ih)
    return _stepper(mode, w_ih.shape[0] // _GATES[mode])._cell(gi, h, c, w_hh, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> (h, c); hx = (h, c)."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell("LSTM", input, hx, w_ih, w_hh)
    return _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def _single_state_cell(mode):
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        _check_cell(mode, input, (hx,), w_ih, w_hh)
        return _cell(mode, input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]
    cell.__name__ = cell.__qualname__ = mode.lower() + "_cell"
    cell.__doc__ = (f"torch.{cell.__name__}(input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> h: "
                    "one step of the layer.")
    return cell


gru_cell = _single_state_cell("GRU")
rnn_tanh_cell = _single_state_cell("RNN_TANH")
rnn_relu_cell = _single_state_cell("RNN_RELU")


def _layers(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
            lengths=None):
    """The stacked, time-major (L, N, F) run of nn.RNNBase.forward on a flat parameter list;
    `lengths` (longest first) when the batch came packed. -> (output, h_n, c_n or None)."""
    from ..nn import functional as F
    from .shape import stack, cat
    proj = mode == "LSTM" and _size(h0, 2) != _size(c0, 2)
    per = (4 if has_biases else 2) + proj
    if len(params) % per:
        raise RuntimeError(f"MatrixRef: ArrayRef size {len(params)} not divisible by stride "
                           f"{per}")
    D = 2 if bidirectional else 1
    if bidirectional and (len(params) // per % 2 or h0.shape[0] % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if mode != "LSTM":  # ATen's stacked_rnn wants exactly num_layers of each
        if h0.shape[0] // D != num_layers:
            raise RuntimeError("Expected more hidden states in stacked_rnn")
        if len(params) // per // D != num_layers:
            raise RuntimeError("Expected more weights in stacked_rnn")
    if num_layers * D * per > len(params):  # ATen's message for the first missing slice
        start = len(params) // (D * per) * D * per
        raise RuntimeError(f"ArrayRef: invalid slice, N = {start}; M = {per}; "
                           f"size = {len(params)}")
    for h in (h0, c0) if mode == "LSTM" else ():  # (ATen selects each layer's state)
        if h.shape[0] < num_layers * D:
            raise IndexError(f"select(): index {h.shape[0]} out of range for tensor of size "
                             f"{list(h.shape)} at dimension 0")
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    step = _stepper(mode, params[0].shape[0] // _GATES[mode])
    fused = mode == "LSTM" and not proj and lengths is None and _oneDNN_dtype(x)
    layer_in, h_n, c_n = (x.contiguous() if fused else x), [], []  # (mkldnn_rnn's copy)
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            w = params[(layer * D + d) * per:(layer * D + d + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if proj else None
            h, c = h0[layer * D + d], (c0[layer * D + d] if c0 is not None else None)
            if fused:  # Note [Fused LSTM layer]: one node for the layer, as PyTorch's oneDNN path
                from .._creation import zeros
                if not has_biases:
                    b_ih = b_hh = zeros(w_ih.shape[0], dtype=w_ih.dtype, device=w_ih.device)
                out, h, c, _ = lstm_layer(layer_in, w_ih, w_hh, b_ih, b_hh, h, c, bool(d), (), 2,
                                          w_hh.shape[1], num_layers, has_biases, bidirectional,
                                          False, train)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
                continue
            gi = F.linear(layer_in, w_ih, b_ih)  # every step's input projection at once
            seq = [None] * x.shape[0]
            for t in (range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])):
                if lengths is None:
                    h, c = step._cell(gi[t], h, c, w_hh, b_hh, w_hr)
                else:
                    h, c = step._packed_step(gi[t], h, c, w_hh, b_hh, lengths, t, w_hr)
                seq[t] = h
            outs.append(stack(seq, 0))
            h_n.append(h)
            c_n.append(c)
        layer_in = outs[0] if D == 1 else cat(outs, 2)
        if dropout and train and layer < num_layers - 1:
            layer_in = F.dropout(layer_in, dropout, True)
    return layer_in, stack(h_n, 0), (stack(c_n, 0) if c0 is not None else None)


def _oneDNN_dtype(x):
    """PyTorch's use_mkldnn for an LSTM on the CPU: a float32 input with elements."""
    return x.device.type == "cpu" and str(x.dtype) == "torch.float32" and x.numel() != 0


def _sequence(mode, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
    if isinstance(has_biases, (list, tuple)):
        # the packed overload (data, batch_sizes, hx, params, has_biases, num_layers, dropout,
        # train, bidirectional): run on the padded batch (longest first, as packed), and pack
        # the output again
        from ..nn.utils.rnn import PackedSequence, pad_packed_sequence, pack_padded_sequence
        batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = (
            hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
        x, lengths = pad_packed_sequence(PackedSequence(input, batch_sizes))
        lengths = lengths.tolist()
    else:
        x, lengths = (input.transpose(0, 1) if batch_first else input), None
    if mode == "LSTM" and len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
    out, h_n, c_n = _layers(mode, x, h0, c0, params, has_biases, num_layers, dropout, train,
                            bidirectional, lengths)
    if lengths is not None:
        out = pack_padded_sequence(out, lengths).data
    elif batch_first:
        out = out.transpose(0, 1)
    return (out, h_n, c_n) if mode == "LSTM" else (out, h_n)


_RNN_TAIL = ("tuple of Tensors params, bool has_biases, int num_layers, float dropout, bool train, "
             "bool bidirectional")


def _rnn_overloads(hx):
    return (f"(Tensor data, Tensor batch_sizes, {hx} hx, {_RNN_TAIL})",
            f"(Tensor input, {hx} hx, {_RNN_TAIL}, bool batch_first)")


@_parsed("input", _rnn_overloads("tuple of Tensors"))
def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n, c_n); hx = (h_0, c_0); params in nn.LSTM's _flat_weights
    order (w_ih, w_hh[, b_ih, b_hh][, w_hr] per layer and direction). Also the packed overload
    torch.lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)."""
    return _sequence("LSTM", input, hx, params, has_biases, num_layers, dropout, train,
                     bidirectional, batch_first)


def _single_state_layer(mode, name):
    def layer(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
        return _sequence(mode, input, hx, params, has_biases, num_layers, dropout, train,
                         bidirectional, batch_first)
    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = (f"torch.{name}(input, hx, params, has_biases, num_layers, dropout, train, "
                     f"bidirectional, batch_first) -> (output, h_n); also the packed overload "
                     f"torch.{name}(data, batch_sizes, hx, params, has_biases, num_layers, "
                     "dropout, train, bidirectional).")
    return _parsed("input", _rnn_overloads("Tensor"))(layer)


gru = _single_state_layer("GRU", "gru")
rnn_tanh = _single_state_layer("RNN_TANH", "rnn_tanh")
rnn_relu = _single_state_layer("RNN_RELU", "rnn_relu")


# ---------------------------------------------------------------- torch.gradient

def _wrap_dim(d, ndim):
    n = builtins.max(ndim, 1)  # (a 0-d tensor wraps like a 1-d one, as in ATen)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _is_scalar(s):
    return isinstance(s, (int, float, complex)) or (isinstance(s, Tensor) and s.dim() == 0)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient(input, *, spacing=1, dim=None, edge_order=1) -> a tuple with the estimated
    derivative along each dim: central differences inside, one-sided (first or second order)
    ones at the edges; spacing a scalar, a list of scalars or a list of 1-d coordinates."""
    from .shape import cat
    ndim = input.dim()
    if spacing is None:   # (PyTorch's overload gradient(input, *, spacing=None, ...))
        spacing = 1
    if str(input.dtype) == "torch.uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = [_wrap_dim(dim, ndim)] if isinstance(dim, int) else \
        (list(range(ndim)) if dim is None else list(dim))
    spacing_size = None
    if spacing is None:     # (PyTorch's default, spelled out)
        spacing = 1
    if _is_scalar(spacing):
        spacing = [spacing] * len(dims)
    else:
        spacing = list(spacing)
        spacing_size = len(spacing)
    if spacing_size is not None and dim is None and spacing_size != ndim:
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {spacing_size}")
    if spacing_size is not None and dim is not None and spacing_size != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{spacing_size} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for i, d in enumerate(dims):
        dims[i] = d = _wrap_dim(d, ndim)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    # a list of tensors is coordinates (even 0-d ones: an error below, as in PyTorch)
    coordinates = spacing_size is not None and bool(spacing) and \
        all(isinstance(s, Tensor) for s in spacing)
    result = []
    for d, h in zip(dims, spacing):
        n = input.shape[d]

        def sl(start, stop=None):
            """input[start:stop] along d (negative ends count from the back, as ATen's slice)."""
            stop = n if stop is None else stop
            start, stop = start + n if start < 0 else start, stop + n if stop < 0 else stop
            return input.narrow(d, start, stop - start)
        if coordinates:
            center, prepend, append = _coordinate_parts(sl, h, d, ndim, edge_order)
        else:
            # ATen's order of operations, so that rounding matches
            h = h.item() if isinstance(h, Tensor) else h
            center = (sl(2) - sl(0, -2)) / h / 2
            if edge_order == 1:
                prepend = (sl(1, 2) - sl(0, 1)) / h
                append = (sl(-1) - sl(-2, -1)) / h
            else:
                prepend = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
                append = (0.5 * sl(-3, -2) - 2 * sl(-2, -1) + 1.5 * sl(-1)) / h
        result.append(cat([prepend, center, append], d))
    return tuple(result)


def _coordinate_parts(sl, x, d, ndim, edge_order):
    """gradient's three parts along d for sample coordinates x (1-d): the second-order
    non-uniform central difference inside, one-sided differences at the two edges."""
    if x.dim() != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {x.dim()} dimensions!")
    shape = [1] * ndim
    shape[d] = -1
    dx = x.diff()
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * sl(0, -2) + b * sl(1, -1) + c * sl(2)
    if edge_order == 1:
        return center, (sl(1, 2) - sl(0, 1)) / dx[0], (sl(-1) - sl(-2, -1)) / dx[-1]
    a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
    b = (dx[0] + dx[1]) / (dx[0] * dx[1])
    c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
    prepend = a * sl(0, 1) + b * sl(1, 2) + c * sl(2, 3)
    a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
    b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
    c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
    append = a * sl(-3, -2) + b * sl(-2, -1) + c * sl(-1)
    return center, prepend, append


# ---------------------------------------------------------------- LU: lu_unpack, lu_solve

_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B) (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp:2230.)")


def _permutation(pivots, m, batch, dtype, device):
    """The m x m matrix P of LAPACK's 1-based row interchanges (row j swapped with row
    pivots[j]), so that A = P L U."""
    from .._tensor import _make
    piv = pivots._data.astype("int64") - 1
    xp = xp_of(piv)
    piv = xp.broadcast_to(piv, batch + piv.shape[-1:])
    perm = xp.tile(xp.arange(m), batch + (1,))
    for j in range(piv.shape[-1]):  # the interchanges in order, all matrices at once
        pj = piv[..., j:j + 1]
        a = perm[..., j:j + 1].copy()
        perm[..., j:j + 1] = xp.take_along_axis(perm, pj, -1)
        xp.put_along_axis(perm, pj, a, -1)
    P = xp.zeros(batch + (m, m), dtype=dtype)
    xp.put_along_axis(P, perm[..., None, :], 1, axis=-2)
    return _make(P).to(device)


@_parsed("LU_data")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """torch.lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True) -> (P, L, U)
    from lu_factor's packed output; L and U are differentiable in LU_data. A part not unpacked
    is an empty tensor."""
    from .._creation import empty, eye
    from . import tril, triu
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    if unpack_pivots and str(LU_pivots.dtype) != "torch.int32":
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor")
    m, n = LU_data.shape[-2:]
    k = builtins.min(m, n)
    nothing = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    P = nothing
    if unpack_pivots:
        piv = LU_pivots._data
        if piv.size and bool(((piv < 1) | (piv > m)).any()):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                               "inclusive.Did you properly pass the result of lu_factor?")
        P = _permutation(LU_pivots, m, tuple(LU_data.shape[:-2]), LU_data._data.dtype,
                         LU_data.device)
    L = U = nothing
    if unpack_data:
        L = tril(LU_data.narrow(-1, 0, k), -1) + eye(m, k, dtype=LU_data.dtype,
                                                      device=LU_data.device)
        U = triu(LU_data.narrow(-2, 0, k))
    return _return_type("lu_unpack", ("P", "L", "U"))(P, L, U)


@_parsed("input")
def lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve(b, LU_data, LU_pivots) (deprecated; PyTorch's parser names b `input`):
    linalg.lu_solve(LU_data, LU_pivots, b), with linalg.lu_solve's checks and errors."""
    from .linalg import lu_solve as linalg_lu_solve
    _warn_once(_LU_SOLVE_DEPRECATED)
    LU, B, pivots = LU_data, input, LU_pivots
    if not (LU.dtype.is_floating_point or LU.dtype.is_complex):
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex tensor "
                           f"as input. Got {_type_name(LU.dtype)}")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_type_name(LU.dtype)} and B of type "
                           f"{_type_name(B.dtype)} instead")
    if str(pivots.dtype) != "torch.int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    for t, name in ((LU, "A"), (B, "B")):
        if t.dim() < 2:
            raise RuntimeError(f"torch.linalg.lu_solve: The input tensor {name} must have at "
                               "least 2 dimensions.")
        if name == "A" and LU.shape[-1] != LU.shape[-2]:
            raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, "
                               f"but they are {LU.shape[-2]} by {LU.shape[-1]} matrices")
    if LU.shape[-2] != B.shape[-2]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({LU.shape[-2]}x{LU.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if pivots.dim() == 0 or LU.shape[-1] != pivots.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(LU.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {list(pivots.shape)} instead")
    return linalg_lu_solve(LU, pivots, B)


def _type_name(dtype):
    from ._inplace import _type_name as name
    return name(dtype)


# ---------------------------------------------------------------- histogramdd

def _fmt(x):
    """A double as C++'s ostream prints it (1, 0.5, inf)."""
    return f"{x:g}"


_HISTOGRAMDD_OVERLOADS = tuple(
    f"(Tensor input, {bins} bins, tuple of floats range = None, Tensor weight = None, "
    "bool density = False)" for bins in ("int", "tuple of ints", "tuple of Tensors"))


@_parsed("input", _HISTOGRAMDD_OVERLOADS)
def histogramdd(input, bins, range=None, weight=None, density=False):
    """torch.histogramdd(input, bins, *, range=None, weight=None, density=False) ->
    (hist, bin_edges): the N-dimensional histogram of the points input[..., :] (N = the last
    dim); bins an int, N ints or N 1-d tensors of edges; the last bin of each dim is closed."""
    from .._tensor import _make
    from .._creation import linspace
    ints = isinstance(bins, int) or (isinstance(bins, (list, tuple)) and
                                     all(isinstance(b, int) for b in bins))
    if not (ints or isinstance(bins, (list, tuple)) and
            all(isinstance(b, Tensor) for b in bins)):
        given = {k: v for k, v in (("range", range), ("weight", weight), ("density", density))
                 if v is not None and v is not False}
        raise _argcheck.combination_error("histogramdd", _HISTOGRAMDD_OVERLOADS, (input, bins),
                                          given)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{_type_name(input.dtype)}'")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    N = input.shape[-1]
    edge_tensors = not ints
    if isinstance(bins, int):
        bins = [bins] * N
    if len(bins) != N:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({_c_name(input.dtype)}), and "
                f"weight({_c_name(weight.dtype)})")
        if list(weight.shape or [1]) != list(input.shape[:-1]):
            raise RuntimeError(
                f"torch.histogramdd: if weight tensor is provided it should have the same shape "
                f"as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(input.shape)} and weight with shape {list(weight.shape)}")
    points = input._data.reshape(-1, N)
    if edge_tensors:
        edges = list(bins)
    else:
        edges = [linspace(lo, hi, ct + 1, dtype=input.dtype, device=input.device)
                 for ct, (lo, hi) in zip(bins, _outer_edges(points, N, range))]
    for d, e in enumerate(edges):
        if e.numel() == 1:  # (one edge: no bin)
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for dimension "
                               f"{d}")
        if e.numel() == 0:  # (bins=-1: no edges at all)
            raise RuntimeError(
                f"torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                f"elements in the bins tensor for dimension {d}")
    hist = _make(_count(points, [e._data for e in edges],
                        None if weight is None else weight._data.reshape(-1)))
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * N
            shape[d] = -1
            hist = hist / e.diff().reshape(shape)
    return _return_type("histogramdd", ("hist", "bin_edges"))(hist, tuple(edges))


def _c_name(dtype):
    """A dtype as ATen's ostream prints it (float, double, c10::Half)."""
    return {"torch.float32": "float", "torch.float64": "double", "torch.float16": "c10::Half",
            "torch.bfloat16": "c10::BFloat16"}.get(str(dtype), str(dtype)[6:])


def _outer_edges(points, N, range):
    """Each dim's (leftmost, rightmost) edge: range's pairs, else the data's extent ([0, 1] for
    no data); an empty range widened by 0.5 each side, as numpy does."""
    import math
    if range is not None:
        if len(range) != 2 * N:
            raise RuntimeError(f"torch.histogramdd: for a {N}-dimensional histogram range "
                               f"should have {2 * N} elements, but got {len(range)}")
        outer = [(float(range[2 * d]), float(range[2 * d + 1])) for d in builtins.range(N)]
    elif points.shape[0]:
        lo, hi = points.min(axis=0), points.max(axis=0)
        outer = [(float(lo[d]), float(hi[d])) for d in builtins.range(N)]
    else:
        outer = [(0.0, 1.0)] * N
    for d, (lo, hi) in enumerate(outer):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo)}, "
                               f"{_fmt(hi)}] is not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo)} max {_fmt(hi)} for dimension {d}")
        if lo == hi:
            outer[d] = (lo - 0.5, hi + 0.5)
    return outer


def _count(points, edges, weights):
    """The (weighted) counts of the (M, N) points in the grid of edges; a point outside the
    outer edges (or NaN) is not counted; a point on the last edge goes in the last bin."""
    xp = xp_of(points)
    keep = xp.ones(points.shape[0], dtype=bool)
    flat = xp.zeros(points.shape[0], dtype="int64")
    for d, e in enumerate(edges):
        col = points[:, d]
        nb = builtins.max(e.shape[0] - 1, 0)
        idx = xp.searchsorted(e, col, side="right") - 1
        idx = xp.where(col == e[-1], nb - 1, idx)
        keep &= (col >= e[0]) & (col <= e[-1]) & (idx >= 0) & (idx < nb)
        flat = flat * nb + xp.clip(idx, 0, builtins.max(nb - 1, 0))
    shape = tuple(builtins.max(e.shape[0] - 1, 0) for e in edges)
    size = 1
    for s in shape:
        size *= s
    w = keep.astype(points.dtype) if weights is None else xp.where(keep, weights, 0)
    counts = xp.bincount(flat, weights=w, minlength=size)[:size] if size else \
        xp.zeros(0, dtype=points.dtype)
    return counts.astype(points.dtype).reshape(shape)


# ---------------------------------------------------------------- deprecated norms

_NUCLEAR_DEPRECATED = (
    "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
    "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, "
    "keepdim)` instead (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:3229.)")
_FROBENIUS_DEPRECATED = (
    "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be "
    "removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` "
    "instead (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/LinearAlgebra.cpp:3175.)")


def nuclear_norm(input, dim=None, keepdim=False):
    """torch.nuclear_norm(input, keepdim=False) / (input, dim, keepdim=False): the sum of the
    singular values over the last two dims (or the 2 dims given); differentiable."""
    from .linalg import matrix_norm
    if isinstance(dim, bool):  # the (input, keepdim) overload, keepdim given by position
        dim, keepdim = None, dim
    _warn_once(_NUCLEAR_DEPRECATED)  # (both overloads: one warning, as in ATen)
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def frobenius_norm(input, dim, keepdim=False):
    """torch.frobenius_norm(input, dim, keepdim=False): the 2-norm of the entries over dim (at
    most 2 dims; () = all); differentiable."""
    _warn_once(_FROBENIUS_DEPRECATED)
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")
    return _norm(input, 2.0, dim if dim else None, keepdim)


def _norm(v, p, dim=None, keepdim=False):
    """linalg.vector_norm with at::norm's dtype error (the deprecated norms call at::norm)."""
    from .reduction import vector_norm
    if not (v.dtype.is_floating_point or v.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_type_name(v.dtype)} instead.")
    return vector_norm(v, p, dim, keepdim)


@_parsed("v")
def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim(v, pow=2, dim=0): the pow-norm over every dim but dim (-1: over
    all), shaped to broadcast against v (weight_norm's g)."""
    if not isinstance(pow, int):
        raise TypeError(f"norm_except_dim(): argument 'pow' (position 2) must be int, not "
                        f"{type(pow).__name__}")
    if dim == -1:
        return _norm(v, pow)
    if v.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim == 0:
        return _norm(v.reshape(v.shape[0], -1), pow, 1).reshape([v.shape[0]] + [1] * (v.dim() - 1))
    if dim == v.dim() - 1:
        return _norm(v.reshape(-1, v.shape[-1]), pow, 0).reshape([1] * (v.dim() - 1) + [-1])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)
