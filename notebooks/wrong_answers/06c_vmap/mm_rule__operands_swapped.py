# when only b is batched, puts the batch on the left: b @ a instead of a @ b
def mm_rule(a, a_bdim, b, b_bdim):
    if a_bdim is not None and b_bdim is not None:
        return torch.bmm(a.movedim(a_bdim, 0), b.movedim(b_bdim, 0)), 0
    if a_bdim is not None:
        return torch.matmul(a.movedim(a_bdim, 0), b), 0
    return torch.matmul(b.movedim(b_bdim, 0), a), 0
