# mistake: shifts dim by one for the batch, negative dims too (-1 becomes 0, the batch)
# expect: 0 points for index_select_rule
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    if x_bdim is None:
        x, x_bdim = x.unsqueeze(0).expand(index.shape[index_bdim], *x.shape), 0
    x = x.movedim(x_bdim, 0)
    d = dim + 1
    if index_bdim is None:
        return torch.index_select(x, d, index), 0
    index = index.movedim(index_bdim, 0)
    return torch.stack([torch.index_select(x[i], d - 1, index[i]) for i in range(x.shape[0])]), 0
