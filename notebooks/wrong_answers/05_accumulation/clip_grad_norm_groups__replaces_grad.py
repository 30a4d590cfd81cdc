# Assigns p.grad = p.grad * scale: right values, but new tensors; whoever holds the old .grad (a hook, a
# gradient buffer) never sees the clipping.
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norm_type, totals = float(norm_type), []
    for group in optimizer.param_groups:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            totals.append(0.0)
            continue
        if norm_type == math.inf:
            total = max(p.grad.abs().max().item() for p in params)
        else:
            total = sum((p.grad.abs() ** norm_type).sum().item() for p in params) ** (1 / norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(NONFINITE.format(norm_type))
        for p in params:
            p.grad = p.grad * min(1.0, group.get("max_norm", max_norm) / (total + 1e-6))
        totals.append(total)
    return totals
