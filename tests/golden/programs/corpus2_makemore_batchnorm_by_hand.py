# makemore part 3's MLP with batch norm written by hand, after Karpathy's Zero to Hero "Building makemore Part 3:
# Activations & Gradients, BatchNorm" (https://github.com/karpathy/nn-zero-to-hero/blob/master/lectures/makemore/makemore_part3_bn.ipynb):
# C[Xb].view(emb.shape[0], -1), W1 * (5/3)/((n_embd * block_size)**0.5), bnmeani/bnstdi, bngain * (hpreact - bnmeani) / bnstdi + bnbias,
# bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani under torch.no_grad(), F.cross_entropy, p.grad = None,
# lr = 0.1 if i < 100000 else 0.01, saturation (h.abs() > 0.99).float().mean(). torch.randn replaced by fixed sines.
import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
vocab_size = len(stoi)
block_size = 3
X, Y = [], []
for w in words:
    context = [0] * block_size
    for ch in w + '.':
        ix = stoi[ch]
        X.append(context)
        Y.append(ix)
        context = context[1:] + [ix]
X = torch.tensor(X)
Y = torch.tensor(Y)
print(X.shape, Y.shape, vocab_size)


def fixed(*shape, k=0.0):
    n = 1
    for s in shape:
        n *= s
    return torch.sin(torch.arange(n) * 0.61 + k).reshape(shape)


n_embd, n_hidden = 4, 16
C = fixed(vocab_size, n_embd, k=1)
W1 = fixed(n_embd * block_size, n_hidden, k=2) * (5 / 3) / ((n_embd * block_size) ** 0.5)
W2 = fixed(n_hidden, vocab_size, k=3) * 0.01
b2 = fixed(vocab_size, k=4) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))
parameters = [C, W1, W2, b2, bngain, bnbias]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True
lossi = []
for i in range(20):
    ix = torch.arange(i * 5, i * 5 + 16) % X.shape[0]
    Xb, Yb = X[ix], Y[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 10 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    if i % 5 == 0:
        print(f'{i:7d}/{20:7d}: {loss.item():.4f}')
    lossi.append(loss.log10().item())
print((h.abs() > 0.99).float().mean())
print(bnmean_running[0, :4], bnstd_running[0, :4])


@torch.no_grad()
def split_loss():
    emb = C[X]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Y)
    print('train', f"{loss.item():.4f}")


split_loss()
