"""torch.device: where a tensor's data lives. chibigrad's core runs on the CPU."""


class device:
    """A device name such as ``'cpu'`` or ``'cuda:0'``, printed as PyTorch prints it."""

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")
