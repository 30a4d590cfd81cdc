# Forward-mode tangents where some inputs have none: PyTorch's zero tangent adds nothing, not even a sign.
import torch
import warnings
warnings.filterwarnings("ignore", message=".*torch.jit.script. is deprecated")
import torch.autograd.forward_ad as fwAD
with fwAD.dual_level():
    x = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([-0.0, 0.0]))
    y = torch.tensor([3.0, 4.0])
    print(fwAD.unpack_dual(x ** 2 + y ** 2).tangent)
    print(fwAD.unpack_dual(y ** 2 - x ** 2).tangent)
    print(fwAD.unpack_dual(y * x).tangent, fwAD.unpack_dual(x * y).tangent)
    z = fwAD.make_dual(torch.tensor([0.0, 2.0]), torch.tensor([1.0, -1.0]))
    print(fwAD.unpack_dual(y ** 2 + z * 0).tangent)
    s = fwAD.make_dual(torch.tensor([2.0]), torch.tensor([0.5]))
    print(fwAD.unpack_dual(s + torch.ones(3)).tangent, fwAD.unpack_dual(torch.ones(2, 3) - s).tangent)
    d = fwAD.make_dual(torch.tensor([1.0, 2.0], dtype=torch.float32), torch.tensor([1.0, 1.0]))
    print(fwAD.unpack_dual(d + torch.tensor([1.0, 1.0], dtype=torch.float64)).tangent)
    print(fwAD.unpack_dual(x + 1).tangent, fwAD.unpack_dual(1 - x).tangent, fwAD.unpack_dual(x * 3).tangent, fwAD.unpack_dual(x / y).tangent)
    print(fwAD.unpack_dual(torch.cat([x, y])).tangent)
