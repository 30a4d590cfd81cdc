# mistake: divides each micro-batch's loss by the number of micro-batches (the chapter's recipe for
#   equal micro-batches), wrong when the last one is smaller
# expect: 0 points for accumulate
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    n = inputs.shape[0]
    k = math.ceil(n / micro_batch)
    total = 0.0
    for i in range(0, n, micro_batch):
        loss = loss_fn(model(inputs[i:i + micro_batch]), targets[i:i + micro_batch]) / k
        loss.backward()
        total += loss.item()
    return total
