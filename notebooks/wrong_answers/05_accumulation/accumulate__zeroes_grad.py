# Zeroes the gradients first, like a training step would: what the caller had accumulated is lost.
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    model.zero_grad()
    total, n = 0.0, len(inputs)
    for start in range(0, n, micro_batch):
        part = slice(start, min(start + micro_batch, n))
        loss = loss_fn(model(inputs[part]), targets[part]) * ((part.stop - part.start) / n)
        loss.backward()
        total += loss.item()
    return total
