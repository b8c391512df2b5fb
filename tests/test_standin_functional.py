"""torch.nn.functional on the strict stand-in device (ndgrad.cuda._standin behind device "cuda").

The entries the op table does not cover (convolutions, pooling with indices and unpooling,
resampling, padding, embeddings, normalization, every loss, attention, ...) run on CPU tensors
and on "cuda" tensors of the stand-in, whose arrays refuse any implicit trip through NumPy: a
host fallback in a forward or a backward fails here. Each case checks that the results are on
cuda:0 and equal the CPU's (values, dtype, shape), and so are the input gradients and their
gradients (the backward formulas, run differentiably, on the device too). Random entries
(dropout in training, gumbel_softmax) are checked for device and shape only; in eval mode for
their values. Factories called inside a case land on the device through set_default_device,
as in a GPU program.
"""
import numpy as np
import pytest

import ndgrad
import ndgrad.nn.functional as F

pytestmark = pytest.mark.standin

R = np.random.default_rng(0)


def _r(*shape):
    return R.standard_normal(shape)


def _pos(*shape):
    return R.uniform(0.1, 1.0, shape)


def _ints(high, *shape):
    return R.integers(0, high, shape)


class Case:
    """fn(tensors) -> a tensor or a tuple of them; float arrays require grad unless listed in
    `fixed`; random: compare device and shape only."""

    def __init__(self, name, fn, *arrays, fixed=(), random=False, grad=True):
        self.name, self.fn, self.arrays = name, fn, arrays
        self.fixed, self.random, self.grad = set(fixed), random, grad

    def __repr__(self):
        return self.name


def _tensors(case, grad):
    out = []
    for i, a in enumerate(case.arrays):
        t = ndgrad.tensor(a.copy())
        if grad and case.grad and a.dtype.kind == "f" and i not in case.fixed:
            t.requires_grad_()
        out.append(t)
    return out


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out] if isinstance(out, ndgrad.Tensor) else []


def _attn_inputs():
    E, H, L, S, N = 4, 2, 3, 5, 2
    return (_r(L, N, E), _r(S, N, E), _r(S, N, E), _r(3 * E, E) * 0.5, _r(3 * E) * 0.1,
            _r(E, E) * 0.5, _r(E) * 0.1)


def _mha(t, **kw):
    q, k, v, w_in, b_in, w_out, b_out = t[:7]
    return F.multi_head_attention_forward(q, k, v, 4, 2, w_in, b_in, None, None, False, 0.0,
                                          w_out, b_out, **kw)


_SAMPLES_2D = np.array([[[0.3, 0.7], [0.1, 0.9]], [[0.5, 0.2], [0.8, 0.4]]])
_SAMPLES_3D = np.array([[[0.3, 0.7, 0.2], [0.1, 0.9, 0.5]]])
_LOG_PROBS = np.log(np.random.default_rng(1).dirichlet(np.ones(5), (6, 2)))

