"""torch.nn.DataParallel on a machine without GPUs, where PyTorch runs the module as it is."""
from .modules.module import Module


class DataParallel(Module):
    """Splits each batch over GPUs in PyTorch; chibigrad has at most one device, so like PyTorch
    with no GPU it calls the wrapped module. ``state_dict`` keys gain the ``module.`` prefix."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # PyTorch stops here when it finds no GPU

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
