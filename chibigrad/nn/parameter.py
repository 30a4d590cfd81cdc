"""nn.Parameter: a tensor that a Module registers as one of its weights."""
import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad by default.

    It is an ordinary Tensor in every computation; being of this class is
    what makes ``module.weight = Parameter(...)`` show up in
    ``module.parameters()`` (see ``Module.__setattr__``). Like PyTorch, it
    shares ``data``'s memory and version counter instead of copying.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = Tensor(np.empty(0, dtype=np.float32))
        p = object.__new__(cls)
        p._array = data._array
        p._vc = data._version_counter
        p.requires_grad = requires_grad
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would copy)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__
