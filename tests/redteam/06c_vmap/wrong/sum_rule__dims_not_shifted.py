# mistake: moves the batch to the front but passes `dim` on unchanged (forgets that the sample's dims moved one
#   to the right)
# expect: 0 points for sum_rule
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        return x.reshape(x.shape[0], -1).sum(1), 0
    return x.sum(dim, keepdim), 0
