# In-place on a leaf that requires grad: an error, except under no_grad.
import torch
from golden_helpers import attempt


x = torch.tensor([1., 2.], requires_grad=True)
attempt("add_", lambda: x.add_(1))
attempt("zero_", lambda: x.zero_())
attempt("iadd", lambda: x.__iadd__(1))
attempt("mul_", lambda: x.mul_(2))
attempt("fill_", lambda: x.fill_(2))
attempt("copy_", lambda: x.copy_(torch.ones(2)))
attempt("clamp_", lambda: x.clamp_(0, 1))
attempt("data.add_", lambda: x.data.add_(1))
print(x, x._version)
with torch.no_grad():
    x.add_(1)
    x.mul_(2)
    x[0] = 0.5
print(x, x.is_leaf, x.grad_fn, x.requires_grad, x._version)
(x * x).sum().backward()
print(x.grad)
with torch.no_grad():
    x -= 0.1 * x.grad
print(x, x.is_leaf)
x.grad.zero_()
print(x.grad)

# detach_() on a view is refused (its base would stay in the graph); detach() is the way.
x = torch.ones(3, requires_grad=True)
for name, make in [("slice", lambda: x[0:1]), ("view", lambda: (x * 2).view(3)), ("t", lambda: torch.ones(2, 2).t())]:
    try:
        make().detach_()
        print(name, "detached")
    except RuntimeError as e:
        print(name, e)
y = x * 2
y.detach_()
print(y.requires_grad, y.grad_fn, x.detach().detach_().requires_grad)

# A gradient assigned by hand must have the tensor's dtype.
for dtype, grad_dtype in ((torch.float32, torch.float64), (torch.float64, torch.float32), (torch.float32, torch.int64)):
    w = torch.ones(2, dtype=dtype, requires_grad=True)
    try:
        w.grad = torch.ones(2, dtype=grad_dtype)
    except RuntimeError as e:
        print(e)
