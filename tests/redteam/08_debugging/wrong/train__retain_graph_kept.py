# mistake: fixes the accumulation (zero_grad) and logs floats, but keeps retain_graph=True "to be
#   safe": each step's saved tensors live until the next step's loss replaces it
# expect: 0 points for train
def train(model, inputs, targets, steps, lr=0.1):
    optimizer = optim.SGD(model.parameters(), lr=lr)
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = (model(inputs) - targets).pow(2).mean()
        loss.backward(retain_graph=True)
        optimizer.step()
        history.append(loss.item())
    return history
