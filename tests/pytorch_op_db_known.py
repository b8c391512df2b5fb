"""The disagreements with PyTorch's OpInfo database that stay, each with its reason
(tests/test_pytorch_op_db.py fails on any other, and on an entry here that no longer happens).

KNOWN: (op variant, kind) -> reason, the variant "<OpInfo>.<function|method|inplace|grad|errors>"
and the kind one of pytorch_op_db.KINDS. MISSING: OpInfo -> why ndgrad has no such name (any of
its variants may report it).
"""

# ------------------------------------------------------------------ where PyTorch is wrong

_TRIANGLE = ("PyTorch's gradient has entries for the triangle that the forward never reads "
             "(L's upper part): it is not the derivative of the function it computes, and its "
             "own OpInfo gradchecks through gradcheck_wrapper_triangular_input, which zeroes "
             "them; ndgrad gives the derivative (zero there) and agrees on the read triangle")
_SCATTER_SELF = ("PyTorch's as_strided_scatter_backward gives self the gradient of the "
                 "overwritten positions and zero elsewhere, the complement of the derivative "
                 "(torch.autograd.gradcheck fails on it); ndgrad's passes gradcheck")
_FLOAT32 = ("float32 accuracy: PyTorch's float32 kernel is further from the exact value than "
            "ndgrad's, which computes in double and rounds once")

PYTORCH_WRONG = {
    ("cholesky_inverse.grad", "grad"): _TRIANGLE,
    ("cholesky_solve.grad", "grad"): _TRIANGLE,
    ("as_strided_scatter.grad", "grad"): _SCATTER_SELF,
    ("special.bessel_j0.function", "value"):
        "PyTorch's Cephes-based j0 is off by 1.9e-7 near its zeros (x = -5.4215: "
        "-0.0337815018 vs SciPy's -0.0337813128, which ndgrad matches to 1e-16)",
    ("special.bessel_y1.function", "value"):
        "PyTorch's y1 is off by 3.2e-7 near its zeros (x = 5.5761: -0.0489863143 vs SciPy's "
        "-0.0489859933, which ndgrad matches to 1e-16)",
    ("polygamma.polygamma_n_0.function", "value"):
        _FLOAT32 + " (polygamma(1, -3.973): PyTorch 1377.0603, SciPy 1377.0506, ndgrad 1377.0507)",
    ("polygamma.polygamma_n_0.method", "value"): _FLOAT32 + " (as polygamma.function)",
    ("polygamma.polygamma_n_0.inplace", "value"): _FLOAT32 + " (as polygamma.function)",
    ("special.polygamma.special_polygamma_n_0.function", "value"):
        _FLOAT32 + " (as polygamma.function)",
    ("special.hermite_polynomial_he.function", "value"):
        _FLOAT32 + " (He_n at x = 8.397: PyTorch 1.5919496e7, ndgrad 1.5919497e7, the double "
        "recurrence 15919497.1)",
    ("histogram.function", "value"):
        _FLOAT32 + " (a float32 sum of 125 weights: PyTorch 2.2641973, ndgrad 2.2641835, the "
        "double sum 2.2641834)",
    ("histogram.method", "value"): _FLOAT32 + " (as histogram.function)",
    ("matrix_exp.function", "value"):
        _FLOAT32 + " (against SciPy's expm: PyTorch's largest error 0.050, ndgrad's 0.0018, for "
        "entries up to 9.3e4)",
    ("matrix_exp.method", "value"): _FLOAT32 + " (as matrix_exp.function)",
    ("addbmm.inplace", "error"):
        "PyTorch's addbmm_ resizes a broadcastable self (shape [1] becomes [5, 10]); every "
        "other in-place op refuses to change self's shape ('output with shape [1] doesn't "
        "match the broadcast shape'), as ndgrad does here too",
}

# ------------------------------------------------------------------ deliberate differences

_UNBOUND = ("an unbound Tensor operator called with a Number as self (Tensor.__radd__(2, t)): "
            "PyTorch's C descriptor checks self's type; ndgrad's operators are Python functions, "
            "and a type check would cost every operator call (bench W1)")

DELIBERATE = {
    ("__radd__.errors", "no-error"): _UNBOUND,
    ("__rmul__.errors", "no-error"): _UNBOUND,
    ("__rand__.errors", "no-error"): _UNBOUND,
    ("__ror__.errors", "no-error"): _UNBOUND,
    ("__rxor__.errors", "no-error"): _UNBOUND,
}

# ------------------------------------------------------------------ what NumPy cannot hold

_CHALF = ("complex32 (chalf): NumPy has no complex32 type, so ndgrad has no such tensors and "
          "Tensor.chalf() raises a clear TypeError (README's dtype row)")

NOT_REPRESENTABLE = {
    ("chalf.function", "error"): _CHALF,
    ("chalf.method", "error"): _CHALF,
    ("chalf.grad", "error"): _CHALF,
}

# ------------------------------------------------------------------ names ndgrad lacks

_PRIVATE = ("a private ATen entry point (torch.ops.aten.* or torch._*), outside PyTorch's public "
            "API; ndgrad provides the public operations built on it")

MISSING = {name: _PRIVATE for name in (
    "_batch_norm_with_update", "_chunk_cat", "_native_batch_norm_legit",
    "_segment_reduce.lengths", "_segment_reduce.offsets", "_softmax_backward_data",
    "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
    "max_pool2d_with_indices_backward", "native_dropout_backward", "slice",
    "torch.ops.aten._safe_softmax.default",
)}

# ------------------------------------------------------------------ not yet fixed in ndgrad
# Each an ndgrad disagreement still to fix; the report says which and why they are left.

OPEN = {}

KNOWN = {**PYTORCH_WRONG, **DELIBERATE, **NOT_REPRESENTABLE, **OPEN}
