# mistake: rebuilds every tuple with type(batch)(generator), which is right for a tuple but not for a
#   namedtuple (it takes its fields as arguments)
# expect: 0 points for to_device
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device) for v in batch)
    return batch
