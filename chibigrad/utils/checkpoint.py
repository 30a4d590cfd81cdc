"""Gradient checkpointing: trade compute for memory.

Backward needs the activations forward saved, and in a deep network they
dominate memory. ``checkpoint(function, *args)`` keeps none of ``function``'s
activations; when backward needs them it runs ``function`` again. The
segment's activations exist only during its own backward; the price is one
extra forward pass. PyTorch has two variants, and so does chibigrad:

- ``use_reentrant=True``: one custom ``autograd.Function`` whose forward runs
  ``function`` without recording a graph and keeps only its inputs, and whose
  backward records ``function`` again and calls the engine on it (the engine is
  *re-entered*). The output's grad_fn is ``CheckpointFunctionBackward``.
- ``use_reentrant=False`` (recommended): ``function`` is recorded as usual, so
  the output's grad_fn is the real last op, but under saved-tensor hooks
  (``autograd.graph.saved_tensors_hooks``) that keep only a number per saved
  tensor. The first time backward unpacks one, ``function`` runs again and every
  saved tensor is served from that recomputation. Keyword arguments work, and
  parameters get gradients even when no input requires one. What the hooks hold
  for backward (the inputs, then the recomputed tensors) counts as saved in
  ``chibigrad.memory``, as the tensors of the reentrant variant do.
"""
import contextlib
import warnings
import weakref

from .. import creation, memory
from ..autograd import Function, backward, enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..tensor import Tensor


class CheckpointFunction(Function):
    """Forward without a graph; backward recomputes one, then backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            # nothing is recorded then, so parameters inside run_function get no gradient either
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        ctx.run_function = run_function
        # Dropout must draw the same numbers when forward runs again in backward.
        ctx.rng_state = creation.get_rng_state() if preserve_rng_state else None
        # Tensors go to save_for_backward (freed after backward, version-checked), the rest stay here.
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with no_grad():  # the point of it all: no graph, so no activations are kept
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = saved
        # Fresh leaves: the recomputed graph ends here, and their .grad is what we return.
        detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in inputs]
        with _replayed_rng(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if isinstance(out, Tensor) and out.requires_grad]
        if pairs:  # parameters used inside run_function accumulate their .grad here
            backward([out for out, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)


@contextlib.contextmanager
def _replayed_rng(state):
    """Run the block with the random generator as it was in forward, then restore it."""
    if state is None:
        yield
        return
    current = creation.get_rng_state()
    creation.set_rng_state(state)
    try:
        yield
    finally:
        creation.set_rng_state(current)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, recomputed in backward instead of keeping its activations."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
                      "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    recomputation = _Recomputation(function, args, kwargs, preserve_rng_state)
    with saved_tensors_hooks(recomputation.pack, recomputation.unpack):
        return function(*args, **kwargs)


class CheckpointError(RuntimeError):
    pass


class _Recomputation:
    """The saved-tensor hooks of one non-reentrant checkpoint: forward's saved tensors are dropped and
    numbered; the first unpack runs ``function`` again and keeps what it saves, in the same order."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = creation.get_rng_state() if preserve_rng_state else None
        self.saved_in_forward, self.recomputed = 0, None
        _count_as_saved(self, [a for a in args if isinstance(a, Tensor)])

    def pack(self, tensor):
        self.saved_in_forward += 1
        return self.saved_in_forward - 1  # only its place in the order

    def unpack(self, index):
        if self.recomputed is None:
            self.recomputed = self._recompute()
        return self.recomputed[index]

    def _recompute(self):
        saved = []
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in self.args]
        with _replayed_rng(self.rng_state), enable_grad(), saved_tensors_hooks(_keep_in(saved), _unused):
            self.function(*inputs, **self.kwargs)
        if len(saved) != self.saved_in_forward:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {self.saved_in_forward}\n"
                f"Number of tensors saved during recomputation: {len(saved)}")
        _count_as_saved(self, saved)
        return saved


def _count_as_saved(owner, tensors):
    """Count ``tensors`` as saved in ``chibigrad.memory`` until ``owner`` dies: the hooks, not the nodes, hold
    them for backward, and without this the recomputed activations of a segment's backward would be missing
    from ``memory.max_saved()``."""
    if not memory._counting:
        return
    for t in tensors:
        memory.track_saved(t._array)
        weakref.finalize(owner, memory.untrack_saved, t._array).atexit = False


def _keep_in(saved):
    def pack(tensor):
        saved.append(tensor.detach())
    return pack


def _unused(packed):
    raise AssertionError("the recomputed graph is never differentiated")


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` in order, checkpointing all but the last of ``segments`` equal segments.

    Only each segment's input is kept; the last segment runs normally since
    its backward comes first anyway.
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default "
                      "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children"):  # an nn.Sequential: its layers
        functions = list(functions.children())
    size = len(functions) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(_segment(functions[start:end]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _segment(functions[end:])(input)


def _segment(functions):
    def run(input):
        for f in functions:
            input = f(input)
        return input
    return run
