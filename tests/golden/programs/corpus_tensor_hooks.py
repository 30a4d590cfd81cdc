# Follows the torch.Tensor.register_hook documentation and forum recipes: print a gradient as it
# passes, double or clamp it, hooks on leaves and intermediates, handle.remove(), and
# register_post_accumulate_grad_hook as the "optimizer in backward" tutorial uses it.
import torch

v = torch.tensor([0., 0., 0.], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(torch.tensor([1., 2., 3.]))
print(v.grad)
h.remove()  # removes the hook
v.grad = None
v.backward(torch.tensor([1., 2., 3.]))
print(v.grad)

# a hook on an intermediate sees the gradient flowing through it; returning None leaves it unchanged
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = x * 3
seen = []
y.register_hook(lambda grad: seen.append(grad.clone()))
z = (y ** 2).sum()
z.backward()
print(seen, x.grad)

# clamping gradients with hooks on every parameter (a common way to clip per element)
model = torch.nn.Linear(2, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[2.0, -3.0]]))
    model.bias.fill_(1.0)
for p in model.parameters():
    p.register_hook(lambda grad: torch.clamp(grad, -1.0, 1.0))
out = model(torch.tensor([[5.0, 0.1], [-2.0, 4.0]])).pow(2).sum()
out.backward()
print(model.weight.grad, model.bias.grad)

# hooks run in registration order, each sees the previous one's result
a = torch.tensor(2.0, requires_grad=True)
b = a * a
b.register_hook(lambda g: print("first", g) or g + 1)
b.register_hook(lambda g: print("second", g) or g * 10)
b.backward()
print(a.grad)

# zeroing part of a gradient: freeze the first row of an embedding-like table
table = torch.nn.Parameter(torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]))
mask = torch.tensor([[0.0], [1.0], [1.0]])
table.register_hook(lambda grad: grad * mask)
(table[torch.tensor([0, 1, 1, 2])] * torch.tensor([[1.0, 2.0]])).sum().backward()
print(table.grad)

# post-accumulate-grad hooks: step each parameter as soon as its gradient is ready
params = [torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.nn.Parameter(torch.tensor([-1.0]))]
optimizers = {p: torch.optim.SGD([p], lr=0.5) for p in params}


def optimizer_hook(parameter):
    optimizers[parameter].step()
    optimizers[parameter].zero_grad()


for p in params:
    p.register_post_accumulate_grad_hook(optimizer_hook)
loss = (params[0] ** 2).sum() + (params[1] * 3).sum()
loss.backward()
print(params[0], params[1], params[0].grad)
attempt = None
try:
    y.register_post_accumulate_grad_hook(lambda p: None)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.tensor([1.0]).register_hook(lambda g: g)
except RuntimeError as e:
    print("RuntimeError:", e)
