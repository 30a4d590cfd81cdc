"""chibigrad.testing.assert_close: PyTorch's tolerances and messages (texts recorded from torch 2.13)."""
import pytest

import chibigrad as torch
from chibigrad.testing import assert_close


def message(actual, expected, **kwargs):
    with pytest.raises(AssertionError) as err:
        assert_close(actual, expected, **kwargs)
    return str(err.value)


def test_close_values_pass_within_the_dtype_tolerance():
    assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-6]))
    assert_close(torch.tensor([1.0], dtype=torch.float64), torch.tensor([1.0 + 1e-9], dtype=torch.float64))
    assert_close(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True)


def test_float_mismatch_message():
    assert message(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.5, 3.])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")


def test_nan_is_the_greatest_difference():
    a = torch.tensor([[1., 2.], [3., 4.]])
    b = a.clone()
    b[1, 0] = 3.1
    b[0, 1] = float("nan")
    assert message(a, b) == (
        "Tensor-likes are not close!\n\nMismatched elements: 2 / 4 (50.0%)\n"
        "Greatest absolute difference: nan at index (0, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0, 1) (up to 1.3e-06 allowed)")


def test_integers_must_be_equal():
    assert message(torch.tensor([1, 2]), torch.tensor([1, 3])) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,)")


def test_shape_dtype_and_custom_message():
    assert message(torch.ones(3), torch.ones(2)) == (
        "The values for attribute 'shape' do not match: torch.Size([3]) != torch.Size([2]).")
    assert message(torch.ones(3), torch.ones(3, dtype=torch.float64)) == (
        "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.")
    assert message(torch.ones(3), torch.zeros(3), msg="custom") == "custom"
    assert_close(torch.ones(3), torch.ones(3, dtype=torch.float64), check_dtype=False)
