# The convolution and pooling layers and their functional forms with the options code uses (stride, padding,
# padding='same', dilation, groups, unbatched input), their grad_fn names and saved values, BatchNorm2d,
# Dropout2d, AdaptiveAvgPool2d, and the errors beginners meet (channels, kernel larger than the input).
import torch
import torch.nn as nn
import torch.nn.functional as F


def fixed(*shape, phase=0.0):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n, dtype=torch.float64) * 0.77 + phase).reshape(shape)


x = fixed(2, 4, 7, 6, phase=0.1).requires_grad_()
w = fixed(6, 2, 3, 3, phase=0.2).requires_grad_()
b = fixed(6, phase=0.3).requires_grad_()
y = F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
print(y.shape, y.grad_fn.name())
print(y[0, :, 1])
g = y.grad_fn
print(g._saved_stride, g._saved_padding, g._saved_dilation, g._saved_groups, g._saved_transposed,
      g._saved_output_padding, g._saved_bias_sym_sizes_opt, g._saved_weight.shape, g._saved_input.shape)
y.sum().backward()
print(x.grad[1, 3], w.grad[5, 1], b.grad)
print(F.conv2d(fixed(1, 1, 6, 6), fixed(2, 1, 3, 3), padding='same').shape, F.conv2d(fixed(3, 6, 6), fixed(2, 3, 3, 3)).shape)
c1 = F.conv1d(fixed(2, 3, 9, phase=1.0), fixed(4, 3, 3, phase=2.0), fixed(4), stride=2, padding=2)
print(c1)

p = fixed(2, 3, 6, 5, phase=0.4).requires_grad_()
m = F.max_pool2d(p, 3, stride=2, padding=1)
print(m.grad_fn.name(), m.grad_fn._saved_kernel_size, m.grad_fn._saved_stride, m.grad_fn._saved_padding,
      m.grad_fn._saved_dilation, m.grad_fn._saved_ceil_mode, m.grad_fn._saved_result1.shape)
values, indices = F.max_pool2d(p, 2, return_indices=True)
print(values[1, 2], indices[1, 2])
a = F.avg_pool2d(p, 3, stride=1, padding=1)
print(a.grad_fn.name(), a[0, 0])
ad = F.adaptive_avg_pool2d(p, (4, 3))
print(ad.grad_fn.name(), ad[1, 1], F.adaptive_avg_pool2d(p, 1).grad_fn.name())
(m.sum() + 2 * a.sum() + 3 * ad.sum()).backward()
print(p.grad[1, 2])

bn = nn.BatchNorm2d(3).double()
out = bn(p)
print(out.grad_fn.name(), bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn.eval()
print(bn(p)[0, 0, 0])
drop = nn.Dropout2d(0.5)
drop.eval()
print(drop(p) is p, drop)
print(nn.Conv2d(3, 4, (3, 5), stride=(2, 1), padding=(1, 2), dilation=2, bias=False), nn.Conv1d(2, 3, 4, stride=2),
      nn.Conv2d(4, 4, 3, padding='same', groups=2), nn.MaxPool2d(2), nn.AvgPool2d(3, stride=1, padding=1),
      nn.AdaptiveAvgPool2d((1, 1)), nn.BatchNorm2d(4))
layer = nn.Conv2d(1, 6, 5)
print(layer.weight.shape, layer.bias.shape, layer.kernel_size, layer.stride, layer.padding)
for bad in [lambda: F.conv2d(torch.zeros(1, 3, 32, 32), torch.zeros(6, 1, 5, 5)),
            lambda: F.conv2d(torch.zeros(1, 1, 4, 4), torch.zeros(6, 1, 5, 5)),
            lambda: F.conv2d(torch.zeros(2, 1, 4, 4, 4), torch.zeros(6, 1, 5, 5)),
            lambda: F.conv1d(torch.zeros(1, 2, 5), torch.zeros(3, 2, 2, 2)),
            lambda: F.max_pool2d(torch.zeros(1, 1, 4, 4), 5),
            lambda: F.max_pool2d(torch.zeros(1, 1, 4, 4), 2, padding=2),
            lambda: F.conv2d(torch.zeros(1, 1, 6, 6), torch.zeros(2, 1, 3, 3), padding='same', stride=2),
            lambda: nn.BatchNorm2d(3)(torch.zeros(2, 3, 4)),
            lambda: nn.Conv2d(3, 4, 3, groups=2)]:
    try:
        bad()
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__ + ":", e)
