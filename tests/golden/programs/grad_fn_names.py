# grad_fn class names of the engine's differentiable ops.
import torch

a = torch.tensor([[0.5, -1.0, 2.0, 1.5], [-0.3, 0.8, -2.2, 0.1], [1.2, -0.7, 0.4, -1.9]], requires_grad=True)
b = torch.tensor([[1.0, 2.0, -0.5, 0.3], [0.7, -1.1, 0.9, 2.0], [-0.4, 0.6, 1.3, -0.8]], requires_grad=True)
p = torch.tensor([[0.5, 1.0, 2.0, 1.5], [0.3, 0.8, 2.2, 0.1], [1.2, 0.7, 0.4, 1.9]], requires_grad=True)
v = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
w = torch.tensor([0.5, 0.25, -1.0, 2.0], requires_grad=True)
m = torch.ones(4, 5, requires_grad=True)
B1 = torch.ones(2, 3, 4, requires_grad=True)
B2 = torch.ones(2, 4, 5, requires_grad=True)
mask = a.detach() > 0
exprs = {
    "a+b": lambda: a + b, "a-b": lambda: a - b, "a*b": lambda: a * b, "a/b": lambda: a / b,
    "a+1": lambda: a + 1, "2*a": lambda: 2 * a, "a/2": lambda: a / 2, "10-a": lambda: 10 - a,
    "1/a": lambda: 1 / a, "2**a": lambda: 2 ** a, "a**2": lambda: a ** 2, "p**b": lambda: p ** b,
    "p**0.5": lambda: p ** 0.5, "-a": lambda: -a, "a.pow(3)": lambda: a.pow(3), "torch.pow(a, 2)": lambda: torch.pow(a, 2),
    "a.exp()": lambda: a.exp(), "p.log()": lambda: p.log(), "p.sqrt()": lambda: p.sqrt(),
    "a.abs()": lambda: a.abs(), "a.sin()": lambda: a.sin(), "a.cos()": lambda: a.cos(),
    "a.tanh()": lambda: a.tanh(), "a.sigmoid()": lambda: a.sigmoid(), "torch.sigmoid(a)": lambda: torch.sigmoid(a),
    "a.relu()": lambda: a.relu(), "torch.relu(a)": lambda: torch.relu(a),
    "a.clamp(-1, 1)": lambda: a.clamp(-1, 1), "a.clamp(min=0)": lambda: a.clamp(min=0),
    "torch.clamp(a, max=0.5)": lambda: torch.clamp(a, max=0.5),
    "torch.where(mask,a,b)": lambda: torch.where(mask, a, b), "torch.where(mask,a,0.)": lambda: torch.where(mask, a, 0.),
    "torch.maximum(a,b)": lambda: torch.maximum(a, b), "torch.minimum(a,b)": lambda: torch.minimum(a, b),
    "a.sum()": lambda: a.sum(), "a.sum(dim=0)": lambda: a.sum(dim=0), "a.sum(1, keepdim=True)": lambda: a.sum(1, keepdim=True),
    "a.mean()": lambda: a.mean(), "a.mean(dim=1)": lambda: a.mean(dim=1),
    "a.max()": lambda: a.max(), "a.max(dim=1).values": lambda: a.max(dim=1).values, "a.max(1)[0]": lambda: a.max(1)[0],
    "a.min()": lambda: a.min(), "a.min(dim=0).values": lambda: a.min(dim=0).values,
    "a.amax()": lambda: a.amax(), "a.amax(dim=1)": lambda: a.amax(dim=1), "a.amin(1)": lambda: a.amin(1),
    "a.prod()": lambda: a.prod(), "a.prod(1)": lambda: a.prod(1), "a.norm()": lambda: a.norm(),
    "a.norm(dim=1)": lambda: a.norm(dim=1),
    "a.var()": lambda: a.var(), "a.var(dim=1)": lambda: a.var(dim=1), "a.std()": lambda: a.std(), "a.std(1)": lambda: a.std(1),
    "a @ m": lambda: a @ m, "torch.matmul(a, m)": lambda: torch.matmul(a, m), "a.mm(m)": lambda: a.mm(m),
    "torch.mm(a, m)": lambda: torch.mm(a, m),
    "torch.bmm(B1,B2)": lambda: torch.bmm(B1, B2), "B1 @ B2": lambda: B1 @ B2,
    "v @ w": lambda: v @ w, "a @ v": lambda: a @ v, "v @ m": lambda: v @ m, "B1 @ m": lambda: B1 @ m,
    "a.reshape(4,3)": lambda: a.reshape(4, 3), "a.view(12)": lambda: a.view(12), "a.view(-1)": lambda: a.view(-1),
    "a.t().reshape(12)": lambda: a.t().reshape(12),
    "a.flatten()": lambda: a.flatten(), "(a*1)[None].squeeze()": lambda: (a * 1)[None].squeeze(),
    "a.unsqueeze(0)": lambda: a.unsqueeze(0), "a.squeeze(0)": lambda: a.squeeze(0),
    "a.unsqueeze(0).squeeze(0)": lambda: a.unsqueeze(0).squeeze(0),
    "a.transpose(0,1)": lambda: a.transpose(0, 1), "B1.permute(2,0,1)": lambda: B1.permute(2, 0, 1),
    "v.expand(3,4)": lambda: v.expand(3, 4), "a.T": lambda: a.T, "a.t()": lambda: a.t(),
    "a[0]": lambda: a[0], "a[0, 1]": lambda: a[0, 1], "a[:, 1:]": lambda: a[:, 1:], "a[1:]": lambda: a[1:],
    "a[:, 0]": lambda: a[:, 0], "a[..., None]": lambda: a[..., None],
    "a[mask]": lambda: a[mask], "a[[0, 2]]": lambda: a[[0, 2]], "a[torch.tensor([0,2])]": lambda: a[torch.tensor([0, 2])],
    "a[[0,1],[1,2]]": lambda: a[[0, 1], [1, 2]],
    "torch.cat([a,b])": lambda: torch.cat([a, b]), "torch.stack([a,b])": lambda: torch.stack([a, b]),
    "a.split(2)[0]": lambda: a.split(2)[0], "a.split(2)[1]": lambda: a.split(2)[1],
    "a.split([1,2])[0]": lambda: a.split([1, 2])[0], "a.chunk(2)[0]": lambda: a.chunk(2)[0],
    "a.chunk(2, dim=1)[1]": lambda: a.chunk(2, dim=1)[1], "torch.split(a, 1)[2]": lambda: torch.split(a, 1)[2],
    "a.softmax(dim=1)": lambda: a.softmax(dim=1), "torch.softmax(a, 0)": lambda: torch.softmax(a, 0),
    "a.log_softmax(1)": lambda: a.log_softmax(1), "a.logsumexp(1)": lambda: a.logsumexp(1),
    "torch.logsumexp(a, 0)": lambda: torch.logsumexp(a, 0),
    "a.round()": lambda: a.round(), "a.floor()": lambda: a.floor(), "a.sign()": lambda: a.sign(),
    "a.clone()": lambda: a.clone(), "a.contiguous()": lambda: a.contiguous(),
    "a.t().contiguous()": lambda: a.t().contiguous(),
    "a.detach()": lambda: a.detach(), "a.detach()*2": lambda: a.detach() * 2,
    "a.detach().requires_grad_()": lambda: a.detach().requires_grad_(),
    "a.float()": lambda: a.float(), "a.double()": lambda: a.double(), "a.to(float64)": lambda: a.to(torch.float64),
    "a.argmax()": lambda: a.argmax(), "a > 0": lambda: a > 0,
}
for k, f in exprs.items():
    try:
        t = f()
        gf = t.grad_fn
        print(f"{k:28s} {type(gf).__name__ if gf is not None else None} {gf.name() if gf is not None else ''} "
              f"(requires_grad={t.requires_grad}, is_leaf={t.is_leaf})")
    except Exception as e:
        print(f"{k:28s} ERROR {type(e).__name__}: {e}")
s = (a * 2).split(1)
print(s[0].grad_fn is s[1].grad_fn)
