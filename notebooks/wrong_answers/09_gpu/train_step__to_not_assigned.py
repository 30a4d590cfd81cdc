# Calls .to(device) as if it moved the tensor in place; the copies it returns are thrown away.
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    device = next(model.parameters()).device
    inputs.to(device)
    targets.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
