"""Gradient checkpointing: memory saved against time spent.

A 64-layer MLP (Linear + ReLU, width 256, batch 2048, float32), where activations
dominate memory, trained one step plainly and with ``checkpoint_sequential`` in
sqrt(64) = 8 segments. chibigrad.memory gives the peaks of the bytes saved for backward
and of all live tensor data.
Budget: the checkpointed peak of saved activations at most 30% of the plain one,
at most 1.5x its time (one extra forward of every segment but the last).

    python benchmarks/bench_checkpoint.py [--quick] [--batch N]
"""
import sys

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

try:
    import chibigrad as torch
    from chibigrad import memory, nn
    from chibigrad.utils.checkpoint import checkpoint_sequential
    nn.Sequential, nn.Linear, nn.ReLU  # noqa: B018 - all needed below
except (ImportError, AttributeError) as err:
    sys.exit(f"bench_checkpoint: chibigrad.nn is not available yet ({err}); nothing measured.")

DEPTH, WIDTH, BATCH, SEGMENTS, REPEATS = (8, 16, 32, 2, 1) if QUICK else (64, 256, 2048, 8, 3)
if "--batch" in sys.argv:
    BATCH = int(sys.argv[sys.argv.index("--batch") + 1])
MB = 2 ** 20


def make_model():
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    return nn.Sequential(*layers)


def plain_step(model, x):
    model(x).mean().backward()


def checkpointed_step(model, x):
    # use_reentrant=False: x (a batch of data) does not require grad, and the first segment's
    # parameters must still get their gradients
    checkpoint_sequential(model, SEGMENTS, x, use_reentrant=False).mean().backward()


def peaks(step, model, x):
    """Peak bytes saved for backward and peak bytes of live tensor data during one step, and the grads."""
    model.zero_grad()
    base_saved, base_allocated = memory.saved(), memory.allocated()
    memory.reset_peak()
    step(model, x)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return memory.max_saved() - base_saved, memory.max_allocated() - base_allocated, grads


def main():
    model = make_model()
    x = torch.randn(BATCH, WIDTH)
    activation = BATCH * WIDTH * 4
    print(f"MLP of {DEPTH} x (Linear({WIDTH}, {WIDTH}) + ReLU), batch {BATCH}, float32; "
          f"one activation = {activation / MB:.1f} MB; checkpoint_sequential in {SEGMENTS} segments")

    saved_plain, allocated_plain, grads_plain = peaks(plain_step, model, x)
    saved_ckpt, allocated_ckpt, grads_ckpt = peaks(checkpointed_step, model, x)
    same = all(torch.allclose(a, b, rtol=1e-4, atol=1e-6) for a, b in zip(grads_plain, grads_ckpt))
    print(f"peak saved for backward: plain {saved_plain / MB:.1f} MB, checkpointed {saved_ckpt / MB:.1f} MB")
    print(f"peak tensor data:        plain {allocated_plain / MB:.1f} MB, checkpointed {allocated_ckpt / MB:.1f} MB")
    print(f"same parameter gradients: {'yes' if same else 'NO'}")

    def timed(step):
        def run():
            step(model, x)
            model.zero_grad()
        return run

    median = interleaved({"plain": timed(plain_step), "checkpointed": timed(checkpointed_step)}, REPEATS)
    print(f"median step (CPU): plain {median['plain']:.2f} s, checkpointed {median['checkpointed']:.2f} s "
          f"({REPEATS} interleaved repetitions, one BLAS thread)")
    report("saved memory, checkpointed / plain", saved_ckpt / saved_plain, target=0.30)
    report("tensor data memory, checkpointed / plain", allocated_ckpt / allocated_plain)
    report("time, checkpointed / plain", median["checkpointed"] / median["plain"], target=1.5)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
