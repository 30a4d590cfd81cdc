# requires: nn.BCEWithLogitsLoss, nn.functional.one_hot
# Multi-label classification: each sample may have several of 4 tags. Targets built from tag lists
# with F.one_hot, rare tags up-weighted with pos_weight, Adam, then per-tag thresholded predictions.
import torch
import torch.nn as nn
import torch.nn.functional as F

tags = [[0, 2], [1], [0, 3], [2], [0, 1, 2], [3]]
targets = torch.stack([F.one_hot(torch.tensor(t), num_classes=4).sum(0) for t in tags]).float()
print(targets)
counts = targets.sum(0)
pos_weight = (len(tags) - counts) / counts  # negatives / positives per tag
print(pos_weight)

features = torch.tensor([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [1.0, 0.2, -1.0], [0.1, 0.0, 1.0],
                         [0.8, 0.9, 0.7], [0.0, 0.1, -1.2]])
model = nn.Linear(3, 4)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, 0.0, -0.1], [0.0, 0.2, 0.1], [-0.1, 0.1, 0.2], [0.05, -0.05, 0.0]]))
    model.bias.zero_()
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for step in range(40):
    optimizer.zero_grad()
    loss = criterion(model(features), targets)
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        print(f"step {step + 1}: loss {loss.item():.4f}")
with torch.no_grad():
    probs = torch.sigmoid(model(features))
predicted = (probs > 0.5).long()
print(predicted)
print([[i for i, v in enumerate(row.tolist()) if v] for row in predicted], tags)
per_element = F.binary_cross_entropy_with_logits(model(features), targets, reduction="none")
print(per_element.shape, per_element.grad_fn.name(), per_element.mean(dim=0))
