# Clears the gradients between backward and step: the optimizer always sees zeros (or None) and the
# parameters never move.
def train(model, inputs, targets, steps, lr=0.1):
    optimizer = optim.SGD(model.parameters(), lr=lr)
    history = []
    for step in range(steps):
        loss = (model(inputs) - targets).pow(2).mean()
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        history.append(loss.item())
    return history
