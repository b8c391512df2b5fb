"""RNN, LSTM, GRU (multi-layer, bidirectional, batch_first) and their cells.

The input projection of every time step is one matmul per layer and direction; only the
recurrent part loops over time. Parameter names and gate order follow PyTorch (LSTM: i, f, g, o;
GRU: r, z, n), so state dicts load across.
"""
import math
import warnings

from .module import Module
from ..parameter import Parameter
from .. import functional as F, init
from ..._creation import empty, zeros
from ...ops.shape import cat
from ...ops import tanh, sigmoid, relu
from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _reset_uniform(module):
    """PyTorch's RNN and RNN-cell initialisation: every parameter ~ U(-k, k), k = 1/sqrt(hidden)."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not (isinstance(dropout, (int, float)) and 0 <= dropout <= 1) or \
                isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        real_hidden = proj_size if proj_size > 0 else hidden_size
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(gate_size,), (gate_size,)]
                if proj_size > 0:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for n, s in zip(names, shapes):
                    setattr(self, n, Parameter(empty(s, dtype=dtype, device=device)))
                self._flat_weights_names.extend(names)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_uniform(self)

    def _per_direction(self):
        return (4 if self.bias else 2) + (1 if self.proj_size > 0 else 0)

    @property
    def all_weights(self):
        per = self._per_direction()
        return [[getattr(self, n) for n in self._flat_weights_names[i:i + per]]
                for i in range(0, len(self._flat_weights_names), per)]

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if getattr(self, "proj_size", 0) != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _cell(self, gi, h, c, w_hh, b_hh, w_hr=None):
        """One time step: gi is the precomputed input projection; w_hr: LSTM's projection."""
        gh = F.linear(h, w_hh, b_hh)   # (one op, as PyTorch's cells: autocast casts it whole)
        H = self.hidden_size
        if self.mode == "LSTM":
            g = gi + gh
            i, f = sigmoid(g[..., :H]), sigmoid(g[..., H:2 * H])
            gg, o = tanh(g[..., 2 * H:3 * H]), sigmoid(g[..., 3 * H:])
            c = f * c + i * gg
            h = o * tanh(c)
            return (h if w_hr is None else h.matmul(w_hr.t())), c
        if self.mode == "GRU":
            r = sigmoid(gi[..., :H] + gh[..., :H])
            z = sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
            n = tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])
            return (1 - z) * n + z * h, None
        act = tanh if self.mode == "RNN_TANH" else relu
        return act(gi + gh), None

    def _packed_step(self, gi, h, c, w_hh, b_hh, lengths, t, w_hr=None):
        """A time step of a packed batch: only the sequences longer than t (a prefix, as the
        batch is sorted longest first) advance; the others keep their state."""
        n = sum(1 for length in lengths if length > t)
        if n == len(lengths):
            return self._cell(gi, h, c, w_hh, b_hh, w_hr)
        h_new, c_new = self._cell(gi[:n], h[:n], None if c is None else c[:n], w_hh, b_hh, w_hr)
        h = cat([h_new, h[n:]], 0)
        return h, (None if c is None else cat([c_new, c[n:]], 0))

    def forward(self, input, hx=None):
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        packed = input if isinstance(input, PackedSequence) else None
        lengths = None
        if packed is not None:
            # run on the padded batch, longest first; step t updates only the first
            # batch_sizes[t] rows, so each sequence starts and stops at its own length
            input, lengths = pad_packed_sequence(PackedSequence(packed.data, packed.batch_sizes))
            lengths = lengths.tolist()
            if hx is not None and packed.sorted_indices is not None:
                idx = packed.sorted_indices
                hx = tuple(h.index_select(1, idx) for h in hx) if self.mode == "LSTM" \
                    else hx.index_select(1, idx)
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                             "instead")
        unbatched = input.ndim == 2
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first and packed is None:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        N = input.shape[1]
        D = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = zeros((self.num_layers * D, N, real_hidden), dtype=input.dtype,
                       device=input.device)
            c0 = zeros((self.num_layers * D, N, self.hidden_size), dtype=input.dtype,
                       device=input.device) \
                if is_lstm else None
        else:
            h0, c0 = hx if is_lstm else (hx, None)
            if unbatched:
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1) if c0 is not None else None
            expected = (self.num_layers * D, N, real_hidden)
            if tuple(h0.shape) != expected:
                raise RuntimeError(f"Expected hidden size {expected}, got {list(h0.shape)}")
            expected = (self.num_layers * D, N, self.hidden_size)
            if c0 is not None and tuple(c0.shape) != expected:
                raise RuntimeError(f"Expected hidden size {expected}, got {list(c0.shape)}")
        # the stacked run is torch.lstm's / gru's / rnn_tanh's (ndgrad.ops.rnn_math), on this
        # module's parameters in PyTorch's flat order, as nn.LSTM calls _VF.lstm
        from ...ops.rnn_math import _layers
        output, h_n, c_n = _layers(
            self.mode, input, h0, c0, [getattr(self, n) for n in self._flat_weights_names],
            self.bias, self.num_layers, self.dropout, self.training, self.bidirectional, lengths)
        if packed is not None:
            output = PackedSequence(pack_padded_sequence(output, lengths).data,
                                    packed.batch_sizes, packed.sorted_indices,
                                    packed.unsorted_indices)
            if packed.unsorted_indices is not None:
                h_n = h_n.index_select(1, packed.unsorted_indices)
                c_n = c_n.index_select(1, packed.unsorted_indices) if is_lstm else None
        elif unbatched:
            output = output.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1) if is_lstm else None
        elif self.batch_first:
            output = output.transpose(0, 1)
        return (output, (h_n, c_n)) if is_lstm else (output, h_n)


