# Turns every leaf into a tensor on the device, numbers and numpy arrays included (and fails on strings and None).
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, str) or batch is None:
        return batch
    return torch.tensor(batch, device=device)
