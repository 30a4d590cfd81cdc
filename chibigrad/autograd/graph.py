"""torch.autograd.graph: the graph's nodes, and hooks on the tensors they save.

A node keeps the tensors its backward needs (``ctx.save_for_backward``). Inside
``saved_tensors_hooks(pack_hook, unpack_hook)`` each tensor saved is handed to
``pack_hook`` instead, and the node keeps only what the hook returns; backward gets
the tensor back from ``unpack_hook``. That is where saved activations can be moved
to the CPU (``save_on_cpu``), compressed, or dropped and recomputed (non-reentrant
checkpointing is built this way in PyTorch).
"""
from .node import Node, _saved_tensors_hooks

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_disabled = []  # error messages of the disable_saved_tensors_hooks blocks we are in


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Within this block, tensors saved for backward go through ``pack_hook`` and come back through
    ``unpack_hook``. Blocks nest: the innermost pair is used. ``pack_hook`` runs with grad mode off."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _saved_tensors_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_tensors_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """Saved tensors wait for backward on the CPU and go back to their device when unpacked."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.cpu()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801
    """Code that must not be run under saved-tensor hooks: entering ``saved_tensors_hooks`` in this
    block raises ``error_message``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _disabled.pop()

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.autograd.graph")
