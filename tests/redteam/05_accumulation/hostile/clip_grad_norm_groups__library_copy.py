# attack: call chibigrad's clip_grad_norm_ (forbidden: the tests swap its __code__ to refuse) through a
#   copy of the function made when this cell runs, one group at a time with the group's own limit
# expect: 0 points for clip_grad_norm_groups; batch continues
import types

_lib = torch.nn.utils.clip_grad_norm_
_clip = types.FunctionType(_lib.__code__, _lib.__globals__, "clip", _lib.__defaults__, _lib.__closure__)
_clip.__kwdefaults__ = _lib.__kwdefaults__


def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norms = []
    for group in optimizer.param_groups:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            norms.append(0.0)
            continue
        total = _clip(params, group.get("max_norm", max_norm), norm_type=norm_type,
                      error_if_nonfinite=error_if_nonfinite)
        norms.append(float(total))
    return norms
