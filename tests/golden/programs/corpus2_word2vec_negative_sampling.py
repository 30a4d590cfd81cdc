# Skip-gram with negative sampling, after the widely read PyTorch word2vec implementations (e.g.
# github.com/Andras7/word2vec-pytorch model.py SkipGramModel: u_embeddings/v_embeddings with sparse=False,
# initrange = 1.0 / emb_dimension, init.uniform_, score = torch.clamp(torch.sum(emb_u * emb_v, dim=1), max=10, min=-10),
# -F.logsigmoid(score), torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze(), torch.mean(score + neg_score)).
# uniform_ init is replaced by fixed values; negatives are fixed.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import init


class SkipGramModel(nn.Module):
    def __init__(self, emb_size, emb_dimension):
        super(SkipGramModel, self).__init__()
        self.emb_size = emb_size
        self.emb_dimension = emb_dimension
        self.u_embeddings = nn.Embedding(emb_size, emb_dimension)
        self.v_embeddings = nn.Embedding(emb_size, emb_dimension)
        initrange = 1.0 / self.emb_dimension
        with torch.no_grad():
            self.u_embeddings.weight.copy_(torch.sin(torch.arange(emb_size * emb_dimension) * 0.7).reshape(emb_size, -1) * initrange)
        init.constant_(self.v_embeddings.weight.data, 0)

    def forward(self, pos_u, pos_v, neg_v):
        emb_u = self.u_embeddings(pos_u)
        emb_v = self.v_embeddings(pos_v)
        emb_neg_v = self.v_embeddings(neg_v)
        score = torch.sum(torch.mul(emb_u, emb_v), dim=1)
        score = torch.clamp(score, max=10, min=-10)
        score = -F.logsigmoid(score)
        neg_score = torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze()
        neg_score = torch.clamp(neg_score, max=10, min=-10)
        neg_score = -torch.sum(F.logsigmoid(-neg_score), dim=1)
        return torch.mean(score + neg_score)


model = SkipGramModel(12, 5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
pos_u = torch.tensor([0, 1, 2, 3, 4, 5])
pos_v = torch.tensor([1, 2, 3, 4, 5, 6])
neg_v = torch.tensor([[7, 8, 9], [10, 11, 7], [8, 9, 10], [11, 7, 8], [9, 10, 11], [7, 9, 11]])
for i in range(5):
    optimizer.zero_grad()
    loss = model(pos_u, pos_v, neg_v)
    loss.backward()
    optimizer.step()
    print(i, ' Loss: ' + str(round(loss.item(), 5)))
print(model.v_embeddings.weight[:3])
print(F.cosine_similarity(model.u_embeddings.weight[0], model.u_embeddings.weight[1:4], dim=-1))
