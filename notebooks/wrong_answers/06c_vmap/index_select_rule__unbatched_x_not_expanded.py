# an unbatched x is taken as if its first dim were the batch
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    ndim = x.ndim - 1
    dim = dim % ndim + 1
    x = x.movedim(x_bdim if x_bdim is not None else 0, 0)
    if index_bdim is None:
        return torch.index_select(x, dim, index), 0
    index = index.movedim(index_bdim, 0)
    rows = torch.arange(index.shape[0]).unsqueeze(1)
    return x.movedim(dim, 1)[rows, index].movedim(1, dim), 0
