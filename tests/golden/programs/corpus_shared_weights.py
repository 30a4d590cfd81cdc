# Follows the weight-sharing examples from the "Learning PyTorch with Examples" dynamic-net section and
# tied-embedding language models: one module applied several times, a parameter used twice (tied input
# and output embeddings), and how .grad accumulates the contributions; parameters() lists it once.
import torch
import torch.nn as nn


class DynamicNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(0.1))
        self.b = nn.Parameter(torch.tensor(-0.2))
        self.c = nn.Parameter(torch.tensor(0.3))
        self.d = nn.Parameter(torch.tensor(0.05))
        self.e = nn.Parameter(torch.tensor(0.01))

    def forward(self, x, n_extra):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, 4 + n_extra):  # reuse parameter e several times
            y = y + self.e * x ** exp
        return y

    def string(self):
        return f'y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} x^2 + {self.d.item():.4f} x^3 + {self.e.item():.4f} x^4 ? + {self.e.item():.4f} x^5 ?'


x = torch.linspace(-1.0, 1.0, 6)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
for t, n_extra in enumerate([0, 1, 2, 1, 0, 2]):
    y_pred = model(x, n_extra)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    print(t, n_extra, f"{loss.item():.5f}", model.e.grad)
    optimizer.step()
print(f'Result: {model.string()}')


class TiedLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight  # tie the weights

    def forward(self, idx):
        return self.out(torch.tanh(self.embed(idx)))


lm = TiedLM(4, 2)
with torch.no_grad():
    lm.embed.weight.copy_(torch.tensor([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6], [0.0, 0.7]]))
print(lm.out.weight is lm.embed.weight, len(list(lm.parameters())), [n for n, _ in lm.named_parameters()])
print(list(lm.state_dict().keys()))
logits = lm(torch.tensor([0, 2, 3]))
loss = nn.functional.cross_entropy(logits, torch.tensor([1, 3, 0]))
loss.backward()
print(f"{loss.item():.5f}")
print(lm.embed.weight.grad)

# a layer applied twice: its gradient is the sum over both uses
layer = nn.Linear(2, 2)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[1.0, 0.5], [-0.5, 1.0]]))
    layer.bias.zero_()
inp = torch.tensor([[1.0, 2.0]])
layer(layer(inp)).sum().backward()
print(layer.weight.grad)
w = layer.weight.detach()
g1 = torch.ones(1, 2) @ w
print((g1.T @ inp) + (torch.ones(1, 2).T @ (inp @ w.T)))
