# Sinusoidal positional encoding, after "The Annotated Transformer" and PyTorch's "Language Modeling with
# nn.Transformer" tutorial (https://pytorch.org/tutorials/beginner/transformer_tutorial.html): pe = torch.zeros(max_len, d_model);
# position = torch.arange(0, max_len).unsqueeze(1); div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model));
# pe[:, 0::2] = torch.sin(position * div_term); register_buffer("pe", pe); x + self.pe[:, : x.size(1)].requires_grad_(False).
import math
import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:, : x.size(1)].requires_grad_(False)
        return self.dropout(x)


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab):
        super(Embeddings, self).__init__()
        self.lut = nn.Embedding(vocab, d_model)
        self.d_model = d_model

    def forward(self, x):
        return self.lut(x) * math.sqrt(self.d_model)


pe = PositionalEncoding(6, 0.0, max_len=50)
print(pe.pe.shape, pe.pe.dtype)
print(pe.pe[0, :4])
print(pe.pe[0, 49])
print([n for n, _ in pe.named_buffers()], list(pe.state_dict().keys()))
emb = Embeddings(6, 10)
with torch.no_grad():
    emb.lut.weight.copy_(torch.sin(torch.arange(60) * 0.3).reshape(10, 6))
tokens = torch.tensor([[1, 4, 4, 9], [0, 2, 3, 8]])
y = pe(emb(tokens))
print(y[1])
y.sum().backward()
print(emb.lut.weight.grad)
