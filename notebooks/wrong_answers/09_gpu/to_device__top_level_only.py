# Moves the tensors directly inside the container, not those nested deeper.
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    def move(value):
        return value.to(device) if isinstance(value, torch.Tensor) else value
    if isinstance(batch, dict):
        return {key: move(value) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(move(item) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(move(item) for item in batch)
    return move(batch)
