# requires: nn.BCELoss, nn.BCEWithLogitsLoss
# Binary cross-entropy, on probabilities and on logits: the docs' examples (fixed data instead of
# torch.randn), weight, pos_weight and reduction, PyTorch's one node per loss, gradients, and errors.
import torch
import torch.nn as nn
import torch.nn.functional as F
from golden_helpers import attempt, graph

# nn.BCELoss's docs example
m = nn.Sigmoid()
loss = nn.BCELoss()
input = torch.tensor([[0.3, -1.2], [2.0, 0.1], [-0.7, 0.9]], requires_grad=True)
target = torch.tensor([[0.8, 0.1], [0.5, 0.9], [0.2, 0.6]], requires_grad=False)
output = loss(m(input), target)
output.backward()
print(loss, output, graph(output.grad_fn))
print(input.grad)

# nn.BCEWithLogitsLoss's docs example: 64 classes, batch size 10
target = torch.ones([10, 64], dtype=torch.float32)
output = torch.full([10, 64], 1.5)  # a prediction (logit)
pos_weight = torch.ones([64])  # all weights are equal to 1
criterion = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
print(criterion(output, target))  # -log(sigmoid(1.5))
print(criterion, list(criterion.state_dict()), criterion.reduction)

# the functional forms, every reduction, with and without weights
p = torch.tensor([0.2, 0.7, 0.9, 0.5], requires_grad=True)
z = torch.tensor([-1.0, 0.5, 2.0, 0.0], requires_grad=True)
t = torch.tensor([0.0, 1.0, 1.0, 0.0])
w = torch.tensor([1.0, 2.0, 3.0, 0.5])
for kwargs in ({}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": w}):
    print(kwargs, F.binary_cross_entropy(p, t, **kwargs), F.binary_cross_entropy_with_logits(z, t, **kwargs))
for kwargs in ({"pos_weight": torch.tensor([3.0])}, {"pos_weight": torch.tensor([3.0]), "weight": w, "reduction": "sum"}):
    out = F.binary_cross_entropy_with_logits(z, t, **kwargs)
    print(out, graph(out.grad_fn))
for kwargs in ({}, {"weight": w}, {"reduction": "sum"}):
    p.grad = z.grad = None
    F.binary_cross_entropy(p, t, **kwargs).backward()
    F.binary_cross_entropy_with_logits(z, t, pos_weight=torch.tensor([2.0]), **kwargs).backward()
    print(kwargs, p.grad, z.grad)

# sigmoid + BCELoss against BCEWithLogitsLoss, and what happens at the edges
print(nn.BCELoss()(torch.sigmoid(z), t), nn.BCEWithLogitsLoss()(z, t))
print(F.binary_cross_entropy(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])))  # log(0) floored at -100
print(F.binary_cross_entropy_with_logits(torch.tensor([-200.0, 200.0]), torch.tensor([1.0, 0.0])))
print(F.binary_cross_entropy(torch.tensor([0.25, 0.5]), torch.tensor([0.5, 0.5])))  # soft targets
print(nn.BCELoss(weight=torch.tensor([1.0, 2.0]), reduction="sum")(torch.tensor([[0.25, 0.5]]), torch.tensor([[1.0, 0.0]])))
pw = torch.tensor([1.0, 2.0, 3.0])
print(F.binary_cross_entropy_with_logits(torch.zeros(2, 3), torch.ones(2, 3), pos_weight=pw))  # per class
print(nn.BCELoss(size_average=False).reduction, nn.BCEWithLogitsLoss(reduce=False).reduction)  # the old flags
print(F.binary_cross_entropy(torch.tensor([0.25, 0.5]), torch.tensor([1.0, 0.0]), size_average=False))
target_p = torch.tensor([0.3, 0.6], requires_grad=True)
F.binary_cross_entropy(torch.tensor([0.4, 0.5]), target_p).backward()
print(target_p.grad)

attempt("shapes differ", lambda: nn.BCELoss()(torch.sigmoid(torch.tensor([[0.3], [0.2]])), torch.tensor([1.0, 0.0])))
attempt("logits shapes", lambda: F.binary_cross_entropy_with_logits(torch.zeros(1, 2), torch.zeros(2, 1)))
attempt("not probabilities", lambda: F.binary_cross_entropy(torch.tensor([1.5, 0.5]), torch.tensor([0.0, 1.0])))
attempt("target > 1", lambda: F.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([2.0])))
attempt("long target", lambda: F.binary_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([1, 0])))
attempt("long target, logits", lambda: F.binary_cross_entropy_with_logits(torch.tensor([0.5, 0.5]), torch.tensor([1, 0])))
attempt("long input", lambda: F.binary_cross_entropy(torch.tensor([1, 0]), torch.tensor([1, 0])))
attempt("double input", lambda: F.binary_cross_entropy(torch.tensor([0.5], dtype=torch.float64), torch.tensor([1.0])))
attempt("reduction", lambda: F.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.0]), reduction="avg"))
attempt("weight size", lambda: F.binary_cross_entropy(torch.full((2, 3), 0.5), torch.ones(2, 3), weight=torch.ones(2)))
attempt("weight grad", lambda: F.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([1.0]),
                                                    weight=torch.tensor([2.0], requires_grad=True)))
attempt("pos_weight size", lambda: F.binary_cross_entropy_with_logits(torch.zeros(2, 3), torch.ones(2, 3),
                                                                    pos_weight=torch.ones(2)))
