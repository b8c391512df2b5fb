"""Ops over a list of n tensors do work linear in n, forward and backward (issue 15).

The work is counted, not timed: the number of Python function calls (generator steps
included) made by the op and its backward, for n and for 4n inputs. A per-input loop over
all inputs (quadratic) makes the count grow ~16x; linear work grows ~4x."""
import sys

import pytest

import ndgrad
from ndgrad.ops import shape as _shape

N = 131   # unusual arities, so no other test has built (and cached) their ops
RATIO = 4.6


def _count_calls(fn):
    n = [0]

    def prof(frame, event, arg):
        if event == "call" or event == "c_call":
            n[0] += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n[0]


def _leaves(n, shape=(2,)):
    return [ndgrad.full(shape, float(i), requires_grad=True) for i in range(n)]


def _forget_ops(n):
    for cache in (_shape._CAT_OPS, _shape._STACK_OPS):
        cache.pop(n, None)
    for k in [k for k in _shape._SPLIT_OPS if k[0] == n]:
        del _shape._SPLIT_OPS[k]


CASES = {
    "stack": lambda xs: ndgrad.stack(xs),
    "stack_dim1": lambda xs: ndgrad.stack(xs, 1),
    "cat": lambda xs: ndgrad.cat(xs),
    "cat_with_legacy_empty": lambda xs: ndgrad.cat(xs[:1] + [ndgrad.zeros(0)] + xs[1:]),
    "hstack": lambda xs: ndgrad.hstack(xs),
    "vstack": lambda xs: ndgrad.vstack(xs),
    "dstack": lambda xs: ndgrad.dstack(xs),
    "column_stack": lambda xs: ndgrad.column_stack(xs),
    "row_stack_unbind": lambda xs: ndgrad.stack(ndgrad.unbind(ndgrad.stack(xs))),
    "split_cat": lambda xs: ndgrad.cat(ndgrad.cat(xs).split(2)),
    "broadcast_tensors_sum": lambda xs: ndgrad.stack(ndgrad.broadcast_tensors(*xs)),
}


def _work(case, n):
    _forget_ops(n)
    _forget_ops(n + 1)
    xs = _leaves(n)

    def run():
        y = CASES[case](xs)
        (y * 1.0).sum().backward()
    calls = _count_calls(run)
    # and the result is right: every leaf got d(sum)/d(leaf) = 1
    assert all(x.grad is not None and x.grad.tolist() == [1.0, 1.0] for x in xs)
    return calls


@pytest.mark.parametrize("case", sorted(CASES))
def test_work_is_linear_in_the_number_of_inputs(case):
    small, big = _work(case, N), _work(case, 4 * N)
    assert big <= RATIO * small, (case, small, big, big / small)


def test_counter_detects_quadratic_work():
    # the measure itself: a per-input loop over all inputs grows ~16x for 4x the inputs
    def quadratic(n):
        return lambda: [sum(j for j in range(i)) for i in range(n)]
    assert _count_calls(quadratic(4 * N)) > 10 * _count_calls(quadratic(N))


def test_large_cat_and_stack_values():
    n = 3000
    xs = [ndgrad.full((i % 3 + 1,), float(i), requires_grad=True) for i in range(n)]
    y = ndgrad.cat(xs)
    w = ndgrad.arange(y.shape[0], dtype=ndgrad.float32)
    (y * w).sum().backward()
    start = 0
    for i, x in enumerate(xs):
        k = i % 3 + 1
        assert x.grad.tolist() == [float(start + j) for j in range(k)]
        start += k
    zs = _leaves(n)
    s = ndgrad.stack(zs, 1)
    assert s.shape == (2, n) and s[1, 17].item() == 17.0
    (s * ndgrad.arange(n, dtype=ndgrad.float32)).sum().backward()
    assert zs[123].grad.tolist() == [123.0, 123.0]
