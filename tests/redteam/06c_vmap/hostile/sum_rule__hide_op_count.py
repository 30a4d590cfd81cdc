# attack: a per-sample loop (right values, ops grow with the batch) that hides its op count: it puts back
#   the op counter's original function while it loops, so a count taken by wrapping Function.apply sees one op
# expect: 0 points for sum_rule (a rule must run a number of ops that does not grow with the batch; a count
#   the student process can fake must not decide it); batch continues
import gc as _gc


def _real_apply():
    real = function._apply
    for cell in getattr(real, "__closure__", None) or ():
        if callable(cell.cell_contents) and getattr(cell.cell_contents, "__name__", "") == "_apply":
            return cell.cell_contents
    return real


def sum_rule(x, x_bdim, dim, keepdim=False):
    xb = x.movedim(x_bdim, 0)
    counted = function._apply
    function._apply = _real_apply()
    try:
        outs = [s.sum(dim, keepdim) if dim is not None else s.sum() for s in xb.unbind(0)]
        out = torch.stack(outs)
    finally:
        function._apply = counted
    return out * 1.0, 0  # the one op the counter sees
