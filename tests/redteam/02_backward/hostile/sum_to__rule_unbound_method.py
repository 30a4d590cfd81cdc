# attack: Tensor.sum_to_size taken as an unbound method from the class's __dict__ under another name
# expect: 0 points for sum_to; integrity.csv row
import chibigrad as _cg

_reduce = _cg.Tensor.__dict__["sum_to_size"]


def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    return _reduce(grad, tuple(shape))