CASES = [
    # ---------------------------------------------------------------- convolutions, linear
    Case("conv1d", lambda t: F.conv1d(t[0], t[1], t[2], stride=2, padding=1),
         _r(2, 3, 8), _r(4, 3, 3), _r(4)),
    Case("conv1d_same_dilated", lambda t: F.conv1d(t[0], t[1], None, padding="same", dilation=2),
         _r(1, 2, 7), _r(3, 2, 3)),
    Case("conv2d_groups", lambda t: F.conv2d(t[0], t[1], t[2], padding=1, groups=2),
         _r(2, 4, 5, 5), _r(6, 2, 3, 3), _r(6)),
    Case("conv2d_strided_dilated", lambda t: F.conv2d(t[0], t[1], stride=(2, 1), dilation=2),
         _r(1, 2, 7, 6), _r(3, 2, 2, 2)),
    Case("conv3d", lambda t: F.conv3d(t[0], t[1], t[2], padding=1),
         _r(1, 2, 3, 4, 3), _r(3, 2, 2, 2, 2), _r(3)),
    Case("conv_transpose1d", lambda t: F.conv_transpose1d(t[0], t[1], t[2], stride=2,
                                                          output_padding=1),
         _r(2, 3, 4), _r(3, 2, 3), _r(2)),
    Case("conv_transpose2d_groups", lambda t: F.conv_transpose2d(t[0], t[1], t[2], stride=2,
                                                                 padding=1, groups=2),
         _r(1, 4, 3, 3), _r(4, 1, 3, 3), _r(2)),
    Case("conv_transpose3d", lambda t: F.conv_transpose3d(t[0], t[1], None, stride=(1, 2, 1)),
         _r(1, 2, 2, 3, 2), _r(2, 2, 2, 2, 2)),
    Case("linear", lambda t: F.linear(t[0], t[1], t[2]), _r(3, 4), _r(5, 4), _r(5)),
    Case("linear_nobias", lambda t: F.linear(t[0], t[1]), _r(2, 3, 4), _r(5, 4)),
    Case("bilinear", lambda t: F.bilinear(t[0], t[1], t[2], t[3]),
         _r(3, 2), _r(3, 4), _r(5, 2, 4), _r(5)),
    # ---------------------------------------------------------------- pooling
    Case("max_pool1d_indices", lambda t: F.max_pool1d(t[0], 3, 2, 1, return_indices=True),
         _r(2, 3, 9)),
    Case("max_pool2d_indices", lambda t: F.max_pool2d(t[0], 3, 2, 1, dilation=1, ceil_mode=True,
                                                      return_indices=True),
         _r(2, 2, 7, 6)),
    Case("max_pool2d_dilated", lambda t: F.max_pool2d(t[0], 2, 1, dilation=2), _r(1, 2, 6, 6)),
    Case("max_pool3d_indices", lambda t: F.max_pool3d(t[0], 2, return_indices=True),
         _r(1, 2, 4, 4, 4)),
    Case("max_unpool1d", lambda t: F.max_unpool1d(*F.max_pool1d(t[0], 2, return_indices=True), 2),
         _r(2, 2, 8)),
    Case("max_unpool2d", lambda t: F.max_unpool2d(*F.max_pool2d(t[0], 2, return_indices=True), 2,
                                                  output_size=(5, 5)),
         _r(1, 2, 5, 5)),
    Case("max_unpool3d", lambda t: F.max_unpool3d(*F.max_pool3d(t[0], 2, return_indices=True), 2),
         _r(1, 1, 4, 4, 4)),
    Case("avg_pool1d", lambda t: F.avg_pool1d(t[0], 3, 2, 1, ceil_mode=True,
                                              count_include_pad=False), _r(2, 3, 8)),
    Case("avg_pool2d", lambda t: F.avg_pool2d(t[0], 3, 2, 1), _r(2, 2, 7, 7)),
    Case("avg_pool2d_divisor", lambda t: F.avg_pool2d(t[0], 2, divisor_override=3),
         _r(1, 2, 4, 6)),
    Case("avg_pool3d_excl_pad", lambda t: F.avg_pool3d(t[0], 2, 1, 1, count_include_pad=False),
         _r(1, 2, 3, 3, 3)),
    Case("adaptive_avg_pool1d", lambda t: F.adaptive_avg_pool1d(t[0], 3), _r(2, 3, 7)),
    Case("adaptive_avg_pool2d", lambda t: F.adaptive_avg_pool2d(t[0], (3, 2)), _r(2, 2, 7, 5)),
    Case("adaptive_avg_pool3d", lambda t: F.adaptive_avg_pool3d(t[0], (2, 3, 2)),
         _r(1, 2, 5, 4, 3)),
    Case("adaptive_max_pool1d", lambda t: F.adaptive_max_pool1d(t[0], 3, return_indices=True),
         _r(2, 3, 7)),
    Case("adaptive_max_pool2d", lambda t: F.adaptive_max_pool2d(t[0], (3, 2), return_indices=True),
         _r(2, 2, 7, 5)),
    Case("adaptive_max_pool3d", lambda t: F.adaptive_max_pool3d(t[0], 2, return_indices=True),
         _r(1, 2, 5, 4, 3)),
    Case("lp_pool1d", lambda t: F.lp_pool1d(t[0], 2, 3, 2), _pos(2, 2, 7)),
    Case("lp_pool2d", lambda t: F.lp_pool2d(t[0], 3, 2), _pos(1, 2, 6, 5)),
    Case("lp_pool3d", lambda t: F.lp_pool3d(t[0], 2, 2), _pos(1, 2, 4, 4, 4)),
    Case("fractional_max_pool2d",
         lambda t: F.fractional_max_pool2d(t[0], 2, output_size=3, return_indices=True,
                                           _random_samples=t[1]),
         _r(2, 2, 6, 7), _SAMPLES_2D, fixed=(1,)),
    Case("fractional_max_pool3d",
         lambda t: F.fractional_max_pool3d(t[0], 2, output_ratio=0.5, return_indices=True,
                                           _random_samples=t[1]),
         _r(1, 2, 6, 6, 7), _SAMPLES_3D, fixed=(1,)),
    Case("fractional_max_pool2d_drawn", lambda t: F.fractional_max_pool2d(t[0], 2, output_size=3),
         _r(2, 2, 6, 7), random=True),
    # ---------------------------------------------------------------- resampling, padding
    Case("interpolate_nearest", lambda t: F.interpolate(t[0], size=(5, 3)), _r(1, 2, 3, 4)),
    Case("interpolate_nearest_exact", lambda t: F.interpolate(t[0], scale_factor=1.5,
                                                              mode="nearest-exact"),
         _r(1, 2, 3, 4)),
    Case("interpolate_linear", lambda t: F.interpolate(t[0], size=7, mode="linear"), _r(2, 2, 4)),
    Case("interpolate_bilinear_ac", lambda t: F.interpolate(t[0], size=(5, 6), mode="bilinear",
                                                            align_corners=True),
         _r(1, 2, 3, 4)),
    Case("interpolate_bilinear_scale", lambda t: F.interpolate(t[0], scale_factor=(2, 0.5),
                                                               mode="bilinear"),
         _r(1, 2, 3, 4)),
    Case("interpolate_bicubic", lambda t: F.interpolate(t[0], size=(5, 5), mode="bicubic"),
         _r(1, 1, 4, 3)),
    Case("interpolate_trilinear", lambda t: F.interpolate(t[0], size=(3, 4, 2), mode="trilinear"),
         _r(1, 1, 2, 3, 3)),
    Case("interpolate_area", lambda t: F.interpolate(t[0], size=(2, 3), mode="area"),
         _r(1, 2, 5, 7)),
    Case("interpolate_area_3d", lambda t: F.interpolate(t[0], size=(2, 3, 2), mode="area"),
         _r(1, 2, 5, 4, 3)),
    Case("upsample_nearest1d", lambda t: F.interpolate(t[0], scale_factor=2), _r(1, 2, 3)),
    Case("affine_grid_2d", lambda t: F.affine_grid(t[0], (2, 1, 3, 4), align_corners=False),
         _r(2, 2, 3)),
    Case("affine_grid_3d", lambda t: F.affine_grid(t[0], (1, 1, 2, 3, 2), align_corners=True),
         _r(1, 3, 4)),
    *[Case(f"grid_sample_{m}_{p}",
           lambda t, m=m, p=p: F.grid_sample(t[0], t[1], mode=m, padding_mode=p,
                                             align_corners=(p == "border")),
           _r(2, 2, 4, 5), R.uniform(-1.2, 1.2, (2, 3, 2, 2)), fixed=(1,) if m == "nearest" else ())
      for m in ("bilinear", "nearest", "bicubic") for p in ("zeros", "border", "reflection")],
    Case("pad_constant", lambda t: F.pad(t[0], (1, 2, 0, 1), value=0.5), _r(2, 3, 4)),
    Case("pad_constant_negative", lambda t: F.pad(t[0], (-1, 2, 1, -1)), _r(2, 3, 4)),
    Case("pad_reflect", lambda t: F.pad(t[0], (2, 1, 1, 2), mode="reflect"), _r(1, 2, 4, 4)),
    Case("pad_replicate", lambda t: F.pad(t[0], (2, 1, 1, 2, 1, 0), mode="replicate"),
         _r(1, 1, 2, 3, 3)),
    Case("pad_circular", lambda t: F.pad(t[0], (2, 1), mode="circular"), _r(2, 2, 4)),
    # ---------------------------------------------------------------- embeddings
    Case("embedding", lambda t: F.embedding(t[0], t[1], padding_idx=2),
         _ints(6, 3, 4), _r(6, 3)),
    Case("embedding_negative_padding_freq",
         lambda t: F.embedding(t[0], t[1], padding_idx=-1, scale_grad_by_freq=True),
         np.array([[0, 5, 1, 1], [5, 2, 1, 0]]), _r(6, 3)),
    Case("embedding_max_norm", lambda t: (F.embedding(t[0], t[1], max_norm=1.0), t[1]),
         _ints(6, 5), _r(6, 3) * 2, grad=False),
    Case("embedding_sparse", lambda t: F.embedding(t[0], t[1], padding_idx=0, sparse=True),
         np.array([0, 3, 3, 1]), _r(5, 2)),
    Case("embedding_bag_sum_weights",
         lambda t: F.embedding_bag(t[0], t[1], t[2], mode="sum", per_sample_weights=t[3]),
         _ints(6, 7), _r(6, 3), np.array([0, 2, 2, 5]), _r(7)),
    Case("embedding_bag_mean_2d", lambda t: F.embedding_bag(t[0], t[1], mode="mean",
                                                            padding_idx=1),
         np.array([[1, 2, 3], [1, 1, 0]]), _r(5, 3)),
    Case("embedding_bag_max_last",
         lambda t: F.embedding_bag(t[0], t[1], t[2], mode="max", include_last_offset=True),
         _ints(6, 7), _r(6, 3), np.array([0, 3, 3, 7])),
    Case("one_hot", lambda t: F.one_hot(t[0], 5), _ints(5, 2, 3)),
    # ---------------------------------------------------------------- dropout
    Case("dropout_train", lambda t: F.dropout(t[0], 0.4), _r(3, 4), random=True),
    Case("dropout_p1", lambda t: F.dropout(t[0], 1.0), _r(3, 4)),
    Case("dropout1d_train", lambda t: F.dropout1d(t[0], 0.5), _r(2, 3, 4), random=True),
    Case("dropout2d_train", lambda t: F.dropout2d(t[0], 0.5), _r(2, 3, 2, 2), random=True),
    Case("dropout3d_train", lambda t: F.dropout3d(t[0], 0.5), _r(2, 3, 2, 2, 2), random=True),
    Case("alpha_dropout_train", lambda t: F.alpha_dropout(t[0], 0.3, True), _r(3, 4),
         random=True),
    Case("feature_alpha_dropout_train", lambda t: F.feature_alpha_dropout(t[0], 0.3, True),
         _r(2, 3, 4), random=True),
    Case("rrelu_train", lambda t: F.rrelu(t[0], training=True), _r(3, 4), random=True),
    Case("dropout_family_eval", lambda t: (
        F.dropout(t[0], 0.4, training=False), F.dropout2d(t[0], 0.5, training=False),
        F.alpha_dropout(t[0], 0.3), F.feature_alpha_dropout(t[0], 0.3),
        F.rrelu(t[0]), F.dropout1d(t[0], 0.2, training=False)), _r(2, 3, 4)),
    # ---------------------------------------------------------------- normalization
    Case("batch_norm_train", lambda t: (F.batch_norm(t[0], t[3], t[4], t[1], t[2], True, 0.2),
                                        t[3], t[4]),
         _r(4, 3, 2), _r(3), _r(3), _r(3), _pos(3), fixed=(3, 4)),
    Case("batch_norm_eval", lambda t: F.batch_norm(t[0], t[3], t[4], t[1], t[2]),
         _r(4, 3, 2, 2), _r(3), _r(3), _r(3), _pos(3), fixed=(3, 4)),
    Case("layer_norm", lambda t: F.layer_norm(t[0], (3, 4), t[1], t[2]),
         _r(2, 3, 4), _r(3, 4), _r(3, 4)),
    Case("group_norm", lambda t: F.group_norm(t[0], 2, t[1], t[2]), _r(2, 4, 3), _r(4), _r(4)),
    Case("instance_norm", lambda t: F.instance_norm(t[0], weight=t[1], bias=t[2]),
         _r(2, 3, 5), _r(3), _r(3)),
    Case("instance_norm_running", lambda t: (F.instance_norm(t[0], t[1], t[2],
                                                             use_input_stats=True), t[1], t[2]),
         _r(2, 3, 5), _r(3), _pos(3), fixed=(1, 2)),
    Case("local_response_norm", lambda t: F.local_response_norm(t[0], 3), _r(2, 5, 3, 2)),
    Case("rms_norm", lambda t: F.rms_norm(t[0], (4,), t[1]), _r(2, 3, 4), _r(4)),
    Case("normalize", lambda t: F.normalize(t[0], p=3.0, dim=1), _r(3, 4)),
    # ---------------------------------------------------------------- losses
    Case("mse_l1_smooth_huber", lambda t: (
        F.mse_loss(t[0], t[1]), F.l1_loss(t[0], t[1], reduction="sum"),
        F.smooth_l1_loss(t[0], t[1], reduction="none", beta=0.5),
        F.huber_loss(t[0], t[1], delta=0.7), F.mse_loss(t[0], t[1], weight=t[2])),
        _r(3, 4), _r(3, 4), _pos(3, 4)),
    Case("soft_margin_loss", lambda t: F.soft_margin_loss(t[0], t[1]), _r(3, 4),
         np.sign(_r(3, 4)), fixed=(1,)),
    Case("cross_entropy", lambda t: F.cross_entropy(t[0], t[1]), _r(4, 5), _ints(5, 4)),
    Case("cross_entropy_weight_ignore_smooth",
         lambda t: F.cross_entropy(t[0], t[1], weight=t[2], ignore_index=1, label_smoothing=0.2),
         _r(6, 4), np.array([0, 1, 3, 2, 1, 3]), _pos(4)),
    Case("cross_entropy_spatial_none",
         lambda t: F.cross_entropy(t[0], t[1], reduction="none", label_smoothing=0.1),
         _r(2, 3, 4), _ints(3, 2, 4)),
    Case("cross_entropy_probs", lambda t: F.cross_entropy(t[0], t[1].softmax(1), weight=t[2],
                                                          label_smoothing=0.3),
         _r(4, 3), _r(4, 3), _pos(3), fixed=(1,)),
    Case("cross_entropy_all_ignored", lambda t: F.cross_entropy(t[0], t[1], ignore_index=2),
         _r(2, 3), np.array([2, 2])),
    Case("nll_loss", lambda t: F.nll_loss(t[0].log_softmax(1), t[1], weight=t[2],
                                          ignore_index=0, reduction="sum"),
         _r(5, 4), _ints(4, 5), _pos(4)),
    Case("nll_loss_2d", lambda t: F.nll_loss(t[0], t[1]), _r(2, 3, 2, 2), _ints(3, 2, 2, 2)),
    Case("binary_cross_entropy", lambda t: (
        F.binary_cross_entropy(t[0].sigmoid(), t[1], weight=t[2]),
        F.binary_cross_entropy_with_logits(t[0], t[1], pos_weight=t[3], reduction="none")),
        _r(3, 4), R.uniform(0, 1, (3, 4)), _pos(3, 4), _pos(4), fixed=(1,)),
    Case("kl_div", lambda t: (F.kl_div(t[0].log_softmax(1), t[1].softmax(1),
                                       reduction="batchmean"),
                              F.kl_div(t[0], t[1], reduction="sum", log_target=True)),
         _r(3, 4), _r(3, 4)),
    Case("poisson_gaussian_nll", lambda t: (
        F.poisson_nll_loss(t[0], t[1]), F.poisson_nll_loss(t[0].exp(), t[1], log_input=False,
                                                           full=True),
        F.gaussian_nll_loss(t[0], t[1], t[2], full=True)),
        _r(3, 4), _pos(3, 4) * 3, _pos(3, 4)),
    Case("margin_losses", lambda t: (
        F.hinge_embedding_loss(t[0], t[3]), F.margin_ranking_loss(t[0], t[1], t[3], margin=0.1),
        F.cosine_embedding_loss(t[0], t[1], t[3][:, 0], margin=0.2),
        F.triplet_margin_loss(t[0], t[1], t[2], swap=True),
        F.triplet_margin_with_distance_loss(t[0], t[1], t[2], swap=True)),
        _r(3, 4), _r(3, 4), _r(3, 4), np.sign(_r(3, 4)), fixed=(3,)),
    Case("multilabel_losses", lambda t: (
        F.multilabel_margin_loss(t[0], t[1]), F.multilabel_soft_margin_loss(t[0], t[2],
                                                                            weight=t[3])),
        _r(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]]),
        R.integers(0, 2, (3, 4)).astype(float), _pos(4), fixed=(2,)),
    Case("multi_margin_loss", lambda t: (F.multi_margin_loss(t[0], t[1]),
                                         F.multi_margin_loss(t[0], t[1], p=2, margin=0.5,
                                                             weight=t[2], reduction="none")),
         _r(4, 3), _ints(3, 4), _pos(3), fixed=(2,)),
    Case("ctc_loss", lambda t: F.ctc_loss(t[0], t[1], t[2], t[3]),
         _LOG_PROBS, np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2])),
    Case("ctc_loss_concat_sum", lambda t: F.ctc_loss(t[0], t[1], (6, 6), (2, 0), blank=4,
                                                     reduction="sum", zero_infinity=True),
         _LOG_PROBS, np.array([1, 1])),
    # ---------------------------------------------------------------- softmax, attention
    Case("softmax_family", lambda t: (F.softmax(t[0], 1), F.log_softmax(t[0], 0),
                                      F.softmin(t[0], -1)), _r(3, 4)),
    Case("gumbel_softmax", lambda t: F.gumbel_softmax(t[0], tau=0.5), _r(3, 4), random=True),
    Case("gumbel_softmax_hard", lambda t: F.gumbel_softmax(t[0], hard=True), _r(3, 4),
         random=True),
    Case("sdpa", lambda t: F.scaled_dot_product_attention(t[0], t[1], t[2]),
         _r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 3)),
    Case("sdpa_causal_scale", lambda t: F.scaled_dot_product_attention(
        t[0], t[1], t[2], is_causal=True, scale=0.3), _r(2, 4, 4), _r(2, 4, 4), _r(2, 4, 3)),
    Case("sdpa_masks", lambda t: (
        F.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t[3] > 0.3),
        F.scaled_dot_product_attention(t[0], t[1], t[2], attn_mask=t[3])),
        _r(2, 3, 4), _r(2, 5, 4), _r(2, 5, 3), _r(3, 5) + 1.0, fixed=(3,)),
    Case("mha_forward", lambda t: _mha(t), *_attn_inputs()),
    Case("mha_forward_masks", lambda t: _mha(t, key_padding_mask=t[7] > 0.8,
                                             attn_mask=t[8], average_attn_weights=False),
         *_attn_inputs(), np.array([[0.0, 0, 0, 0, 1], [0, 0, 1, 0, 0]]), _r(3, 5),
         fixed=(7, 8)),
    Case("mha_forward_causal", lambda t: _mha(t, attn_mask=t[7] > 0.5, is_causal=True,
                                              need_weights=False),
         *_attn_inputs(), np.triu(np.ones((3, 5)), 1), fixed=(7,)),
    Case("activations_more", lambda t: (
        F.glu(t[0], 1), F.hardshrink(t[0], 0.3), F.softshrink(t[0], 0.3), F.prelu(t[0], t[1])),
        _r(3, 4), _pos(4)),
    Case("activations_inplace", lambda t: (
        F.relu_(t[0] * 1), F.elu_(t[0] * 1), F.celu_(t[0] * 1), F.selu_(t[0] * 1),
        F.leaky_relu_(t[0] * 1, 0.2), F.hardtanh_(t[0] * 1), F.threshold_(t[0] * 1, 0.1, 2.0),
        F.rrelu_(t[0] * 1)), _r(3, 4)),
    Case("linear_cross_entropy", lambda t: F.linear_cross_entropy(t[0], t[1], t[2],
                                                                  label_smoothing=0.1),
         _r(4, 3), _r(5, 3), _ints(5, 4)),
    Case("grouped_mm", lambda t: F.grouped_mm(t[0].float(), t[1].float(),
                                              offs=ndgrad.tensor([2, 5], dtype=ndgrad.int32)),
         _r(6, 3), _r(2, 3, 4)),
    Case("with_indices_variants", lambda t: (
        F.max_pool1d_with_indices(t[0][0], 2), F.max_pool2d_with_indices(t[0], 2),
        F.adaptive_max_pool1d_with_indices(t[0][0], 3),
        F.adaptive_max_pool2d_with_indices(t[0], 3),
        F.fractional_max_pool2d_with_indices(t[0], 2, output_size=2,
                                             _random_samples=t[1][:1, :2]),
        F.native_channel_shuffle(t[0], 2)), _r(1, 2, 4, 5), _SAMPLES_2D, fixed=(1,)),
    # ---------------------------------------------------------------- shape and distances
    Case("unfold", lambda t: F.unfold(t[0], (2, 3), dilation=1, padding=1, stride=2),
         _r(2, 2, 5, 6)),
    Case("fold", lambda t: F.fold(t[0], (4, 5), 2, padding=1), _r(2, 8, 30)),
    Case("pixel_shuffle", lambda t: (F.pixel_shuffle(t[0], 2), F.pixel_unshuffle(t[0], 1)),
         _r(1, 8, 2, 3)),
    Case("pixel_unshuffle", lambda t: F.pixel_unshuffle(t[0], 2), _r(1, 2, 4, 6)),
    Case("cosine_similarity", lambda t: F.cosine_similarity(t[0], t[1], dim=1),
         _r(3, 4), _r(1, 4)),
    Case("pairwise_distance", lambda t: F.pairwise_distance(t[0], t[1], p=3, keepdim=True),
         _r(3, 4), _r(3, 4)),
    Case("pdist", lambda t: (F.pdist(t[0]), F.pdist(t[0], 1.5)), _r(4, 3)),
    Case("cdist", lambda t: (ndgrad.cdist(t[0], t[1]), ndgrad.cdist(t[0], t[1], p=1)),
         _r(2, 3, 4), _r(2, 5, 4)),
]


