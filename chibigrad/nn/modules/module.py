"""nn.Module: the base class of every layer and model.

A Module keeps three ordered dicts: ``_parameters`` (trainable tensors),
``_buffers`` (state that is saved but not trained, like BatchNorm's running
mean) and ``_modules`` (sub-modules). Assigning an attribute files the value
into the right dict (``__setattr__``), and reading it finds it there again
(``__getattr__``). Everything else -- ``parameters()``, ``state_dict()``,
``train()``, ``zero_grad()`` -- is a walk over these dicts.
"""
import collections

from ...autograd.grad_mode import no_grad
from ...autograd.node import RemovableHandle
from ...tensor import Tensor, _parse_to
from ...utils.hooks import BackwardHook, attach_non_full_backward_hooks
from ..parameter import Parameter



class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it could not match (only possible with strict=False)."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class Module:
    """Base class for all neural network modules: subclass it and define ``forward``."""

    def __init__(self):
        # object.__setattr__: our own __setattr__ needs these dicts to exist first
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_backward_hooks", [])
        object.__setattr__(self, "_backward_pre_hooks", [])
        object.__setattr__(self, "_non_full_backward_hooks", [])
        object.__setattr__(self, "_is_full_backward_hook", None)  # which kind was registered first

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        if (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or self._non_full_backward_hooks):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        """Pre-hooks may replace the inputs, forward hooks the output; backward hooks bracket forward."""
        for hook in list(self._forward_pre_hooks):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward_hook = BackwardHook(self, list(self._backward_hooks), list(self._backward_pre_hooks))
            args = backward_hook.setup_input_hook(args)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_hook is not None:
            output = backward_hook.setup_output_hook(output)
        if self._non_full_backward_hooks:
            attach_non_full_backward_hooks(self, list(self._non_full_backward_hooks), args, output)
        return output

    def register_forward_pre_hook(self, hook):
        """``hook(module, args)`` runs before forward; it may return new args."""
        self._forward_pre_hooks.append(hook)
        return RemovableHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """``hook(module, args, output)`` runs after forward; it may return a new output."""
        self._forward_hooks.append(hook)
        return RemovableHandle(self._forward_hooks, hook)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs once the gradients with respect to the module's
        inputs are computed; it may return a new ``grad_input`` (see ``torch.utils.hooks``)."""
        self._choose_backward_hook_kind(full=True)
        self._backward_hooks.insert(0 if prepend else len(self._backward_hooks), hook)
        return RemovableHandle(self._backward_hooks, hook)

    def register_backward_hook(self, hook):
        """The deprecated hook: it attaches to the node of the forward's *last* op, so ``grad_input``
        is that op's input gradients, not the module's (torch.utils.hooks warns when they differ)."""
        self._choose_backward_hook_kind(full=False)
        self._non_full_backward_hooks.append(hook)
        return RemovableHandle(self._non_full_backward_hooks, hook)

    def _choose_backward_hook_kind(self, full):
        """One module takes one kind of backward hook, for good (removing the hooks does not reset it)."""
        if self._is_full_backward_hook is not None and self._is_full_backward_hook != full:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients with respect to the module's outputs are
        ready, before the module's own backward; it may return a new ``grad_output``."""
        self._backward_pre_hooks.insert(0 if prepend else len(self._backward_pre_hooks), hook)
        return RemovableHandle(self._backward_pre_hooks, hook)

    # ---- registering attributes ---------------------------------------------
    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=self._parameters)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=self._modules)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        """Remove ``name`` from every other place before filing it in ``keep`` (keeping its position there)."""
        self.__dict__.pop(name, None)
        for store in (self._parameters, self._buffers, self._modules):
            if store is not keep:
                store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        # only called when normal lookup fails: look in our three dicts
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add state that is not trained; ``persistent=False`` keeps it out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under ``name`` (``self.name = module`` does the same)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        _check_name(self, name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    # ---- walking the tree -----------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(name, module)`` for this module and all below it, each module once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members, prefix, recurse, remove_duplicate=True):
        """Shared walk of named_parameters and named_buffers; a tensor shared by two modules is yielded once."""
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn):
        """Call ``fn`` on every sub-module (children first), then on self; e.g. custom init."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- training helpers -----------------------------------------------------
    def train(self, mode=True):
        """Set training mode here and below: Dropout and BatchNorm behave differently in eval."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Freeze (False) or unfreeze every parameter, e.g. for fine-tuning."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Forget accumulated gradients; None (the default) frees them instead of filling with zeros."""
        zero_grads(self.parameters(), set_to_none)

    def _apply(self, fn):
        """Replace every parameter's and buffer's data by ``fn(data)`` (used by ``to``/``double``)."""
        for module in self.modules():
            for store in (module._parameters, module._buffers):
                for t in store.values():
                    if t is not None:
                        t.data = fn(t.data)
                        if t.grad is not None:
                            t.grad.data = fn(t.grad.data)
        return self

    def to(self, *args, **kwargs):
        """Move parameters and buffers (and their grads) to a device, and/or change floating point ones
        to a dtype. In place: the Parameter objects stay, so an optimizer made before still holds them."""
        device, dtype = _parse_to(args, kwargs)
        return self._apply(lambda t: t.to(device=device, dtype=dtype if t.is_floating_point() else None))

    def float(self):
        from ... import float32
        return self.to(float32)

    def double(self):
        from ... import float64
        return self.to(float64)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    # ---- saving and loading ---------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Every parameter and persistent buffer by dotted name; detached unless ``keep_vars``."""
        if destination is None:
            destination = collections.OrderedDict()
        # shared (tied) modules appear under every name, as in PyTorch
        for name, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            dot = name + "." if name else ""
            for key, value in module._local_state():
                destination[dot + key] = value if keep_vars else value.detach()
        return destination

    def _local_state(self):
        """This module's own ``(name, tensor)`` pairs that belong in a state_dict."""
        for name, param in self._parameters.items():
            if param is not None:
                yield name, param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                yield name, buf

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values from ``state_dict`` into this module's tensors, in place.

        Missing or unexpected keys are an error when ``strict``; a shape
        mismatch always is. The message lists every problem at once, as
        PyTorch's does.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = [f"size mismatch for {k}: copying a param with shape {state_dict[k].shape} from checkpoint, "
                  f"the shape in current model is {own[k].shape}."
                  for k in own if k in state_dict and state_dict[k].shape != own[k].shape]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                    "\n\t".join(errors)))
        with no_grad():
            for key, tensor in own.items():
                if key in state_dict:
                    tensor.copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------
    def extra_repr(self):
        """The text inside the parentheses, e.g. ``in_features=10, out_features=5, bias=True``."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _addindent(text, spaces):
    """Indent every line but the first (how nested modules are printed)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _check_name(module, name, kind, store):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def _type_name(value):
    """PyTorch's ``torch.typename``: ``torch.FloatTensor`` for tensors, else the class path."""
    if isinstance(value, Tensor):
        return value.type()
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def zero_grads(params, set_to_none=True):
    """What Module.zero_grad and Optimizer.zero_grad do to each parameter."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:  # (as PyTorch: a .grad that is a view may not be detached in place)
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            with no_grad():
                p.grad.zero_()
