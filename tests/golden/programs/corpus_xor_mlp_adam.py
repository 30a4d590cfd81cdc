# Follows the classic "XOR with a two-layer network" examples from blog posts and course notebooks:
# nn.Sequential(Linear, Tanh, Linear, Sigmoid), BCELoss, Adam; prints the loss and the predictions.
import torch
import torch.nn as nn

X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
Y = torch.tensor([[0.], [1.], [1.], [0.]])

model = nn.Sequential(
    nn.Linear(2, 4),
    nn.Tanh(),
    nn.Linear(4, 1),
    nn.Sigmoid(),
)
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, -0.4], [0.3, 0.8], [-0.7, 0.6], [0.2, -0.9]]))
    model[0].bias.copy_(torch.tensor([0.1, -0.1, 0.05, 0.0]))
    model[2].weight.copy_(torch.tensor([[0.6, -0.5, 0.4, -0.3]]))
    model[2].bias.fill_(0.0)
print(model)
loss_fn = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
print(optimizer)

for epoch in range(60):
    optimizer.zero_grad()
    out = model(X)
    loss = loss_fn(out, Y)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        print(f"Epoch {epoch}: loss={loss.item():.4f}")

with torch.no_grad():
    pred = model(X)
print(pred)
print((pred > 0.5).int().flatten().tolist())
state = optimizer.state_dict()["state"]
print(sorted(state.keys()), state[0]["step"], state[0]["exp_avg"].shape)
print(sum(p.numel() for p in model.parameters()), "parameters")
