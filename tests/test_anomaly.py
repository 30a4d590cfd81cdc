"""detect_anomaly: a failing backward names the forward operation and shows where it ran.

Texts checked against PyTorch 2.13 (catalogue sections 15a-15i).
"""
import warnings

import pytest

import chibigrad as torch

ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                   "enabled for debugging.")
TAIL = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)"


def messages(record):
    return [str(w.message) for w in record]


def forward_report(record):
    """The 'Error detected in ...' warning."""
    (report,) = [m for m in messages(record) if m.startswith("Error detected in ")]
    return report


def test_detect_anomaly_warns_when_entered_and_switches_the_mode():
    assert not torch.is_anomaly_enabled()
    with pytest.warns(UserWarning) as record:
        with torch.autograd.detect_anomaly():
            assert torch.autograd.is_anomaly_enabled()
    assert messages(record) == [ENABLED_WARNING]
    assert not torch.is_anomaly_enabled()


def test_set_detect_anomaly_as_call_and_context_manager():
    torch.autograd.set_detect_anomaly(True)
    assert torch.is_anomaly_enabled()
    torch.autograd.set_detect_anomaly(False)
    assert not torch.is_anomaly_enabled()
    with torch.autograd.set_detect_anomaly(True):
        assert torch.is_anomaly_enabled()
    assert not torch.is_anomaly_enabled()


def test_nan_in_backward_names_the_node_and_the_forward_line():
    x = torch.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning) as record, pytest.raises(RuntimeError) as err:
        with torch.autograd.detect_anomaly():
            y = torch.sqrt(x) * 0  # the forward line the report must show
            y.backward()
    assert str(err.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    report = forward_report(record)
    assert report.startswith("Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n")
    assert report.endswith(f'", line {_line_of("y = torch.sqrt(x) * 0  #")}, in '
                           "test_nan_in_backward_names_the_node_and_the_forward_line\n"
                           f"    y = torch.sqrt(x) * 0  # the forward line the report must show\n{TAIL}")


def test_without_anomaly_mode_nan_passes_silently():
    x = torch.zeros(1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 0/0 warning, which PyTorch does not print
        (torch.sqrt(x) * 0).backward()
    assert x.grad.isnan().all()


def test_check_nan_false_lets_nan_through():
    x = torch.zeros(1, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(check_nan=False):
            (torch.sqrt(x) * 0).backward()
    assert x.grad.isnan().all()


class Boom(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("boom in backward")


def test_backward_that_raises_shows_where_the_custom_function_was_applied():
    x = torch.ones(2, requires_grad=True)
    with pytest.warns(UserWarning) as record, pytest.raises(ValueError, match="^boom in backward$"):
        with torch.autograd.detect_anomaly():
            y = Boom.apply(x).sum()
            y.backward()
    report = forward_report(record)
    assert report.startswith("Error detected in BoomBackward. Traceback of forward call that caused the error:\n")
    assert "    y = Boom.apply(x).sum()\n" in report
    assert "chibigrad" not in report  # only the user's frames, down to the line that called the op


def test_without_anomaly_mode_the_error_passes_unannotated():
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="^boom in backward$"):
            Boom.apply(x).sum().backward()


def test_inplace_error_points_at_the_op_whose_saved_tensor_changed():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    with pytest.warns(UserWarning) as record, pytest.raises(RuntimeError) as err:
        with torch.autograd.detect_anomaly():
            a = x * 2
            b = a.sin()
            a.add_(1)
            b.sum().backward()
    assert str(err.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0 instead. "
        "Hint: the backtrace further above shows the operation that failed to compute its gradient. The variable "
        "in question was changed in there or anywhere later. Good luck!")
    report = forward_report(record)
    assert report.startswith("Error detected in SinBackward0.")
    assert "    b = a.sin()\n" in report


def test_backward_twice_in_anomaly_mode_names_the_node():
    x = torch.tensor(2., requires_grad=True)
    with pytest.warns(UserWarning) as record, pytest.raises(RuntimeError, match="^Trying to backward through"):
        with torch.autograd.detect_anomaly():
            y = x ** 3
            y.backward()
            y.backward()
    assert forward_report(record).startswith("Error detected in PowBackward0.")
    assert "    y = x ** 3\n" in forward_report(record)


def test_anomaly_mode_names_the_node_that_produced_nan_not_its_consumers():
    x = torch.tensor([0., 1.], requires_grad=True)
    with pytest.warns(UserWarning) as record, pytest.raises(RuntimeError) as err:
        with torch.autograd.detect_anomaly():
            h = x.log()  # backward: grad / x is 0 / 0 at x = 0
            loss = (h * torch.tensor([0., 1.])).sum()
            loss.backward()
    assert str(err.value) == "Function 'LogBackward0' returned nan values in its 0th output."
    assert "    h = x.log()  # backward" in forward_report(record)


def _line_of(text):
    """Line number of ``text`` in this file (so the test survives edits above it)."""
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if text in line and "_line_of" not in line:
                return number
    raise AssertionError(text)
