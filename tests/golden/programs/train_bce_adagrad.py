# requires: nn.BCELoss, optim.Adagrad, nn.Flatten
# A small binary classifier on 2x2 "images": Flatten, Linear, ReLU, Linear, Sigmoid, BCELoss and
# Adagrad, the way beginner tutorials write it (fixed data and weights instead of random ones).
import torch
import torch.nn as nn

images = torch.tensor([[[1.0, 0.9], [0.1, 0.0]], [[0.8, 1.0], [0.0, 0.2]], [[0.0, 0.1], [0.9, 1.0]],
                       [[0.2, 0.0], [1.0, 0.7]], [[0.9, 0.8], [0.2, 0.1]], [[0.1, 0.3], [0.8, 0.9]]])
labels = torch.tensor([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])

model = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1), nn.Sigmoid())
with torch.no_grad():
    model[1].weight.copy_(torch.tensor([[0.2, -0.1, 0.4, 0.3], [-0.3, 0.5, 0.1, -0.2], [0.25, 0.25, -0.4, 0.1]]))
    model[1].bias.copy_(torch.tensor([0.1, 0.0, -0.1]))
    model[3].weight.copy_(torch.tensor([[0.3, -0.6, 0.5]]))
    model[3].bias.fill_(0.05)
print(model)
loss_fn = nn.BCELoss()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
print(optimizer)
print(optimizer.state_dict()["state"][0])  # Adagrad's state exists before the first step
for epoch in range(25):
    pred = model(images).squeeze(1)
    loss = loss_fn(pred, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0:
        print(f"loss: {loss.item():>7f}  [{epoch:>2d}/25]")
with torch.no_grad():
    pred = model(images).squeeze(1)
print(pred)
print(((pred > 0.5).float() == labels).sum().item(), "of", len(labels), "correct")
print(model[3].weight, optimizer.state[model[3].weight]["sum"], optimizer.state[model[3].weight]["step"])

# lr_decay, weight_decay and a starting accumulator
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05, lr_decay=0.01, weight_decay=0.01,
                                initial_accumulator_value=0.1)
for epoch in range(10):
    optimizer.zero_grad()
    loss = loss_fn(model(images).squeeze(1), labels)
    loss.backward()
    optimizer.step()
print(f"{loss.item():.4f}", optimizer.state_dict()["param_groups"][0])
