"""torch.nn.utils.skip_init: a module whose parameters are not initialised."""
import inspect

from ..modules.module import Module


def skip_init(module_cls, *args, **kwargs):
    """PyTorch builds the module on the meta device and allocates it uninitialised; chibigrad has no
    meta device, so the module is built as usual: initialise it yourself, as you would in PyTorch."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
