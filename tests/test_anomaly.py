"""Anomaly mode: PyTorch's NaN message, and the forward traceback naming the user's own line."""
import warnings

import pytest

import ndgrad
from ndgrad.autograd import anomaly_mode


def _nan_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = lib.sqrt(x) * 0  # FORWARD-LINE: d sqrt at 0 is inf, times 0 -> nan
    return x, y.sum()


def _forward_line():
    src = open(__file__).read().splitlines()
    return next(i + 1 for i, line in enumerate(src) if "# FORWARD-LINE" in line
                and "lib.sqrt" in line)


def test_nan_raises_with_torch_message_and_forward_traceback():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = ndgrad.autograd.detect_anomaly()
    with ctx:
        assert ndgrad.autograd.is_anomaly_enabled()
        _, loss = _nan_backward(ndgrad)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError) as e:
                loss.backward()
    assert not ndgrad.autograd.is_anomaly_enabled()
    assert str(e.value).splitlines()[0] == \
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    text = "\n".join(str(x.message) for x in w)
    assert "Error detected in SqrtBackward0. Traceback of forward call that caused the error:" \
        in text
    assert f'test_anomaly.py", line {_forward_line()}' in text
    # the user's line is the last frame shown (ndgrad's own frames are dropped)
    assert text.strip().splitlines()[-2].strip().startswith('File "')
    assert "test_anomaly.py" in text.strip().splitlines()[-2]


def test_message_matches_torch():
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (ndgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                _, loss = _nan_backward(lib)
                with pytest.raises(RuntimeError) as e:
                    loss.backward()
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]


def test_off_means_no_check_and_no_site():
    _, loss = _nan_backward(ndgrad)
    assert not isinstance(loss.grad_fn._site, list)  # no recorded stack (a cheap site at most)
    loss.backward()  # nan flows silently, as in PyTorch


def test_set_detect_anomaly_and_check_nan_false():
    ndgrad.autograd.set_detect_anomaly(True, check_nan=False)
    try:
        assert ndgrad.autograd.is_anomaly_enabled()
        x, loss = _nan_backward(ndgrad)
        assert isinstance(loss.grad_fn._site, list)
        loss.backward()  # no NaN check
        assert x.grad[0].item() != x.grad[0].item()
    finally:
        ndgrad.autograd.set_detect_anomaly(False)
    assert not ndgrad.autograd.is_anomaly_enabled()
    assert anomaly_mode.is_anomaly_check_nan_enabled()
    with ndgrad.autograd.set_detect_anomaly(True):
        assert ndgrad.autograd.is_anomaly_enabled()
    assert not ndgrad.autograd.is_anomaly_enabled()


def test_decorator_and_other_errors_get_traceback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        deco = ndgrad.autograd.detect_anomaly()

    @deco
    def run():
        assert ndgrad.autograd.is_anomaly_enabled()
        x = ndgrad.ones(2, requires_grad=True)
        y = x * x
        y.backward(ndgrad.ones(2))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="second time"):
                y.backward(ndgrad.ones(2))
        return w

    w = run()
    assert not ndgrad.autograd.is_anomaly_enabled()
    assert any("Error detected in MulBackward0" in str(m.message) for m in w)
