"""Containers: Sequential runs modules in order; the lists and dicts of modules or parameters hold them."""
import collections

from ..parameter import Parameter
from .module import Module, _addindent


class Sequential(Module):
    """Feeds the input through each module in turn; also indexable, sliceable and iterable."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(items[idx]))
        return items[_index(idx, len(items))][1]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list whose modules are registered, so their parameters belong to the owner.

    A plain Python list of layers would be invisible to ``parameters()``,
    ``state_dict()`` and ``train()``: a common bug this class exists to avoid.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(items[idx])
        return items[_index(idx, len(items))]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self))), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def __repr__(self):
        """Runs of identical modules print once, as ``(0-2): 3 x Linear(...)``, like PyTorch."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                label = f"({start})" if i - start == 1 else f"({start}-{i - 1}): {i - start} x"
                sep = ": " if i - start == 1 else " "
                lines.append(label + sep + _addindent(reprs[start], 2))
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


def _index(idx, length):
    """A list index for ``idx``, negative allowed, with PyTorch's error when out of range."""
    if not -length <= idx < length:
        raise IndexError(f"index {idx} is out of range")
    return idx % length


class ModuleDict(Module):
    """A dict whose modules are registered (like ModuleList, keyed by name); keeps insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """From a dict (or ModuleDict) or from (key, module) pairs, as ``dict.update``."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module


class ParameterList(Module):
    """A list of parameters registered as ``"0"``, ``"1"``, ...: a plain list of tensors would be
    invisible to ``parameters()``, so an optimizer would never see them."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx, param):
        self.register_parameter(str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def append(self, value):
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe(p, p.dtype)}" for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters registered under their keys (see ParameterList)."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, param):
        self.register_parameter(key, _as_parameter(param))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters):
        """PyTorch sorts the keys of a plain mapping (a dict's order was not kept when this was
        written); an OrderedDict, a ParameterDict or a list of pairs keeps its order."""
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            pairs = parameters.items()
        elif hasattr(parameters, "items"):
            pairs = sorted(parameters.items())
        else:
            pairs = parameters
        for key, param in pairs:
            self[key] = param

    def extra_repr(self):
        # (PyTorch's ParameterDict names the type as torch.typename does, ParameterList by dtype)
        return "\n".join(f"  ({k}): {_describe(p, p.type())}" for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")


def _as_parameter(value):
    """A plain tensor stored in a parameter container becomes a Parameter, as in PyTorch."""
    return value if isinstance(value, Parameter) else Parameter(value)


def _describe(p, type_name):
    size = "x".join(str(n) for n in p.shape)
    device = f" ({p.device})" if p.device.type == "cuda" else ""
    return f"{'Parameter' if isinstance(p, Parameter) else 'Tensor'} containing: [{type_name} of size {size}{device}]"
