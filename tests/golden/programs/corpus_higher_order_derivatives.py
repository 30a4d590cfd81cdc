# Follows the higher-order-gradient recipes from the docs and forums: first, second and third
# derivatives of a scalar function with repeated autograd.grad(create_graph=True), a Hessian-vector
# product without the Hessian, and the Laplacian of a function (as physics-informed networks do).
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 4 + torch.sin(x)
dy, = torch.autograd.grad(y, x, create_graph=True)
d2y, = torch.autograd.grad(dy, x, create_graph=True)
d3y, = torch.autograd.grad(d2y, x)
print(dy, d2y, d3y)
print(dy.grad_fn.name(), d2y.grad_fn.name())

# derivatives at many points at once: grad of the sum
xs = torch.linspace(-1, 1, 5, requires_grad=True)
f = xs ** 3
df, = torch.autograd.grad(f.sum(), xs, create_graph=True)
d2f, = torch.autograd.grad(df.sum(), xs)
print(df, d2f)

# Hessian-vector product: grad of (grad . v)
w = torch.tensor([1.0, -1.0, 0.5], requires_grad=True)
loss = (w ** 2).prod() + (w ** 3).sum()
g, = torch.autograd.grad(loss, w, create_graph=True)
v = torch.tensor([1.0, 0.0, 0.0])
hv, = torch.autograd.grad(g @ v, w, retain_graph=True)
print(g.detach(), hv)
H = torch.stack([torch.autograd.grad(g[i], w, retain_graph=True)[0] for i in range(3)])
print(H, H @ v)

# the Laplacian of u(x, y) = x^2 y + y^3, checked at a few points
pts = torch.tensor([[1.0, 2.0], [0.5, -1.0]], requires_grad=True)
u = pts[:, 0] ** 2 * pts[:, 1] + pts[:, 1] ** 3
grad_u, = torch.autograd.grad(u.sum(), pts, create_graph=True)
u_xx, = torch.autograd.grad(grad_u[:, 0].sum(), pts, create_graph=True)
u_yy, = torch.autograd.grad(grad_u[:, 1].sum(), pts, create_graph=True)
laplacian = u_xx[:, 0] + u_yy[:, 1]
print(grad_u, laplacian, 2 * pts[:, 1].detach() + 6 * pts[:, 1].detach())

# backward(create_graph=True) then grad of the grad
z = torch.tensor([3.0], requires_grad=True)
out = z ** 3
out.backward(create_graph=True)
print(z.grad, z.grad.requires_grad)
gz = z.grad
z.grad = None
gz.backward()
print(z.grad)

# a function whose second derivative is zero: grad without graph
q = torch.tensor([1.0, 2.0], requires_grad=True)
lin = (3 * q).sum()
gq, = torch.autograd.grad(lin, q, create_graph=True)
print(gq, gq.requires_grad)
