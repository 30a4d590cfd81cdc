# requires: nn.BCEWithLogitsLoss, optim.RMSprop
# A logistic-regression tutorial loop: two features, binary labels, BCEWithLogitsLoss and RMSprop,
# then accuracy from the sigmoid. Data and initial weights are fixed instead of random.
import torch
import torch.nn as nn

X = torch.tensor([[0.5, 1.2], [1.0, 0.8], [1.5, 1.9], [2.0, 0.4], [-0.5, -1.0], [-1.2, 0.3],
                  [-0.8, -0.6], [-1.5, -1.1], [0.3, -0.9], [-0.2, 1.4]])
y = torch.tensor([[1.0], [1.0], [1.0], [1.0], [0.0], [0.0], [0.0], [0.0], [0.0], [1.0]])


class LogisticRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x):
        return self.linear(x)  # logits; the loss applies the sigmoid


model = LogisticRegression()
with torch.no_grad():
    model.linear.weight.copy_(torch.tensor([[0.1, -0.3]]))
    model.linear.bias.fill_(0.2)
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.05)
print(optimizer)
for epoch in range(30):
    optimizer.zero_grad()
    logits = model(X)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}")
with torch.no_grad():
    probs = torch.sigmoid(model(X))
    accuracy = ((probs > 0.5).float() == y).float().mean()
print(f"accuracy {accuracy.item():.2f}")
print(model.linear.weight, model.linear.bias)
print({k: v for k, v in optimizer.state_dict()["state"][0].items()})

# centered RMSprop with momentum and weight decay, on the same problem, from the same start
with torch.no_grad():
    model.linear.weight.copy_(torch.tensor([[0.1, -0.3]]))
    model.linear.bias.fill_(0.2)
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True, weight_decay=1e-3)
losses = []
for epoch in range(20):
    optimizer.zero_grad()
    loss = criterion(model(X), y)
    loss.backward()
    optimizer.step()
    losses.append(round(loss.item(), 4))
print(losses)
print(sorted(optimizer.state[model.linear.weight]), optimizer.state_dict()["param_groups"])
