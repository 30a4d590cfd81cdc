# Runs the model with gradients enabled: every batch builds a graph nobody uses (detach() at the end hides it).
def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    device = next(model.parameters()).device
    total, count, outputs = 0.0, 0, []
    for inputs, targets in batches:
        output = model(inputs.to(device))
        total += loss_fn(output, targets.to(device)).item() * len(inputs)
        count += len(inputs)
        outputs.append(output.detach().cpu().numpy())
    return total / count, np.concatenate(outputs)
