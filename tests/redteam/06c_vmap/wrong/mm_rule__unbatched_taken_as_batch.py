# mistake: treats an unbatched operand as if its first dim were the batch (moves dim 0 to the front: a no-op)
#   and multiplies with bmm
# expect: 0 points for mm_rule
def mm_rule(a, a_bdim, b, b_bdim):
    a = a.movedim(a_bdim if a_bdim is not None else 0, 0)
    b = b.movedim(b_bdim if b_bdim is not None else 0, 0)
    if a_bdim is None:
        a = a.unsqueeze(0).expand(b.shape[0], *a.shape[1:]) if a.ndim == 2 else a
    return torch.matmul(a, b), 0
