# mistake: handles one level of containers only: tensors nested deeper stay where they were
# expect: 0 points for to_device
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    move = lambda v: v.to(device) if isinstance(v, torch.Tensor) else v  # noqa: E731
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: move(v) for k, v in batch.items()}
    if hasattr(batch, "_fields"):
        return type(batch)(*[move(v) for v in batch])
    if isinstance(batch, (list, tuple)):
        return type(batch)([move(v) for v in batch])
    return batch
