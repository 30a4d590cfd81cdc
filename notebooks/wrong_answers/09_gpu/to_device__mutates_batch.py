# Moves the tensors by assigning into the caller's dict and lists: the result looks right, but the
# caller's batch has changed too (its tensors are now on the device).
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        for key in batch:
            batch[key] = to_device(batch[key], device)
        return batch
    if isinstance(batch, list):
        for i, item in enumerate(batch):
            batch[i] = to_device(item, device)
        return batch
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, tuple):
        return tuple(to_device(item, device) for item in batch)
    return batch
