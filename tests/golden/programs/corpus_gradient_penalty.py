# Follows the WGAN-GP gradient penalty (Gulrajani et al.'s reference code and its PyTorch ports):
# interpolate real and fake, torch.autograd.grad(outputs, inputs, grad_outputs=ones, create_graph=True,
# retain_graph=True, only_inputs=True), penalise (||grad||_2 - 1)^2, and backprop through it.
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
with torch.no_grad():
    critic[0].weight.copy_(torch.tensor([[0.5, -0.3], [0.8, 0.2], [-0.4, 0.6]]))
    critic[0].bias.copy_(torch.tensor([0.1, 0.0, -0.1]))
    critic[2].weight.copy_(torch.tensor([[1.0, -0.7, 0.5]]))
    critic[2].bias.fill_(0.05)

real = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
fake = torch.tensor([[0.0, 0.5], [-1.0, 1.0], [1.0, 1.0]])
alpha = torch.tensor([[0.25], [0.5], [0.75]])


def compute_gradient_penalty(D, real_samples, fake_samples):
    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
    d_interpolates = D(interpolates)
    fake_out = torch.ones(real_samples.shape[0], 1, requires_grad=False)
    gradients = torch.autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=fake_out,
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    print("gradients", gradients, gradients.grad_fn is not None)
    gradients = gradients.view(gradients.size(0), -1)
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    return gradient_penalty


lambda_gp = 10
optimizer_D = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.999))
for step in range(3):
    optimizer_D.zero_grad()
    real_validity = critic(real)
    fake_validity = critic(fake)
    gradient_penalty = compute_gradient_penalty(critic, real.data, fake.data)
    d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty
    d_loss.backward()
    optimizer_D.step()
    print(f"step {step} d_loss {d_loss.item():.5f} gp {gradient_penalty.item():.5f}")
    # the double backward through tanh differs from PyTorch's in the last bits of float32 (README:
    # element-wise functions), and this gradient lands near a 4-digit rounding boundary: 3 digits
    print(gradient_penalty.grad_fn.name(), [[round(g, 3) for g in row] for row in critic[0].weight.grad.tolist()])

# the same penalty on one scalar function, checked by hand: d/dx (x^3) = 3x^2
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = (x ** 3).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
penalty = ((g - 1) ** 2).sum()
penalty.backward()
print(g, x.grad, (2 * (3 * x ** 2 - 1) * 6 * x).detach())
