# Moves the inputs to the model's device but not the targets: the loss mixes devices.
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    device = next(model.parameters()).device
    optimizer.zero_grad()
    loss = loss_fn(model(inputs.to(device)), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
