# CrossEntropyLoss options, after PyTorch's nn.CrossEntropyLoss docs (https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html:
# "Example of target with class indices" and "Example of target with class probabilities"; weight, ignore_index,
# label_smoothing, reduction) and the hand-written LabelSmoothingLoss classes posted in forum answers.
import torch
import torch.nn as nn
import torch.nn.functional as F

input = torch.sin(torch.arange(5 * 4) * 0.9).reshape(5, 4).requires_grad_()
target = torch.tensor([1, 0, 3, -100, 2])
loss = nn.CrossEntropyLoss()
print(loss(input, target.clamp(min=0)))
print(nn.CrossEntropyLoss(ignore_index=-100)(input, target))
print(nn.CrossEntropyLoss(label_smoothing=0.1)(input, target))
w = torch.tensor([1.0, 2.0, 0.5, 1.0])
print(nn.CrossEntropyLoss(weight=w)(input, target.clamp(min=0)))
print(nn.CrossEntropyLoss(weight=w, label_smoothing=0.2)(input, target))
print(nn.CrossEntropyLoss(reduction='none', label_smoothing=0.1)(input, target))
probs_target = torch.softmax(torch.cos(torch.arange(5 * 4) * 0.5).reshape(5, 4), dim=1)
output = loss(input, probs_target)
output.backward()
print(output, input.grad[0])


class LabelSmoothingLoss(nn.Module):
    def __init__(self, classes, smoothing=0.0, dim=-1):
        super(LabelSmoothingLoss, self).__init__()
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.cls = classes
        self.dim = dim

    def forward(self, pred, target):
        pred = pred.log_softmax(dim=self.dim)
        with torch.no_grad():
            true_dist = torch.zeros_like(pred)
            true_dist.fill_(self.smoothing / (self.cls - 1))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        return torch.mean(torch.sum(-true_dist * pred, dim=self.dim))


t = target.clamp(min=0)
print(LabelSmoothingLoss(4, 0.1)(input, t))
print(F.cross_entropy(input, t, label_smoothing=0.1 * 4 / 3))
print(F.nll_loss(F.log_softmax(input, 1), t, reduction='sum'))
