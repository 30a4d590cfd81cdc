"""torch.autograd.graph: the graph's nodes, and hooks on the tensors they save.

A node keeps the tensors its backward needs (``ctx.save_for_backward``). Inside
``saved_tensors_hooks(pack_hook, unpack_hook)`` each tensor saved is handed to
``pack_hook`` instead, and the node keeps only what the hook returns; backward gets
the tensor back from ``unpack_hook``. That is where saved activations can be moved
to the CPU (``save_on_cpu``), compressed, or dropped and recomputed (non-reentrant
checkpointing is built this way in PyTorch).
"""
import contextlib
import functools

from . import engine
from .node import Node, RemovableHandle, _saved_tensors_hooks

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors"]

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


class _MultiHandle(RemovableHandle):
    """Removes the hook from every tensor at once."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """One hook on several tensors. ``mode="all"``: ``fn(grads)`` runs once the gradients of all the
    tensors this backward call reaches are computed (``None`` for the others); ``mode="any"``:
    ``fn(grad)`` runs with the first of them. Built, as in PyTorch, from ordinary tensor hooks that
    tell backward calls apart by the engine's graph task id."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "all":
        hooks = _all_grads_hooks(tensors, fn)
        return _MultiHandle(tuple(t.register_hook(hook) for t, hook in zip(tensors, hooks)))
    ran = set()  # the backward calls whose first gradient fn has seen

    @functools.wraps(fn)
    def first_grad(grad):
        task = engine.current_graph_task_id()
        if task not in ran:
            ran.add(task)
            fn(grad)
    return _MultiHandle(tuple(t.register_hook(first_grad) for t in tensors if t.requires_grad))


def _all_grads_hooks(tensors, fn):
    """One hook per tensor; each fills its slot of the backward call's buffer, and the last to come
    calls ``fn``. How many will come is asked of the engine at the first."""
    if not all(t.requires_grad for t in tensors):
        raise AssertionError("Expected gradient function to be set")
    nodes = [t.grad_fn if t.grad_fn is not None else t._accumulator() for t in tensors]
    expected, buffers = {}, {}

    def hook_for(index):
        def hook(grad):
            task = engine.current_graph_task_id()
            if task not in buffers:
                buffers[task] = [None] * len(tensors)
                expected[task] = sum(map(engine.will_engine_execute_node, nodes))
            buffers[task][index] = grad
            expected[task] -= 1
            if expected[task] == 0:
                del expected[task]
                fn(buffers.pop(task))
        return hook
    return [hook_for(i) for i in range(len(tensors))]


class _AllowMutationOnSavedContext:
    """The tensors saved within one ``allow_mutation_on_saved_tensors`` block."""

    def __init__(self):
        self.original = {}  # handle -> the saved tensor's values when saved

    def clear(self):
        self.original.clear()


_mutation_allowed = []  # the allow_mutation_on_saved_tensors block we are in (at most one)
_OUTSIDE_MESSAGE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph "
                    "was originally recorded.")  # (PyTorch's text, its missing space included)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward in this block may be changed in place afterwards: backward uses
    the values they had when saved. PyTorch copies a saved tensor when it is changed; chibigrad
    copies it when it is saved (the same values, more memory held). Forward and backward must both
    run in the block."""
    if _mutation_allowed:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(tensor):
        handle = object()
        ctx.original[handle] = tensor.detach().clone()
        return handle

    def unpack(handle):
        if not _mutation_allowed or handle not in ctx.original:
            raise AssertionError(_OUTSIDE_MESSAGE)
        return ctx.original[handle]

    with saved_tensors_hooks(pack, unpack):
        _mutation_allowed.append(ctx)
        try:
            yield ctx
        finally:
            ctx.clear()
            _mutation_allowed.pop()


from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.autograd.graph")
