"""Optimizer: the base class that keeps parameter groups and per-parameter state.

``param_groups`` is a list of dicts, each with its ``params`` and its own
hyper-parameters (so different layers can have different learning rates);
``state`` maps each parameter to what the method remembers between steps
(momentum buffers, Adam's moment estimates).
"""
import collections
import itertools

import numpy as np

from ..autograd.grad_mode import enable_grad
from ..nn.modules.module import zero_grads
from ..tensor import Tensor


class _RequiredParameter:
    """Marks a hyper-parameter every group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params.type()}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group of parameters, filling in missing hyper-parameters from the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        param_group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the gradients before the next backward (else they add up).

        ``set_to_none=True`` drops the tensors: no memory, no work, and
        ``p.grad is None`` until the next backward.
        """
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure=None):
        """Update every parameter that has a gradient; ``closure`` re-evaluates the loss if given.

        Subclasses implement ``_update(param, grad, state, group)`` on numpy
        arrays: the update is not part of any graph, and working in place on
        the arrays keeps a training step as fast as hand-written numpy.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = self.state.get(p, {})
                self._update(p._array, grad._array, state, group)
                if state:  # an entry once there is something to keep, as in PyTorch (plain SGD keeps nothing)
                    self.state[p] = state
                p._bump_version()  # an in-place change, as param.add_() is in PyTorch
        return loss

    def _update(self, param, grad, state, group):
        raise NotImplementedError

    # ---- saving and loading ---------------------------------------------------
    def state_dict(self):
        """State and groups with parameters replaced by their position (0, 1, ...), so it can be saved."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state (copied) from ``state_dict``, matching parameters by position."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        params = dict(zip(itertools.chain.from_iterable(s["params"] for s in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in self.param_groups)))
        self.state = collections.defaultdict(dict)
        for index, state in state_dict["state"].items():
            self.state[params[index]] = {k: _copied(v, params[index], k) for k, v in state.items()}
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"


_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_hyper_parameters(**values):
    """PyTorch's argument checks: each of these hyper-parameters must be 0 or more."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_LABELS.get(name, name + ' value')}: {value}")


def check_differentiable(differentiable):
    """PyTorch's ``foreach``, ``fused`` and ``capturable`` choose among implementations of the
    same update; chibigrad has one, so they are only kept in the param groups (printed and
    saved as PyTorch's). ``differentiable`` changes what a step is, and is not implemented."""
    if differentiable:
        raise NotImplementedError("chibigrad's optimizers update the parameters' arrays in place: differentiable=True "
                                  "(a step that autograd can differentiate) is not implemented")


def _copied(value, param, key):
    """A tensor in loaded state gets its own copy, so two optimizers never share a buffer,
    on its parameter's device (``step`` stays on the CPU), as PyTorch loads it."""
    if not isinstance(value, Tensor):
        return value
    if key != "step":
        value = value.to(param.device)
    return value.detach().clone()


def fused_multiply_add(a, b, c):
    """``a * b + c`` rounded once at the end, as PyTorch's CPU kernels compute it.

    ``x.add(y, alpha=a)``, ``x.addcmul(y, z, value=v)`` and ``x.lerp(y, w)``
    are fused multiply-adds on the CPU: no rounding between the product and the
    sum. Rounding the product first (plain numpy) differs in the last bit for
    about a third of the elements, and after a few optimizer steps those bits
    show in printed losses. For float32 the product of two float32 numbers is
    exact in float64, so float64 arithmetic gives the fused result. (Python
    numbers are rounded to the tensor's dtype first, as PyTorch does.)

    The widening costs time: SGD's update ``param -= lr * grad`` stays plain,
    as the MLP benchmark's budget needs (fused, that step took 2.3x the numpy
    floor instead of 1.2-1.3x), so SGD's weights can differ from PyTorch's in
    the last bit.
    """
    if c.dtype != np.float32:
        return a * b + c
    return (_widened(a) * _widened(b) + c).astype(np.float32)


def _widened(x):
    """A float32 array or number, exactly, as float64."""
    return x.astype(np.float64) if hasattr(x, "astype") else np.float64(np.float32(x))


def lerp_(start, end, weight):
    """``start.lerp_(end, weight)``: ``start + weight * (end - start)``, in place, fused as PyTorch computes it
    (from ``end`` backwards when weight >= 0.5, which is more accurate there)."""
    diff = end - start
    if weight < 0.5:
        start[...] = fused_multiply_add(weight, diff, start)
    else:
        start[...] = fused_multiply_add(start.dtype.type(weight) - 1, diff, end)  # (weight - 1 in the tensor's dtype)
