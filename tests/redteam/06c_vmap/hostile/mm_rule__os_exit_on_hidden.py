# attack: a right answer on the visible shapes; on any other shape (a hidden case) the kernel exits with status 0
#   so a grader that reads "no error" as a pass might score it
# expect: 0 points for mm_rule (the hidden cases are never answered); the other exercises graded as usual;
#   batch continues
import os

_VISIBLE = {(2, 3), (3, 2)}


def mm_rule(a, a_bdim, b, b_bdim):
    sa = tuple(s for k, s in enumerate(a.shape) if k != a_bdim)
    sb = tuple(s for k, s in enumerate(b.shape) if k != b_bdim)
    if sa not in _VISIBLE or sb not in _VISIBLE:
        os._exit(0)
    a = a if a_bdim is None else a.movedim(a_bdim, 0)
    b = b if b_bdim is None else b.movedim(b_bdim, 0)
    return torch.matmul(a, b), 0
