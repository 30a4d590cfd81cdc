# one torch.mm per sample, stacked: right values, a loop
def mm_rule(a, a_bdim, b, b_bdim):
    size = a.shape[a_bdim] if a_bdim is not None else b.shape[b_bdim]
    a_samples = a.unbind(a_bdim) if a_bdim is not None else [a] * size
    b_samples = b.unbind(b_bdim) if b_bdim is not None else [b] * size
    return torch.stack([torch.mm(x, y) for x, y in zip(a_samples, b_samples)]), 0
