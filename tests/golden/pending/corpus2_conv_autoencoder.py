# A convolutional autoencoder, after common PyTorch autoencoder tutorials (e.g. "Convolutional Autoencoder in PyTorch"
# as in the d2l / pytorch-tutorial "conv autoencoder": encoder nn.Conv2d(1, 4, 3, stride=2, padding=1) + ReLU,
# decoder nn.ConvTranspose2d(4, 1, 3, stride=2, padding=1, output_padding=1) + Sigmoid, nn.MSELoss, Adam).
import torch
import torch.nn as nn


class Autoencoder(nn.Module):
    def __init__(self):
        super(Autoencoder, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(4, 8, 3, stride=2, padding=1),
            nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
            nn.ReLU(),
            nn.ConvTranspose2d(4, 1, 3, stride=2, padding=1, output_padding=1),
            nn.Sigmoid())

    def forward(self, x):
        x = self.encoder(x)
        x = self.decoder(x)
        return x


model = Autoencoder()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
print(model)
img = (torch.sin(torch.arange(2 * 64) * 0.23) + 1).reshape(2, 1, 8, 8) / 2
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
print(model.encoder(img).shape)
for epoch in range(3):
    recon = model(img)
    loss = criterion(recon, img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f'Epoch:{epoch + 1}, Loss:{loss.item():.6f}')
print(recon.shape, model.decoder[0].weight.grad.shape)
print(recon[0, 0, 0])
