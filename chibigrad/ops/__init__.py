"""The differentiable operations: each declared in one place, its Function and its function side by side.

An op lives in one of six modules: ``pointwise.py`` (element-wise arithmetic, exp, relu, clamp,
comparisons), ``reduction.py`` (sum, mean, max, softmax, ...), ``shape.py`` (views, reshape,
indexing, cat, split), ``linalg.py`` (matmul, mm, linear), ``selection.py`` (gather, scatter,
sort) and ``conv.py`` (convolution and pooling, reached through ``torch.nn.functional``). There, an op is two things, one after the other:

- its ``Function`` class: ``forward`` computes on numpy arrays, ``backward`` on tensors, the
  same mechanism a student's own ``autograd.Function`` uses;
- right below it, the function a program calls, declared with ``register``::

      class Mul(Function):
          node_name = "MulBackward0"
          ...forward, backward...

      @register("mul", "__mul__", "__rmul__")
      def mul(a, other, *, out=None):
          return write_out("mul", Mul.apply(a, operand(other, a)), out)

``register(*methods, torch=True)`` makes that one function ``torch.mul`` and each Tensor method
it names: ``x.mul(y)``, ``x * y`` and ``2 * x`` all call ``mul``; the tensor is its first argument.
``torch=False`` declares methods only (``x.view(...)``, ``x.add_(y)``: PyTorch has no
``torch.view``), and a tuple of names gives aliases (``torch.clip`` is ``torch.clamp``). So to
read an op, open its module and find the class: its forward, its backward, and below them every
name under which a program reaches it. To add an op, write both there; nothing else changes.

Importing this package (``chibigrad/__init__.py`` does so right after ``Tensor``) runs every
``register``. ``torch_functions`` collects the torch-level functions; they are this package's
names and ``__all__``, which ``chibigrad/__init__.py`` exports as the torch namespace. ``Tensor``
itself (``chibigrad/tensor.py``) keeps what is the tensor: its data, ``grad``, ``requires_grad``,
``grad_fn``, ``backward``, versions, conversion and ``repr``; it never imports this package.
"""
from . import conv, linalg, pointwise, reduction, selection, shape  # noqa: F401 - importing them declares every op
from ._util import torch_functions
from .linalg import linear  # noqa: F401 - F.linear's op (torch.nn.functional.linear)

globals().update(torch_functions)
__all__ = list(torch_functions)
