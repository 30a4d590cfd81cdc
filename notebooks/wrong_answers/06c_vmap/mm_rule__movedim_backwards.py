# moves the batch dims the wrong way round: movedim(0, bdim) instead of movedim(bdim, 0)
def mm_rule(a, a_bdim, b, b_bdim):
    if a_bdim is not None:
        a = a.movedim(0, a_bdim)
    if b_bdim is not None:
        b = b.movedim(0, b_bdim)
    return torch.matmul(a, b), 0
