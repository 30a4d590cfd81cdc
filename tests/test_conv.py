"""Convolution and pooling (chibigrad/ops/conv.py): gradients checked by central differences in float64.

What they print is compared with PyTorch's recorded output by the golden programs
``conv_and_pool_layers``, ``blitz_neural_networks`` and ``cifar10_training_loop``."""
import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad.autograd import gradcheck


def _fixed(*shape, phase=0.0):
    return torch.sin(torch.arange(int(np.prod(shape)), dtype=torch.float64) * 0.77 + phase).reshape(shape)


@pytest.mark.parametrize("options", [
    dict(), dict(stride=2), dict(padding=1), dict(padding=(2, 0), dilation=(1, 2)), dict(groups=2, stride=(1, 2)),
    dict(padding="same"),
])
def test_conv2d_gradients(options):
    x = _fixed(2, 4, 6, 5).requires_grad_()
    w = _fixed(4, 4 // options.get("groups", 1), 3, 3, phase=1.0).requires_grad_()
    b = _fixed(4, phase=2.0).requires_grad_()
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **options), (x, w, b))


def test_conv1d_gradients_and_unbatched_input():
    x = _fixed(3, 9).requires_grad_()
    w = _fixed(2, 3, 4, phase=1.0).requires_grad_()
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1), (x, w))
    assert F.conv1d(x, w).shape == (2, 6)


@pytest.mark.parametrize("pool", [
    lambda x: F.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 3, stride=1, padding=1),
    lambda x: F.max_pool2d(x, 2, dilation=2), lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)), lambda x: F.adaptive_avg_pool2d(x, 1),
])
def test_pooling_gradients(pool):
    x = (_fixed(2, 2, 6, 5) * 3 + torch.arange(30, dtype=torch.float64).reshape(6, 5) * 1e-3).requires_grad_()
    assert gradcheck(pool, (x,))


@pytest.mark.parametrize("op", [lambda x, w: F.conv2d(x, w), lambda x, w: F.max_pool2d(x * w.sum(), 2)])
def test_backward_refuses_create_graph(op):
    """A gradient of a gradient would silently miss the terms through these nodes: refused."""
    x = _fixed(1, 1, 4, 4).requires_grad_()
    w = _fixed(1, 1, 3, 3).requires_grad_()
    with pytest.raises(NotImplementedError, match="differentiable once: create_graph=True"):
        torch.autograd.grad(op(x, w).sum(), x, create_graph=True)


def test_batchnorm2d_normalises_each_channel_over_batch_and_space():
    x = _fixed(4, 3, 5, 5) * torch.tensor([1.0, 5.0, 0.1], dtype=torch.float64).view(1, 3, 1, 1)
    out = torch.nn.BatchNorm2d(3).double()(x)
    var = x.var((0, 2, 3), unbiased=False)
    assert np.allclose(out.mean((0, 2, 3)).detach().numpy(), 0, atol=1e-12)
    assert np.allclose(out.var((0, 2, 3), unbiased=False).detach().numpy(), (var / (var + 1e-5)).numpy())


def test_dropout2d_zeros_whole_channels():
    torch.manual_seed(0)
    out = F.dropout2d(torch.ones(8, 16, 3, 3), p=0.5)
    per_channel = out.reshape(8, 16, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    assert 0 < (per_channel == 0).all(-1).sum() < 128
