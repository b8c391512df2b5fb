"""The hand-written NumPy floor of bench's GPT workloads (bench/_gpt_floor.py) computes what the
model computes: its loss and every parameter's gradient against ndgrad's autograd on the same
weights and batch, and its greedy tokens against the model's. (A floor that computed less would
flatter every ratio to it.)"""
import os
import sys

import numpy as np
import pytest

import ndgrad

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")


@pytest.fixture(scope="module")
def W():
    sys.path.insert(0, BENCH)
    try:
        import workloads_transformer
        yield workloads_transformer
    finally:
        sys.path.remove(BENCH)


def test_gpt_floor_names_follow_the_models_state_dict(W):
    model = W._model_classes(ndgrad, True)()
    names = [(k, tuple(v.shape)) for k, v in model.state_dict().items()
             if not k.endswith(".attn.bias")]
    assert W._gpt_floor.state_names(W.N_LAYER, W.N_EMBD, W.VOCAB, W.BLOCK) == names


@pytest.mark.parametrize("flash", [True, False], ids=["sdpa", "masked-softmax"])
def test_gpt_floor_gradients_are_the_models(W, flash):
    G = W._gpt_floor
    floor = G._Model(W._floor_weights(), W.N_HEAD)
    x, y = W._batches()[1]
    logits, saved = floor.forward(x)
    loss, dlogits = G._cross_entropy(logits, y.reshape(-1))
    grads = floor.backward(dlogits, saved)

    model = W._build(ndgrad, flash)
    _, ref = model(ndgrad.tensor(x), ndgrad.tensor(y))
    ref.backward()
    assert abs(float(loss) - ref.item()) <= 1e-6 * ref.item()
    theirs = {k: p.grad.numpy() for k, p in model.named_parameters()}
    assert set(theirs) == set(grads)   # (the tied head and embedding: one parameter)
    for k, g in theirs.items():
        assert grads[k].dtype == np.float32 and grads[k].shape == g.shape, k
        assert np.abs(grads[k] - g).max() <= 1e-5 * np.abs(g).max(), k


def test_gpt_floor_training_follows_the_model(W):
    floor, first = W._gpt_floor.train_step(W._floor_weights(), W._batches(), W.N_HEAD)
    model, _, theirs_first = W.gpt_step(True)("ndgrad", False)
    assert abs(float(first) - float(theirs_first)) <= 1e-6 * float(theirs_first)
    for _ in range(3):
        a, b = float(floor()), model().item()
        assert abs(a - b) <= 1e-5 * b


def test_gpt_floor_generates_the_models_tokens(W):
    floor = W.gpt_generate("numpy", False)[0]()
    theirs = W.gpt_generate("ndgrad", False)[0]().numpy()
    assert floor.dtype == np.int64 and floor.shape == (1, W.GEN_PROMPT + W.GEN_TOKENS)
    np.testing.assert_array_equal(floor, theirs)
