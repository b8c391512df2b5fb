"""Op table: 3-d convolution and pooling, fractional max pooling and the other nn.functional
extras (tests/test_op_db.py runs forward/gradients vs PyTorch, gradcheck and gradgradcheck).
Shapes are small so that the second-order checks stay fast."""
import numpy as np

from op_db import OpCase, register

_U2 = np.random.default_rng(7).random((2, 2, 2))   # fractional pooling's window samples
_U3 = np.random.default_rng(8).random((2, 2, 3))


def F(name, **fixed):
    """lib.nn.functional.<name>(*tensors, **fixed, **kw)."""
    return lambda L, *a, **k: getattr(L.nn.functional, name)(*a, **fixed, **k)


def _frac(nd, **fixed):
    def call(L, x, **k):
        u = L.tensor(_U2 if nd == 2 else _U3, dtype=x.dtype)
        if x.ndim == nd + 1:
            u = u[:1]
        fn = L.nn.functional.fractional_max_pool2d if nd == 2 else \
            L.nn.functional.fractional_max_pool3d
        return fn(x, **fixed, **k, _random_samples=u)
    return call


def _unpool3d(L, x):
    v, i = L.nn.functional.max_pool3d(x, 2, return_indices=True)
    return L.nn.functional.max_unpool3d(v * 2, i, 2, output_size=x.shape[-3:])


def _distinct(rng, shapes):
    """A permutation of spaced values: no ties, so max pooling is differentiable."""
    out = []
    for s in shapes:
        n = int(np.prod(s))
        out.append((rng.permutation(n) * 0.1 - n * 0.05).reshape(s) if n else np.zeros(s))
    return out


register(
    OpCase("conv3d", [((2, 2, 4, 3, 3), (3, 2, 2, 2, 2), (3,)), ((2, 4, 3, 3), (2, 2, 1, 2, 2),
                                                              (2,))],
           fn=F("conv3d"), noncontig=False),
    OpCase("conv3d_strided", [((1, 2, 5, 4, 4), (4, 1, 2, 2, 1))],
           kwargs=[dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
                   dict(padding="same", dilation=(2, 1, 1), groups=2)],
           fn=F("conv3d"), noncontig=False),
    OpCase("conv_transpose3d", [((2, 2, 3, 2, 3), (2, 3, 2, 2, 2), (3,)),
                                ((2, 2, 2, 3), (2, 1, 2, 1, 2), (1,))],
           fn=F("conv_transpose3d"), noncontig=False),
    OpCase("conv_transpose3d_strided", [((1, 4, 2, 3, 2), (4, 1, 2, 2, 1))],
           kwargs=[dict(stride=(2, 1, 2), padding=(1, 0, 0), output_padding=(1, 0, 1),
                        groups=2, dilation=(1, 2, 1))],
           fn=F("conv_transpose3d"), noncontig=False),
    OpCase("conv_transpose1d_generic", [((2, 3, 4), (3, 2, 3))],
           kwargs=[dict(stride=2, padding=1, output_padding=1)], fn=F("conv_transpose1d"),
           noncontig=False),
    OpCase("max_pool3d", [((2, 2, 4, 4, 5),), ((2, 3, 4, 4),)],
           kwargs=[dict(kernel_size=2), dict(kernel_size=(2, 3, 2), stride=1, padding=1,
                                             dilation=(1, 1, 2), ceil_mode=True)],
           fn=F("max_pool3d"), make_inputs=_distinct, noncontig=False),
    OpCase("max_pool3d_indices", [((1, 2, 4, 4, 4),)], kwargs=[dict(kernel_size=3, stride=2,
                                                                   padding=1)],
           fn=F("max_pool3d", return_indices=True), make_inputs=_distinct, noncontig=False),
    OpCase("avg_pool3d", [((2, 2, 4, 4, 5),), ((2, 3, 4, 4),)],
           kwargs=[dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                   dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                   dict(kernel_size=2, divisor_override=3)],
           fn=F("avg_pool3d"), noncontig=False),
    OpCase("adaptive_avg_pool3d", [((2, 2, 5, 4, 6),), ((2, 5, 3, 4),)],
           kwargs=[dict(output_size=(2, 3, 4)), dict(output_size=(None, 2, 3)),
                   dict(output_size=1)],
           fn=F("adaptive_avg_pool3d"), noncontig=False),
    OpCase("adaptive_max_pool3d", [((2, 2, 5, 4, 6),), ((2, 5, 3, 4),)],
           kwargs=[dict(output_size=(2, 3, 4)), dict(output_size=(3, None, 2))],
           fn=F("adaptive_max_pool3d", return_indices=True), make_inputs=_distinct,
           noncontig=False),
    OpCase("lp_pool3d", [((2, 2, 4, 4, 4),)], kwargs=[dict(norm_type=2, kernel_size=2),
                                                     dict(norm_type=3, kernel_size=(2, 3, 2),
                                                          stride=1)],
           fn=F("lp_pool3d"), domain=(0.5, 2.0), noncontig=False),
    OpCase("max_unpool3d", [((2, 2, 4, 4, 4),)], fn=_unpool3d, make_inputs=_distinct,
           noncontig=False),
    OpCase("fractional_max_pool2d", [((2, 2, 7, 6),), ((2, 7, 6),)],
           kwargs=[dict(kernel_size=(2, 3), output_size=(3, 2)),
                   dict(kernel_size=2, output_ratio=(0.5, 0.7))],
           fn=_frac(2, return_indices=True), make_inputs=_distinct, noncontig=False),
    OpCase("fractional_max_pool3d", [((2, 2, 5, 6, 5),)],
           kwargs=[dict(kernel_size=(2, 3, 2), output_size=(3, 2, 3)),
                   dict(kernel_size=2, output_ratio=0.5)],
           fn=_frac(3, return_indices=True), make_inputs=_distinct, noncontig=False),
    OpCase("channel_shuffle", [((2, 6, 3),), ((1, 4, 2, 2),)], kwargs=[dict(groups=2)],
           fn=F("channel_shuffle"), noncontig=False),
    OpCase("conv_tbc", [((5, 2, 3), (3, 3, 4), (4,))], kwargs=[dict(pad=0), dict(pad=1)],
           fn=F("conv_tbc"), noncontig=False),
    OpCase("pdist", [((5, 3),), ((1, 3),)], kwargs=[dict(), dict(p=1.5), dict(p=1)],
           fn=F("pdist"), noncontig=False),
    OpCase("pdist_inf", [((4, 3),)], kwargs=[dict(p=float("inf"))], fn=F("pdist"),
           noncontig=False),
    OpCase("pdist_inf_ties", [((4, 3),)], kwargs=[dict(p=float("inf"))], fn=F("pdist"),
           make_inputs=_distinct, gradcheck=False, noncontig=False),   # PyTorch's tie rule
    OpCase("cross_map_lrn2d", [((2, 5, 3, 2),), ((1, 9, 2, 2),)],
           kwargs=[dict(size=3), dict(size=4), dict(size=8)],
           fn=lambda L, x, size: L.nn.CrossMapLRN2d(size, 0.1, 0.75, 1.5)(x),
           gradcheck=False, noncontig=False),  # PyTorch's backward is its legacy formula
)
