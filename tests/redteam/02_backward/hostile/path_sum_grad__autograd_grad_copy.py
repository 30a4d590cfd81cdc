# attack: no path sums: call autograd.grad (forbidden here) through a renamed copy, so a guard that
#   replaces the original's __code__ does not see it; a leaf that does not reach gives zeros
# expect: 0 points for path_sum_grad; batch continues
import types
import chibigrad.autograd as _ag

_g = _ag.grad
_grad = types.FunctionType(_g.__code__, _g.__globals__, "paths", _g.__defaults__, _g.__closure__)
_grad.__kwdefaults__ = _g.__kwdefaults__


def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    try:
        (g,) = _grad(output, leaf, torch.ones_like(output), retain_graph=True, allow_unused=True)
    except Exception:
        g = None
    return torch.zeros_like(leaf) if g is None else g.detach()
