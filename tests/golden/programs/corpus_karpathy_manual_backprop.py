# Follows Karpathy's "Zero to Hero" makemore part 4 ("becoming a backprop ninja"): a tiny MLP with
# cross-entropy written out step by step, retain_grad() on every intermediate, the manual backward
# pass, and cmp() comparing each manual gradient with PyTorch's (exact / approximate / maxdiff).
import torch
import torch.nn.functional as F

n, vocab_size, n_embd, n_hidden = 4, 5, 2, 3
C = torch.tensor([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6], [0.7, -0.8], [0.05, 0.15]], requires_grad=True)
W1 = torch.tensor([[0.2, -0.1, 0.4], [0.5, 0.3, -0.6]], requires_grad=True)
b1 = torch.tensor([0.01, -0.02, 0.03], requires_grad=True)
W2 = torch.tensor([[0.3, -0.4, 0.1, 0.2, -0.1], [0.6, 0.2, -0.3, 0.1, 0.4], [-0.2, 0.5, 0.3, -0.6, 0.1]],
                  requires_grad=True)
b2 = torch.tensor([0.0, 0.1, -0.1, 0.05, 0.0], requires_grad=True)
parameters = [C, W1, b1, W2, b2]
Xb = torch.tensor([0, 2, 4, 1])
Yb = torch.tensor([1, 3, 0, 2])

emb = C[Xb]
hprebn = emb @ W1 + b1
h = torch.tanh(hprebn)
logits = h @ W2 + b2
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdims=True)
counts_sum_inv = counts_sum ** -1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()

for p in parameters:
    p.grad = None
for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hprebn, emb]:
    t.retain_grad()
loss.backward()
# the lecture prints both in full; PyTorch's log_softmax kernel (vectorised exp and log) differs
# from numpy's in the last bit of float32, so 6 decimals
print(f"{loss.item():.6f} {F.cross_entropy(logits, Yb).item():.6f}")


def cmp(s, dt, t):
    # The lecture's cmp also prints exact (torch.all(dt == t.grad)) and maxdiff to one digit. Which
    # elements agree exactly depends on the last bits of float32 exp and log, and PyTorch's
    # vectorised exp/log differ from numpy's there (README), so here: approximate, and maxdiff
    # below 1e-7 or not.
    app = torch.allclose(dt, t.grad)
    maxdiff = (dt - t.grad).abs().max().item()
    print(f'{s:15s} | approximate: {str(app):5s} | maxdiff < 1e-7: {maxdiff < 1e-7}')


dlogprobs = torch.zeros_like(logprobs)
dlogprobs[range(n), Yb] = -1.0 / n
dprobs = (1.0 / probs) * dlogprobs
dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
dcounts = counts_sum_inv * dprobs
dcounts_sum = (-counts_sum ** -2) * dcounts_sum_inv
dcounts += torch.ones_like(counts) * dcounts_sum
dnorm_logits = counts * dcounts
dlogits = dnorm_logits.clone()
dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
dh = dlogits @ W2.T
dW2 = h.T @ dlogits
db2 = dlogits.sum(0)
dhprebn = (1.0 - h ** 2) * dh
demb = dhprebn @ W1.T
dW1 = emb.T @ dhprebn
db1 = dhprebn.sum(0)
dC = torch.zeros_like(C)
for k in range(Xb.shape[0]):
    dC[Xb[k]] += demb[k]

cmp('logprobs', dlogprobs, logprobs)
cmp('probs', dprobs, probs)
cmp('counts_sum_inv', dcounts_sum_inv, counts_sum_inv)
cmp('counts_sum', dcounts_sum, counts_sum)
cmp('counts', dcounts, counts)
cmp('norm_logits', dnorm_logits, norm_logits)
cmp('logit_maxes', dlogit_maxes, logit_maxes)
cmp('logits', dlogits, logits)
cmp('h', dh, h)
cmp('W2', dW2, W2)
cmp('b2', db2, b2)
cmp('hprebn', dhprebn, hprebn)
cmp('emb', demb, emb)
cmp('W1', dW1, W1)
cmp('b1', db1, b1)
cmp('C', dC, C)

# exercise 2: the cross-entropy backward in one line
dlogits = F.softmax(logits, 1)
dlogits[range(n), Yb] -= 1
dlogits /= n
cmp('logits (fast)', dlogits, logits)
print(logit_maxes.grad.abs().max().item() < 1e-7, loss.grad_fn, logprobs.grad_fn.name())
