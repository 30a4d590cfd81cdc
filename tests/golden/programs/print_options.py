# torch.set_printoptions as tutorials use it (precision, threshold, edgeitems, linewidth, sci_mode, profiles);
# the program restores the default profile, as the options are global.
import torch, math
x = torch.tensor([1.123456789, 2.5, -3.25])
big = torch.arange(2000.0).reshape(40, 50) / 7
torch.set_printoptions(precision=2); print(x)
torch.set_printoptions(threshold=5); print(torch.arange(10))
torch.set_printoptions(profile="default"); print(x, torch.arange(10))
torch.set_printoptions(sci_mode=True); print(x, torch.tensor([1.0, 2.0]))
torch.set_printoptions(sci_mode=False); print(torch.tensor([1e-8, 1.0, 1e9]))
torch.set_printoptions(profile="short"); print(big)
torch.set_printoptions(profile="full", linewidth=120); print(torch.arange(60.0).reshape(2, 30) * 1.5)
torch.set_printoptions(profile="default", edgeitems=1, linewidth=40); print(big)
torch.set_printoptions(precision=6, sci_mode=None); print(torch.tensor([math.pi, 1e-3]), torch.tensor([[1e-6, 1.0]]))
torch.set_printoptions(profile="nope"); print(torch.tensor([1.123456789]))
torch.set_printoptions(profile="default"); print(torch.tensor([1.123456789], requires_grad=True) * 2)
