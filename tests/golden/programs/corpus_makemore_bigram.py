# Follows Karpathy's makemore part 1 (the bigram model): a count table built with N[ix1, ix2] += 1,
# normalised rows P /= P.sum(1, keepdims=True), the average negative log likelihood, then the same
# model as a one-layer net with F.one_hot, logits.exp() softmax, regularisation, and W.data += -lr * W.grad.
# The words are fixed and sampling with torch.multinomial is left out (its random stream differs).
import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia"]
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)
print(V, itos[1], itos[V - 1])

N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1
print(N[0], N.sum(), N.dtype)

P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print(P[0].sum(), P.shape, P[0, :4])

log_likelihood = 0.0
n = 0
for w in words[:3]:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        prob = P[stoi[ch1], stoi[ch2]]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
print(f'{log_likelihood=}')
nll = -log_likelihood
print(f'{nll=}')
print(f'{nll/n}')

xs, ys = [], []
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print('number of examples: ', num)

xenc = F.one_hot(xs, num_classes=V).float()
print(xenc.shape, xenc.dtype)
W = (torch.arange(V * V, dtype=torch.float32).reshape(V, V) % 7 / 7 - 0.5).requires_grad_()
for k in range(10):
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
    if k % 3 == 0:
        print(k, f"{loss.item():.5f}")
    W.grad = None
    loss.backward()
    W.data += -5 * W.grad
print(W.grad.shape, W.is_leaf, loss.grad_fn.name())
print(torch.allclose(F.cross_entropy(xenc @ W, ys), -(F.log_softmax(xenc @ W, 1)[torch.arange(num), ys]).mean()))
