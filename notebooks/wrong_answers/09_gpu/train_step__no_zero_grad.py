# Never clears the gradients: from the second step on, the optimizer gets the sum of all past gradients.
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    device = next(model.parameters()).device
    inputs, targets = inputs.to(device), targets.to(device)
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