@pytest.fixture
def on_device(standin):   # (conftest.py)
    ndgrad.set_default_device("cuda")
    yield "cuda"


def _run(case, device, grad):
    ndgrad.set_default_device(device)
    ndgrad.manual_seed(0)
    leaves = _tensors(case, grad)
    return case.fn(leaves), leaves


def _same(ours, ref, what, values=True):
    if ours.layout != ndgrad.strided:   # a sparse COO tensor: its parts (same order)
        assert ours.layout == ref.layout and ours.shape == ref.shape, what
        _same(ours._indices(), ref._indices(), f"{what} (indices)", values)
        _same(ours._values(), ref._values(), f"{what} (values)", values)
        return
    assert ours.device == ndgrad.device("cuda", 0), f"{what}: on {ours.device}"
    assert ours.dtype == ref.dtype and ours.shape == ref.shape, what
    if not values:
        return
    o, r = ours.detach().cpu().numpy(), ref.detach().numpy()
    if r.dtype.kind in "fc":
        np.testing.assert_allclose(o, r, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(o, r, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_functional_on_device(case, on_device):
    ref, ref_leaves = _run(case, None, True)
    ours, leaves = _run(case, on_device, True)
    assert all(t.device.type == "cuda" for t in leaves)
    refs, outs = _flat(ref), _flat(ours)
    assert refs and len(outs) == len(refs), case.name
    for k, (o, r) in enumerate(zip(outs, refs)):
        _same(o, r, f"{case.name}[{k}]", values=not case.random)
    diff = [i for i, t in enumerate(leaves) if t.requires_grad]
    used = [k for k, o in enumerate(outs) if o.requires_grad]
    if not diff or not used:
        return
    gs = [np.random.default_rng(k).standard_normal(tuple(outs[k].shape)) for k in used]
    grads = []
    for res, ls in ((refs, ref_leaves), (outs, leaves)):
        ndgrad.set_default_device(None if ls is ref_leaves else on_device)
        loss = sum((res[k] * ndgrad.tensor(g, dtype=res[k].dtype)).sum()
                   for k, g in zip(used, gs))
        grads.append(ndgrad.autograd.grad(loss, [ls[i] for i in diff], allow_unused=True))
    for i, o, r in zip(diff, grads[1], grads[0]):
        if r is None:
            assert o is None, f"{case.name}: gradient of input {i}"
            continue
        _same(o, r, f"{case.name}: gradient of input {i}", values=not case.random)


def test_cases_cover_the_functional_entries():
    """Every entry named in the module docstring's list has a case (a typo cannot drop one)."""
    names = " ".join(c.name for c in CASES)
    for entry in ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
                  "linear bilinear max_pool1d max_pool2d max_pool3d max_unpool1d max_unpool2d "
                  "max_unpool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d "
                  "adaptive_max_pool2d lp_pool1d lp_pool3d fractional_max_pool2d interpolate "
                  "grid_sample affine_grid pad_reflect pad_circular embedding_bag one_hot "
                  "dropout batch_norm layer_norm group_norm instance_norm local_response_norm "
                  "cross_entropy nll_loss ctc_loss gumbel_softmax sdpa mha_forward unfold fold "
                  "pixel_shuffle normalize cosine_similarity pdist cdist").split():
        assert entry in names, entry


def _grads_of_grads(case, device):
    """The input gradients, and the gradients of (their sum against fixed weights), on `device`:
    the backward formulas run (differentiably) on the device too."""
    out, leaves = _run(case, device, True)
    outs = [o for o in _flat(out) if o.requires_grad]
    diff = [t for t in leaves if t.requires_grad]
    if not outs or not diff:
        pytest.skip("nothing differentiable")
    gs = [np.random.default_rng(k).standard_normal(tuple(o.shape)) for k, o in enumerate(outs)]
    loss = sum((o * ndgrad.tensor(g, dtype=o.dtype)).sum() for o, g in zip(outs, gs))
    g1 = ndgrad.autograd.grad(loss, diff, create_graph=True, allow_unused=True)
    used = [(t, g) for t, g in zip(diff, g1) if g is not None and g.requires_grad]
    if not used:
        return list(g1), []
    vs = [np.random.default_rng(10 + k).standard_normal(tuple(g.shape))
          for k, (_, g) in enumerate(used)]
    total = sum((g * ndgrad.tensor(v, dtype=g.dtype)).sum() for (_, g), v in zip(used, vs))
    return list(g1), list(ndgrad.autograd.grad(total, diff, allow_unused=True))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad and not c.random], ids=repr)
