# requires: nn.functional.one_hot
# F.one_hot: the docs' examples, its int64 result, num_classes=-1, use as a target, and its errors.
import torch
import torch.nn.functional as F
from golden_helpers import attempt

# (the docs write torch.arange(0, 5) % 3; chibigrad has no Tensor % yet, so the values are spelled out)
print(F.one_hot(torch.tensor([0, 1, 2, 0, 1])))
print(F.one_hot(torch.tensor([0, 1, 2, 0, 1]), num_classes=5))
print(F.one_hot(torch.tensor([0, 1, 2, 0, 1, 2]).view(3, 2)))
print(torch.nn.functional.one_hot(torch.tensor(2), 4), F.one_hot(torch.tensor([1, 0]), -1).dtype)
print(F.one_hot(torch.tensor([], dtype=torch.long), 3))

# one-hot targets for a mean squared error, as in from-scratch classification notebooks
labels = torch.tensor([2, 0, 1, 2])
logits = torch.tensor([[0.1, 0.2, 1.5], [2.0, -1.0, 0.0], [0.3, 0.9, 0.1], [0.0, 0.0, 0.5]], requires_grad=True)
target = F.one_hot(labels, num_classes=3).float()
print(target.requires_grad, target.dtype)
loss = ((logits.softmax(dim=1) - target) ** 2).sum(dim=1).mean()
loss.backward()
print(f"{loss.item():.6f}", logits.grad)
print(F.one_hot(labels).sum(0), F.one_hot(labels).argmax(1))

attempt("float indices", lambda: F.one_hot(torch.tensor([0.0, 2.0])))
attempt("int32 indices", lambda: F.one_hot(torch.tensor([0, 1], dtype=torch.int32), 3))
attempt("too small", lambda: F.one_hot(torch.tensor([0, 3]), 3))
attempt("negative", lambda: F.one_hot(torch.tensor([0, -1]), 3))
attempt("negative classes", lambda: F.one_hot(torch.tensor([0, 1]), -2))
attempt("empty", lambda: F.one_hot(torch.tensor([], dtype=torch.long)))
attempt("float classes", lambda: F.one_hot(torch.tensor([0, 1]), 2.0))
attempt("list", lambda: F.one_hot([0, 1], 2))
