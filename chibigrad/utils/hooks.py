"""Module backward hooks: ``hook(module, grad_input, grad_output)``, as ``torch.utils.hooks`` has them.

A module is not a node of the graph (its forward may record many), so PyTorch brackets
it with two identity nodes, ``BackwardHookFunctionBackward``: one on the module's
outputs, whose incoming gradients are the module's ``grad_output``, and one on its
inputs, whose incoming gradients are its ``grad_input``. Pre-hooks on those two nodes
are all it takes: the engine already runs a node's pre-hooks and lets them replace the
gradients, which is how a module hook's return value replaces ``grad_input``.
"""
import functools
import warnings

from ..autograd import grad_mode
from ..autograd.function import Function
from ..autograd.node import RemovableHandle  # noqa: F401 - torch.utils.hooks.RemovableHandle
from ..tensor import Tensor


class BackwardHookFunction(Function):
    """The identity: its node in the graph is where a module's backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        return tuple(a.detach() for a in args)  # new tensors sharing the data, to carry the new grad_fn

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """Bracket one call of ``module`` with identity nodes and run its backward hooks from them.

    ``setup_input_hook`` before forward, ``setup_output_hook`` after; backward then
    meets the output node first (it keeps ``grad_output``), then the input node,
    where the hooks see both and may return a new ``grad_input``.
    """

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = None  # which of the args passed through the input node (None: none did)

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        if not positions or not grad_mode.is_grad_enabled():
            return args
        self.input_positions = positions
        wrapped = BackwardHookFunction.apply(*[args[i] for i in positions])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        wrapped[0].grad_fn.register_prehook(self._input_node_reached)
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def setup_output_hook(self, output):
        single = isinstance(output, Tensor)
        outputs = (output,) if single else output
        if not isinstance(outputs, tuple) or not grad_mode.is_grad_enabled():
            return output
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not positions:
            return output
        wrapped = BackwardHookFunction.apply(*[outputs[i] for i in positions])
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        wrapped[0].grad_fn.register_prehook(self._output_node_reached)
        self.n_outputs, self.output_positions = len(outputs), positions
        outputs = list(outputs)
        for i, t in zip(positions, wrapped):
            outputs[i] = t
        return outputs[0] if single else tuple(outputs)

    def _output_node_reached(self, grads):
        """Keep ``grad_output``; pre-hooks may replace it. Without a differentiable input, run the hooks now."""
        grad_output = self._spread(grads, self.output_positions, self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, grad_output)
            if result is not None:
                grad_output = self._check(result, len(grad_output), "grad_output")
        self.grad_outputs = grad_output
        if self.input_positions is None:
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=5)
            grad_input = (None,) * self.n_inputs
            for hook in self.user_hooks:
                result = hook(self.module, grad_input, grad_output)
                if result is not None and not (isinstance(result, tuple) and all(g is None for g in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
        return tuple(grad_output[i] for i in self.output_positions)

    def _input_node_reached(self, grads):
        """Call each hook with (grad_input, grad_output); what one returns becomes grad_input."""
        grad_input = self._spread(grads, self.input_positions, self.n_inputs)
        for hook in self.user_hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is not None:
                grad_input = self._check(result, len(grad_input), "grad_input")
        return tuple(grad_input[i] for i in self.input_positions)

    @staticmethod
    def _spread(grads, positions, n):
        """One entry per argument, None where the argument took no part in autograd."""
        full = [None] * n
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    @staticmethod
    def _check(result, expected, what):
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)  # PyTorch's docs return lists
        if len(result) != expected:
            raise RuntimeError(f"Backward hook returned an invalid number of {what}, got {len(result)}, but "
                               f"expected {expected}")
        return result


def attach_non_full_backward_hooks(module, hooks, args, output):
    """``register_backward_hook``'s hooks: on the node of the output's first tensor, the forward's
    last op, so ``grad_input`` is that op's input gradients. PyTorch warns where they differ from
    the module's, in the cases it can see (``Module._maybe_warn_non_full_backward_hook``)."""
    first = output
    while not isinstance(first, Tensor):
        first = next(v for v in first.values() if isinstance(v, Tensor)) if isinstance(first, dict) else first[0]
    grad_fn = first.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(functools.partial(hook, module))
    problem = _non_full_hook_problem(args, output, grad_fn)
    if problem:
        warnings.warn(f"Using {problem} is deprecated and will be removed in future versions. {_MISSING[problem]}",
                      FutureWarning, stacklevel=3)


_USE_FULL = "Please use register_full_backward_hook to get the documented behavior."
_MISSING = {
    "non-full backward hooks on a Module that does not return a single Tensor or a tuple of Tensors":
        f"This hook will be missing some of the grad_output. {_USE_FULL}",
    "non-full backward hooks on a Module that does not take as input a single Tensor or a tuple of Tensors":
        f"This hook will be missing some of the grad_input. {_USE_FULL}",
    "a non-full backward hook when outputs are nested in python data structure":
        "This hook will be missing some grad_output.",
    "a non-full backward hook when outputs are generated by different autograd Nodes":
        f"This hook will be missing some grad_output. {_USE_FULL}",
    "a non-full backward hook when the forward contains multiple autograd Nodes":
        f"This hook will be missing some grad_input. {_USE_FULL}",
}


def _non_full_hook_problem(args, output, grad_fn):
    """Which of PyTorch's deprecation warnings applies (the key into ``_MISSING``), or None."""
    outputs = (output,) if isinstance(output, Tensor) else output
    if not (isinstance(outputs, tuple) and all(isinstance(o, Tensor) for o in outputs)):
        return "non-full backward hooks on a Module that does not return a single Tensor or a tuple of Tensors"
    if not all(isinstance(a, Tensor) for a in args):
        return "non-full backward hooks on a Module that does not take as input a single Tensor or a tuple of Tensors"
    output_nodes = {o.grad_fn for o in outputs if o.grad_fn is not None}
    if len(output_nodes) == 0 or (len(output_nodes) == 1 and grad_fn not in output_nodes):
        return "a non-full backward hook when outputs are nested in python data structure"
    if len(output_nodes) > 1:
        return "a non-full backward hook when outputs are generated by different autograd Nodes"
    input_nodes = {a.grad_fn for a in args if a.grad_fn is not None}
    if input_nodes != {node for node, _ in grad_fn.next_functions}:
        return "a non-full backward hook when the forward contains multiple autograd Nodes"
    return None
