# Fixes the leak (floats in history, no retain_graph) but still never clears .grad: every step is fed
# the sum of all past gradients.
def train(model, inputs, targets, steps, lr=0.1):
    optimizer = optim.SGD(model.parameters(), lr=lr)
    history = []
    for step in range(steps):
        loss = (model(inputs) - targets).pow(2).mean()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history
