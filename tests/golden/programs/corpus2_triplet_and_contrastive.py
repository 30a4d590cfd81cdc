# Metric-learning losses, after PyTorch's TripletMarginLoss / CosineEmbeddingLoss / MarginRankingLoss docs
# (https://pytorch.org/docs/stable/generated/torch.nn.TripletMarginLoss.html: triplet_loss = nn.TripletMarginLoss(margin=1.0, p=2);
# output = triplet_loss(anchor, positive, negative); output.backward()) and the Siamese contrastive loss of
# Hadsell et al. as written in blog tutorials (F.pairwise_distance, torch.clamp(margin - d, min=0.0)). Fixed data.
import torch
import torch.nn as nn
import torch.nn.functional as F

anchor = torch.sin(torch.arange(4 * 5) * 0.3).reshape(4, 5).requires_grad_()
positive = torch.sin(torch.arange(4 * 5) * 0.3 + 0.2).reshape(4, 5).requires_grad_()
negative = torch.cos(torch.arange(4 * 5) * 0.7).reshape(4, 5).requires_grad_()
triplet_loss = nn.TripletMarginLoss(margin=1.0, p=2, eps=1e-7)
output = triplet_loss(anchor, positive, negative)
output.backward()
print(output)
print(anchor.grad[0])
twd = nn.TripletMarginWithDistanceLoss(distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y), margin=0.5)
print(twd(anchor, positive, negative))


class ContrastiveLoss(torch.nn.Module):
    def __init__(self, margin=2.0):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin

    def forward(self, output1, output2, label):
        euclidean_distance = F.pairwise_distance(output1, output2, keepdim=True)
        loss_contrastive = torch.mean((1 - label) * torch.pow(euclidean_distance, 2) +
                                      (label) * torch.pow(torch.clamp(self.margin - euclidean_distance, min=0.0), 2))
        return loss_contrastive


label = torch.tensor([[0.0], [1.0], [1.0], [0.0]])
print(ContrastiveLoss()(anchor, negative, label))
print(F.pairwise_distance(anchor, negative))
print(nn.CosineEmbeddingLoss(margin=0.1)(anchor, negative, torch.tensor([1, -1, -1, 1])))
print(nn.MarginRankingLoss(margin=0.5)(anchor[:, 0], negative[:, 0], torch.tensor([1.0, -1.0, 1.0, -1.0])))
print(nn.HingeEmbeddingLoss()(anchor[:, 0], torch.tensor([1.0, -1.0, 1.0, -1.0])))
