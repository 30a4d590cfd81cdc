# Follows the PyTorch DCGAN tutorial's training step on a toy 1-D problem: Generator and Discriminator
# with LeakyReLU(0.2), BCELoss with real_label = 1. / fake_label = 0. filled by torch.full, the
# discriminator step on fake.detach(), the generator step through D, Adam with betas=(0.5, 0.999), and
# the D(x), D(G(z)) printout. The noise is a fixed tensor instead of torch.randn.
import torch
import torch.nn as nn
from golden_helpers import graph

netG = nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2, inplace=True), nn.Linear(4, 1))
netD = nn.Sequential(nn.Linear(1, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1), nn.Sigmoid())


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        with torch.no_grad():
            n = m.weight.numel()
            m.weight.copy_(torch.linspace(-0.8, 0.9, n).reshape(m.weight.shape))
            m.bias.fill_(0.05)


netG.apply(weights_init)
netD.apply(weights_init)
print(netG)
print(netD)

criterion = nn.BCELoss()
fixed_noise = torch.tensor([[0.5, -1.0], [1.5, 0.25], [-0.75, 0.8], [0.1, -0.3]])
real_batch = torch.tensor([[2.0], [2.5], [1.5], [3.0]])
real_label = 1.
fake_label = 0.
optimizerD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))

G_losses, D_losses = [], []
for i in range(5):
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    b_size = real_batch.size(0)
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real_batch).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    noise = fixed_noise + 0.1 * i
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()

    # (2) Update G network: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    print('[%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f'
          % (i, 5, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    G_losses.append(errG.item())
    D_losses.append(errD.item())

print(len(G_losses), fake.grad_fn.name(), fake.detach().requires_grad)
print(netG[1], netG[2].weight.grad is not None, netD[0].weight.grad)
x = torch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
y = nn.functional.leaky_relu(x, 0.2)
y.sum().backward()
print(y, x.grad)
print(graph(netG(fixed_noise).grad_fn, max_depth=2))
