# mistake: scales with p.grad = p.grad * scale, which makes a new tensor instead of scaling in place
#   (anything holding the old gradient tensor does not see the clipping)
# expect: 0 points for clip_grad_norm_groups
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    norms = []
    for group in optimizer.param_groups:
        grads = [p for p in group["params"] if p.grad is not None]
        if not grads:
            norms.append(0.0)
            continue
        if norm_type == math.inf:
            total = max(float(p.grad.abs().max()) for p in grads)
        else:
            total = sum(float((p.grad.abs() ** norm_type).sum()) for p in grads) ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(NONFINITE.format(float(norm_type)))
        scale = min(1.0, group.get("max_norm", max_norm) / (total + 1e-6))
        for p in grads:
            p.grad = p.grad * scale
        norms.append(total)
    return norms
