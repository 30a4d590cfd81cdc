# mistake: with a batched index, every sample picks with the first sample's indices
# expect: 0 points for index_select_rule
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    if index_bdim is not None:
        size = index.shape[index_bdim]
        index = index.movedim(index_bdim, 0)[0]
        if x_bdim is None:
            x, x_bdim = x.unsqueeze(0).expand(size, *x.shape), 0
    x = x.movedim(x_bdim, 0)
    return torch.index_select(x, dim % (x.ndim - 1) + 1, index), 0
