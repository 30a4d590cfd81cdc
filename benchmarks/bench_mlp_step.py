"""One SGD training step of an MLP 784-256-256-10 (ReLU, cross-entropy, batch 128):
chibigrad (nn.Sequential, F.cross_entropy, optim.SGD) against a hand-written numpy
forward/backward of the same network, the floor for any numpy-based engine.

Budget: chibigrad within 1.30x of the floor (PyTorch CPU eager measures 1.15x of it in the same harness).

    python benchmarks/bench_mlp_step.py [--quick]
"""
import sys

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

import numpy as np

try:
    import chibigrad as torch
    from chibigrad import nn, optim
    import chibigrad.nn.functional as F
    nn.Sequential, nn.Linear, nn.ReLU, optim.SGD, F.cross_entropy  # noqa: B018 - all needed below
except (ImportError, AttributeError) as err:
    sys.exit(f"bench_mlp_step: chibigrad.nn / optim are not available yet ({err}); nothing measured.")

BATCH, SIZES, LR = (8, (784, 16, 16, 10), 0.01) if QUICK else (128, (784, 256, 256, 10), 0.01)
REPEATS, WARMUP, BLOCK = (3, 1, 2) if QUICK else (300, 20, 25)


class NumpyMLP:
    """The floor: forward, backward and the SGD update written out by hand, float32 throughout."""

    def __init__(self, params):
        self.params = [np.array(p) for p in params]  # W1, b1, W2, b2, W3, b3

    def step(self, x, y):
        W1, b1, W2, b2, W3, b3 = self.params
        rows = np.arange(len(y))
        h1 = x @ W1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ W2.T + b2
        a2 = np.maximum(h2, 0)
        z = a2 @ W3.T + b3
        z -= z.max(1, keepdims=True)  # log-softmax, shifted for stability
        e = np.exp(z)
        total = e.sum(1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - z[rows, y])
        dz = e / total  # d loss / d logits = (softmax - onehot) / batch
        dz[rows, y] -= 1
        dz /= len(y)
        da2 = (dz @ W3) * (h2 > 0)
        da1 = (da2 @ W2) * (h1 > 0)
        grads = (da1.T @ x, da1.sum(0), da2.T @ a1, da2.sum(0), dz.T @ a2, dz.sum(0))
        for p, g in zip(self.params, grads):
            p -= LR * g
        return loss


def chibigrad_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
                          nn.Linear(SIZES[2], SIZES[3]))
    optimizer = optim.SGD(model.parameters(), lr=LR)
    floor = NumpyMLP([p.detach().numpy() for p in model.parameters()])
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    y_np = rng.integers(0, SIZES[3], BATCH)
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)

    # Same network, same numbers: one step of each from the same weights.
    loss_floor = floor.step(x_np, y_np)
    loss_chibi = chibigrad_step(model, optimizer, x, y).item()
    same = np.isclose(loss_floor, loss_chibi, rtol=1e-5) and all(
        np.allclose(p.detach().numpy(), q, rtol=1e-4, atol=1e-6) for p, q in zip(model.parameters(), floor.params))
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}: loss {loss_chibi:.5f} (numpy {loss_floor:.5f}); "
          f"same update: {'yes' if same else 'NO'}")

    steps = {"numpy": lambda: floor.step(x_np, y_np), "chibigrad": lambda: chibigrad_step(model, optimizer, x, y)}
    interleaved(steps, WARMUP)
    median = interleaved(steps, REPEATS)
    print(f"median step: numpy floor {median['numpy'] * 1e3:.3f} ms, chibigrad {median['chibigrad'] * 1e3:.3f} ms "
          f"({REPEATS} interleaved repetitions, one BLAS thread)")
    report("chibigrad / numpy floor", median["chibigrad"] / median["numpy"], target=1.30)
    # Alternating single steps makes each step re-fault the pages the other's frees gave back
    # to the OS (glibc trims the heap top); a training loop runs its steps back to back.
    blocks = interleaved(steps, max(REPEATS // BLOCK, 1), block=BLOCK)
    print(f"in blocks of {BLOCK} consecutive steps: numpy floor {blocks['numpy'] * 1e3:.3f} ms, "
          f"chibigrad {blocks['chibigrad'] * 1e3:.3f} ms")
    report("chibigrad / numpy floor, steps back to back", blocks["chibigrad"] / blocks["numpy"], target=1.30)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
