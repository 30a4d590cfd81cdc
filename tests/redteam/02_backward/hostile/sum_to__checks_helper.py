# attack: answer with the grader's own reference: import the hidden checks package and call any helper
#   whose name says sum_to (e.g. a reference implementation kept next to the checks); failing that,
#   call Tensor.sum_to_size (forbidden here) through a renamed copy of the function
# expect: 0 points for sum_to; batch continues
import importlib, sys, types

_helper = None
for _name in ("autograder.checks.a02_backward", "autograder.checks", "autograder.checks.contract"):
    try:
        _mod = sys.modules.get(_name) or importlib.import_module(_name)
    except Exception as err:
        print("import", _name, type(err).__name__)
        continue
    for _attr, _fn in vars(_mod).items():
        if "sum_to" in _attr and callable(_fn):
            _helper = _fn
            print("found reference helper", _name, _attr)
_size = torch.Tensor.sum_to_size
_copy = types.FunctionType(_size.__code__, _size.__globals__, "reduce", _size.__defaults__, _size.__closure__)


def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    if _helper is not None:
        try:
            out = _helper(grad, shape)
            return out if isinstance(out, torch.Tensor) else torch.tensor(out)
        except Exception:
            pass
    return _copy(grad, shape)
