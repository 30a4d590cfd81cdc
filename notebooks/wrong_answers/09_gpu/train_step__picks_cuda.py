# Picks "cuda" whenever it is available instead of asking where the model is: a CPU model gets a GPU batch.
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    inputs, targets = inputs.to(device), targets.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