class RNN(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.__dict__["nonlinearity"] = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class RNNCellBase(Module):
    """The base of RNNCell, LSTMCell and GRUCell: weight_ih (num_chunks * hidden_size,
    input_size), weight_hh (num_chunks * hidden_size, hidden_size) and the two biases."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size),
                                         dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size),
                                         dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if getattr(self, "proj_size", 0) != 0:
            s += ", proj_size={proj_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        _reset_uniform(self)


class _CellBase(RNNCellBase):
    _mode = None

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        Module.__init__(self)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.nonlinearity = nonlinearity
        g = _GATES[self._mode] * hidden_size
        self.weight_ih = Parameter(empty((g, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(empty((g, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(g, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(g, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_uniform(self)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if getattr(self, "proj_size", 0) != 0:
            s += ", proj_size={proj_size}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def forward(self, input, hx=None):
        unb = input.ndim == 1
        if unb:
            input = input.unsqueeze(0)
        N = input.shape[0]
        mode = self._mode
        if mode == "RNN_TANH" and self.nonlinearity == "relu":
            mode = "RNN_RELU"
        if hx is None:
            z = zeros((N, self.hidden_size), dtype=input.dtype, device=input.device)
            hx = (z, z) if mode == "LSTM" else z
        elif unb:
            hx = tuple(h.unsqueeze(0) for h in hx) if mode == "LSTM" else hx.unsqueeze(0)
        h, c = (hx if mode == "LSTM" else (hx, None))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        cell = RNNBase.__new__(RNNBase)
        cell.__dict__.update(mode=mode, hidden_size=self.hidden_size)
        h, c = RNNBase._cell(cell, gi, h, c, self.weight_hh, self.bias_hh)
        if unb:
            h = h.squeeze(0)
            c = c.squeeze(0) if c is not None else None
        return (h, c) if mode == "LSTM" else h


class RNNCell(_CellBase):
    _mode = "RNN_TANH"


class LSTMCell(_CellBase):
    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, "tanh", device, dtype)


class GRUCell(_CellBase):
    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, "tanh", device, dtype)
