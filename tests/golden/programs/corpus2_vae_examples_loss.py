# VAE loss and reparameterisation, after pytorch/examples vae/main.py (https://github.com/pytorch/examples/blob/main/vae/main.py):
# fc1/fc21/fc22/fc3/fc4, reparameterize with std = torch.exp(0.5*logvar), loss_function = BCE(sum) + KLD.
# eps is fixed instead of torch.randn_like; the "images" are fixed sines squashed into (0, 1).
import torch
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc21 = nn.Linear(8, 2)
        self.fc22 = nn.Linear(8, 2)
        self.fc3 = nn.Linear(2, 8)
        self.fc4 = nn.Linear(8, 16)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.cos(torch.arange(std.numel()) * 1.3).reshape(std.shape)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 16))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.4)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
data = (torch.sin(torch.arange(4 * 16) * 0.37) + 1) / 2
data = data.view(4, 1, 4, 4)
model.train()
for epoch in range(1, 4):
    optimizer.zero_grad()
    recon_batch, mu, logvar = model(data)
    loss = loss_function(recon_batch, data, mu, logvar)
    loss.backward()
    train_loss = loss.item()
    optimizer.step()
    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(data)))
print(recon_batch.shape, mu.shape, logvar.grad_fn)
with torch.no_grad():
    sample = model.decode(torch.tensor([[0.5, -0.5], [1.0, 0.0]]))
print(sample.view(2, 1, 4, 4)[0, 0])
