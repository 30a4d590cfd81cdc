# mistake: gives the result's batch dim as b's batch dim (it is where the batch went in b, not in the product)
# expect: 0 points for mm_rule
def mm_rule(a, a_bdim, b, b_bdim):
    a = a if a_bdim is None else a.movedim(a_bdim, 0)
    b = b if b_bdim is None else b.movedim(b_bdim, 0)
    out = torch.matmul(a, b)
    return out, (b_bdim if b_bdim is not None else 0) % out.ndim
