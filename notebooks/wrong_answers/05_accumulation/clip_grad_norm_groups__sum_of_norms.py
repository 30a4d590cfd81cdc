# Adds the tensors' norms instead of combining them as one vector (the norm of the norms): too large a total.
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norm_type, totals = float(norm_type), []
    for group in optimizer.param_groups:
        grads = [p.grad for p in group["params"] if p.grad is not None]
        if norm_type == math.inf:
            total = max((g.abs().max().item() for g in grads), default=0.0)
        else:
            total = sum((g.abs() ** norm_type).sum().item() ** (1 / norm_type) for g in grads)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(NONFINITE.format(norm_type))
        with torch.no_grad():
            for g in grads:
                g.mul_(min(1.0, group.get("max_norm", max_norm) / (total + 1e-6)))
        totals.append(float(total))
    return totals
