# Moves the model to the batch's device instead of the batch to the model: a GPU model ends up on the CPU.
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    model.to(inputs.device)
    targets = targets.to(inputs.device)
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
