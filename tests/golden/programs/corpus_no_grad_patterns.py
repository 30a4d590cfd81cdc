# Follows the "Autograd mechanics" notes and tutorials on evaluation: torch.no_grad() for inference
# and manual updates, @torch.no_grad() as a decorator, torch.inference_mode, detach() to stop
# gradients, set_grad_enabled(is_train) in a train/eval loop, requires_grad_(False) to freeze.
import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, y.grad_fn)


@torch.no_grad()
def doubler(t):
    return t * 2


z = doubler(x)
print(z.requires_grad, torch.is_grad_enabled())


@torch.inference_mode()
def predict(t):
    return t * 3


p = predict(x)
print(p.requires_grad, p.is_inference())
try:
    (p * x).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

with torch.inference_mode():
    q = torch.ones(2)
    print(torch.is_inference_mode_enabled(), q.is_inference())
try:
    q.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
print(q.clone().is_inference())

# set_grad_enabled in a shared train/eval function
model = torch.nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[1.0, -1.0]]))
    model.bias.zero_()
for phase in ['train', 'val']:
    is_train = phase == 'train'
    with torch.set_grad_enabled(is_train):
        out = model(torch.tensor([[3.0, 1.0]]))
    print(phase, out.requires_grad, out.grad_fn)

torch.set_grad_enabled(False)
print((x * 2).requires_grad)
torch.set_grad_enabled(True)
print((x * 2).requires_grad)

# detach: same data, no history; changes show through
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b.detach()
print(c.requires_grad, c.grad_fn, c.is_leaf)
c.zero_()
print(b)
try:
    b.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# the "y = x.detach(); z = y * x" partial-gradient trick from d2l
x = torch.arange(4.0, requires_grad=True)
y = x * x
u = y.detach()
z = u * x
z.sum().backward()
print(x.grad == u)

# freezing a layer
net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
net[0].requires_grad_(False)
print([(n, p.requires_grad) for n, p in net.named_parameters()])
net(torch.ones(1, 2)).sum().backward()
print(net[0].weight.grad, net[1].weight.grad is not None)

# no_grad inside enable_grad and the other way round
with torch.no_grad():
    with torch.enable_grad():
        print((x * 2).requires_grad)
    print((x * 2).requires_grad)
