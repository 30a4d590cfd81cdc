# written for the (3, 4) samples of the examples: wraps dim as if every sample had two dims
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    dim = dim % 2 + 1
    if index_bdim is None:
        return torch.index_select(x.movedim(x_bdim, 0), dim, index), 0
    index = index.movedim(index_bdim, 0)
    size = index.shape[0]
    x = x.unsqueeze(0).expand(size, *x.shape) if x_bdim is None else x.movedim(x_bdim, 0)
    rows = torch.arange(size).unsqueeze(1)
    return x.movedim(dim, 1)[rows, index].movedim(1, dim), 0
