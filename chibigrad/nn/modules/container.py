"""Containers: Sequential runs modules in order, ModuleList just holds them."""
import collections

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
