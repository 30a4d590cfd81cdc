"""The engine's speed tricks, kept apart from the code the book prints.

Each one is kept only while it pays at least 5% on ``benchmarks/bench_tiny_ops.py`` or
``benchmarks/bench_mlp_step.py`` (the numbers are in benchmarks/README.md). Each has a
plain meaning, written next to its call; with that meaning in its place chibigrad
computes the same gradients, only slower.
"""
import sys

from . import grad_mode


def add(total, grad):
    """``total + grad`` for two gradients of one buffer, summed into ``total`` in place when
    nothing but the buffer holds it, as PyTorch's engine does: no new Tensor and no Function
    call. With create_graph the sum is recorded, so it is a plain ``+``."""
    # Three references to the Tensor (the buffer, this call, getrefcount's argument), one to its
    # array (the Tensor): nobody else can see the change. (Not a view: its base could.)
    if (not grad_mode._state.enabled and sys.getrefcount(total) == 3 and sys.getrefcount(total._array) == 2
            and total._array.base is None):
        total._array += grad._array
        return total
    return total + grad