def test_double_backward_on_device(case, on_device):
    ref1, ref2 = _grads_of_grads(case, None)
    ours1, ours2 = _grads_of_grads(case, on_device)
    assert len(ours2) == len(ref2)
    for k, (o, r) in enumerate(zip(ours1 + ours2, ref1 + ref2)):
        if r is None:
            assert o is None, f"{case.name}: gradient {k}"
            continue
        _same(o, r, f"{case.name}: gradient {k}")


ERRORS = [
    ("embedding_out_of_range", lambda: F.embedding(ndgrad.tensor([0, 6]), ndgrad.randn(6, 2))),
    ("nll_loss_target_out_of_bounds", lambda: F.nll_loss(ndgrad.randn(2, 3),
                                                        ndgrad.tensor([0, 3]))),
    ("cross_entropy_target_out_of_bounds", lambda: F.cross_entropy(ndgrad.randn(2, 3),
                                                                  ndgrad.tensor([-2, 1]))),
    ("multilabel_target_out_of_range", lambda: F.multilabel_margin_loss(
        ndgrad.randn(2, 3), ndgrad.tensor([[0, 3, -1], [1, -1, 0]]))),
    ("multi_margin_target_out_of_range", lambda: F.multi_margin_loss(ndgrad.randn(2, 3),
                                                                    ndgrad.tensor([0, 3]))),
    ("binary_cross_entropy_input_range", lambda: F.binary_cross_entropy(
        ndgrad.tensor([0.5, 1.5]), ndgrad.tensor([0.0, 1.0]))),
    ("max_unpool_invalid_index", lambda: F.max_unpool1d(
        ndgrad.randn(1, 1, 2), ndgrad.tensor([[[0, 9]]]), 2)),
    ("embedding_bag_first_offset", lambda: F.embedding_bag(
        ndgrad.tensor([0, 1, 2]), ndgrad.randn(3, 2), ndgrad.tensor([1, 2]))),
    ("ctc_input_lengths", lambda: F.ctc_loss(ndgrad.randn(3, 1, 4).log_softmax(2),
                                             ndgrad.tensor([[1, 2]]), (4,), (2,))),
]


@pytest.mark.parametrize("name,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_on_device(name, call, on_device):
    """Checks that read values (indices, targets, offsets) raise PyTorch's error on the device
    too, not a refused host conversion."""
    errors = []
    for device in (None, on_device):
        ndgrad.set_default_device(device)
        with pytest.raises(Exception) as info:
            call()
        errors.append(info.value)
    cpu, dev = errors
    assert type(dev) is type(cpu) and str(dev) == str(cpu), f"{name}: {dev!r} vs {cpu!r}"
    assert not isinstance(cpu, TypeError), f"{name}: {cpu!r}"
