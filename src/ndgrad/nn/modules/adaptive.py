"""AdaptiveLogSoftmaxWithLoss: Grave et al.'s adaptive softmax for large vocabularies.

The head scores the `cutoffs[0]` frequent classes plus one logit per tail cluster; a target in
cluster i gets log p(cluster i) + log p(class | cluster i), the second term from a low-rank
projection (in_features -> in_features // div_value**(i+1) -> cluster size).
"""
from collections import namedtuple

import numpy as _np

from ..._backend import to_numpy, xp_of
from .module import Module
from .container import ModuleList, Sequential
from .linear import Linear
from .. import functional as F
from ..._tensor import _make
from ...ops import cat

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype, device=device)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False,
                                               dtype=dtype, device=device),
                                        Linear(hsz, osz, bias=False, dtype=dtype, device=device)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        td = target_.ndim
        if td == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        elif td == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = td > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        # the rows of each cluster (data-dependent sizes) are found on the host, and each index
        # array moved to the input's device once
        xp = xp_of(input._data)
        on = lambda a: _make(xp.asarray(a))  # noqa: E731
        t = to_numpy(target._data).astype(_np.int64)  # host: data-dependent cluster rows
        n = t.shape[0]
        bounds = [0] + self.cutoffs
        head_index = t.copy()            # the head column each row reads
        covered = _np.zeros(n, dtype=bool)  # host: cluster rows
        parts, order = [], []            # per-cluster in-cluster log-probs and their rows
        for i in range(len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1]
            inside = (t >= lo) & (t < hi)
            rows = _np.nonzero(inside)[0]  # host: cluster rows
            if rows.size == 0:
                continue
            covered |= inside
            if i == 0:
                continue
            head_index[rows] = self.shortlist_size + i - 1
            logp = F.log_softmax(self.tail[i - 1](input[on(rows)]), dim=1)
            parts.append(logp.gather(1, on((t[rows] - lo)[:, None])).squeeze(1))
            order.append(rows)
        if not covered.all():
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{t.min()}, {t.max()}] were found. ")
        head_logp = F.log_softmax(self.head(input), dim=1)
        output = head_logp.gather(1, on(head_index[:, None])).squeeze(1)
        if parts:  # add each row's in-cluster term, put back in row order
            rows = _np.concatenate(order)  # host: cluster rows
            tail = input.new_zeros(n).index_add(0, on(rows), cat(parts))
            output = output + tail
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logp = F.log_softmax(head_output, dim=1)
        pieces = [head_logp[:, :self.shortlist_size]]
        for i, (lo, hi) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return cat(pieces, 1)

    def log_prob(self, input):
        """log p(c | input) for every class c: (N, n_classes), or (n_classes,) unbatched."""
        batched = input.ndim > 1
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class per row: log_prob(input).argmax(dim=1)."""
        return self.log_prob(input).argmax(dim=-1 if input.ndim == 1 else 1)
