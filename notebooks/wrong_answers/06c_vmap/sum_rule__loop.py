# a loop over the samples: right values, but one sum per sample (what vmap's slow fallback does)
def sum_rule(x, x_bdim, dim, keepdim=False):
    sums = [(s.sum() if dim is None else s.sum(dim, keepdim)) for s in x.unbind(x_bdim)]
    return torch.stack(sums), 0
