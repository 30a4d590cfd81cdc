# a batched index: every sample picks with the first sample's indices
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    ndim = x.ndim - (x_bdim is not None)
    if index_bdim is not None:
        index = index.movedim(index_bdim, 0)
        size, index = index.shape[0], index[0]
        if x_bdim is None:
            x, x_bdim = x.unsqueeze(0).expand(size, *x.shape), 0
    return torch.index_select(x.movedim(x_bdim, 0), dim % ndim + 1, index), 0
