# mistake: zeroes the gradients before accumulating (as a training step would), so what the caller had
#   accumulated is lost
# expect: 0 points for accumulate
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    model.zero_grad()
    n = inputs.shape[0]
    total = 0.0
    for i in range(0, n, micro_batch):
        x, y = inputs[i:i + micro_batch], targets[i:i + micro_batch]
        loss = loss_fn(model(x), y) * (x.shape[0] / n)
        loss.backward()
        total += loss.item()
    return total
