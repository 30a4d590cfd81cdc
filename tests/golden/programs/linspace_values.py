# linspace computes each value as PyTorch does (half from start, half from end, rounded once),
# so values near zero print as PyTorch prints them.
import torch

for args in [(-1, 1, 7), (0, 1, 1), (0, 1, 0), (0, 10, 5), (-3, 3, 13), (0, 1, 100), (1, -1, 9), (0, 0.3, 4)]:
    print(args, torch.linspace(*args).tolist())
print(torch.linspace(0, 10, 4, dtype=torch.int64), torch.linspace(-5, 5, 6, dtype=torch.int64))
print(torch.linspace(-1, 1, 7, dtype=torch.float64).tolist())
print(torch.linspace(-1, 1, 7))
print(torch.linspace(-2, 2, 5, requires_grad=True))
