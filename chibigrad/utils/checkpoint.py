"""Gradient checkpointing: trade compute for memory.

Backward needs the activations forward saved, and in a deep network they
dominate memory. ``checkpoint(function, *args)`` runs ``function`` without
recording a graph and keeps only its inputs. When backward reaches that point
it runs ``function`` again, recording this time, and backpropagates through
the fresh graph. The segment's activations exist only during its own
backward; the price is one extra forward pass.

The whole mechanism is one custom ``autograd.Function`` whose backward calls
the engine again (PyTorch calls this the *reentrant* variant).

``use_reentrant=False`` uses the same Function, with two additions that give
it the non-reentrant variant's behaviour: keyword arguments are allowed (and
tensors among them get gradients), and the call is recorded even when no
input requires grad, so the parameters inside ``function`` still get theirs.
Unlike PyTorch's, the output's ``grad_fn`` is ``CheckpointFunctionBackward``
in both variants, and ``autograd.grad`` does not reach parameters inside a
checkpoint (the inner backward accumulates into their ``.grad``).
"""
import contextlib
import warnings

from .. import creation
from ..autograd import Function, backward, enable_grad, no_grad
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
    names, n = tuple(kwargs), len(args)

    def run(*flat):  # keyword arguments travel as positional ones, after args
        return function(*flat[:n], **dict(zip(names, flat[n:n + len(names)])))

    anchor = creation.empty(0, requires_grad=True)  # forces recording; receives no gradient
    return CheckpointFunction.apply(run, preserve_rng_state, *args, *kwargs.values(), anchor)


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
