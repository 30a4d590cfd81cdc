# mistake: averages the batch means, ignoring that the last batch is smaller
# expect: 0 points for evaluate
def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    dev = next(model.parameters()).device
    losses, preds = [], []
    with torch.no_grad():
        for inputs, targets in batches:
            out = model(inputs.to(dev))
            losses.append(loss_fn(out, targets.to(dev)).item())
            preds.append(out.detach().cpu().numpy())
    return float(np.mean(losses)), np.concatenate(preds)
