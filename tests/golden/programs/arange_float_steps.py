# torch.arange with float steps, computed as PyTorch's CPU kernel does (not numpy's repeated addition);
# d2l and the autograd tutorials plot functions over torch.arange(-8.0, 8.0, 0.1).
import torch

x = torch.arange(-8.0, 8.0, 0.1)
print(len(x), x[78].item(), x[80].item(), x[-1].item())
print([repr(v) for v in x.tolist()[60:100]])
for args in [(0, 1, 0.01), (-3, 7, 0.37), (0.5, 100, 0.7), (-1, 1, 0.013), (3, -2, -0.17), (-5.5, 3.3, 0.0123)]:
    values = torch.arange(*args).tolist()
    print(args, len(values), [repr(v) for v in values[::7]])
    values = torch.arange(*args, dtype=torch.float64).tolist()
    print(args, "float64", [repr(v) for v in values[::5]])
print(torch.arange(5), torch.arange(1, 10, 3), torch.arange(0, 1, 0.25))
