# one index_select per sample, stacked: right values, a loop
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    size = x.shape[x_bdim] if x_bdim is not None else index.shape[index_bdim]
    xs = x.unbind(x_bdim) if x_bdim is not None else [x] * size
    indices = index.unbind(index_bdim) if index_bdim is not None else [index] * size
    return torch.stack([torch.index_select(s, dim, i) for s, i in zip(xs, indices)]), 0
