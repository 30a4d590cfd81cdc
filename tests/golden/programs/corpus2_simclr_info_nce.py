# The NT-Xent / InfoNCE loss, after the SimCLR PyTorch implementation (github.com/sthalles/SimCLR simclr.py info_nce_loss:
# labels = torch.cat([torch.arange(batch_size) for i in range(n_views)], dim=0); (labels.unsqueeze(0) == labels.unsqueeze(1)).float();
# features = F.normalize(features, dim=1); similarity_matrix = torch.matmul(features, features.T);
# mask = torch.eye(labels.shape[0], dtype=torch.bool); positives/negatives via boolean indexing and .view;
# logits = torch.cat([positives, negatives], dim=1); labels = torch.zeros(logits.shape[0], dtype=torch.long); logits / temperature).
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size, n_views, temperature = 4, 2, 0.07
encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 5))
with torch.no_grad():
    for i, p in enumerate(encoder.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)


def info_nce_loss(features):
    labels = torch.cat([torch.arange(batch_size) for i in range(n_views)], dim=0)
    labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    features = F.normalize(features, dim=1)
    similarity_matrix = torch.matmul(features, features.T)
    mask = torch.eye(labels.shape[0], dtype=torch.bool)
    labels = labels[~mask].view(labels.shape[0], -1)
    similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
    positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
    negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
    logits = torch.cat([positives, negatives], dim=1)
    labels = torch.zeros(logits.shape[0], dtype=torch.long)
    logits = logits / temperature
    return logits, labels


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


x = torch.sin(torch.arange(batch_size * 6) * 0.37).reshape(batch_size, 6)
images = torch.cat([x, x + 0.1 * torch.cos(torch.arange(batch_size * 6) * 1.3).reshape(batch_size, 6)], dim=0)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(encoder.parameters(), 3e-3, weight_decay=1e-4)
for n_iter in range(3):
    features = encoder(images)
    logits, labels = info_nce_loss(features)
    loss = criterion(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    top1, top5 = accuracy(logits, labels, topk=(1, 5))
    print(n_iter, f"{loss.item():.5f}", top1[0].item(), top5)
print(logits.shape)
