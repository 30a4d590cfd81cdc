# Follows Karpathy's "Let's build GPT" / nanoGPT: a Head with key/query/value Linear layers, a causal
# mask from torch.tril registered as a buffer, masked_fill(-inf), softmax attention, a Block with
# LayerNorm, GELU feed-forward and residuals, logits.view(B*T, C) into F.cross_entropy, and AdamW.
# Weights are set from a fixed formula instead of torch.manual_seed.
import torch
import torch.nn as nn
from torch.nn import functional as F

block_size, n_embd, vocab_size = 4, 8, 5


class Head(nn.Module):
    """ one head of self-attention """

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)
        v = self.value(x)
        return wei @ v


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.sa = Head(n_embd)
        self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.block = Block()
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tok_emb = self.token_embedding_table(idx)
        pos_emb = self.position_embedding_table(torch.arange(T))
        x = self.ln_f(self.block(tok_emb + pos_emb))
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        logits = logits.view(B * T, C)
        targets = targets.view(B * T)
        loss = F.cross_entropy(logits, targets)
        return logits, loss


model = TinyGPT()
with torch.no_grad():
    for i, (name, p) in enumerate(model.named_parameters()):
        if name.endswith("weight") and p.ndim == 1:  # LayerNorm weights stay 1
            continue
        n = p.numel()
        p.copy_(((torch.arange(n, dtype=torch.float32) * 0.37 + i) % 1.0 - 0.5).reshape(p.shape) * 0.4)
print(sum(p.numel() for p in model.parameters()), 'parameters')
print([name for name, _ in model.named_buffers()])
print(model.block.sa.tril)

xb = torch.tensor([[0, 1, 2, 3], [4, 3, 2, 1]])
yb = torch.tensor([[1, 2, 3, 4], [3, 2, 1, 0]])
logits, loss = model(xb, yb)
print(logits.shape, f"{loss.item():.4f}", loss.grad_fn.name())
att = model.block.sa
with torch.no_grad():
    x = model.block.ln1(model.token_embedding_table(xb) + model.position_embedding_table(torch.arange(4)))
    q, k = att.query(x), att.key(x)
    wei = (q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5).masked_fill(att.tril == 0, float('-inf'))
print(wei[0].isinf().sum().item(), F.softmax(wei, dim=-1)[0, 0])

optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for iter in range(5):
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    print(iter, f"{loss.item():.4f}")
print(model.lm_head.bias.grad.shape, model.block.sa.tril.requires_grad, model.block.ln1.weight.grad.shape)
