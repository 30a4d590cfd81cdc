# torch.matmul on batches: the nodes it records (mm/mv after folding, or expand, reshape and bmm),
# its values and gradients, and its errors.
import torch
from golden_helpers import attempt, graph


SHAPES = [((2, 3, 4), (4, 5)), ((2, 3, 4), (4,)), ((2, 3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)),
          ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((2, 2, 3, 4), (4,)),
          ((4,), (3, 2, 4, 1)), ((1, 3, 4), (1, 4, 5)), ((1, 1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (1, 4, 5)),
          ((1, 3, 4), (2, 2, 4, 5)), ((4,), (1, 4, 5)), ((1, 2, 3, 4), (2, 1, 4, 5))]

for sa, sb in SHAPES:
    for grads in ((True, True), (True, False), (False, True)):
        a = (torch.arange(1., 1 + torch.Size(sa).numel()).reshape(sa) / 10).requires_grad_(grads[0])
        b = (torch.arange(1., 1 + torch.Size(sb).numel()).reshape(sb) / 10 - 0.5).requires_grad_(grads[1])
        out = a @ b
        print(sa, sb, grads, tuple(out.shape), graph(out.grad_fn, max_depth=6))
        if grads == (True, True):
            out.pow(2).sum().backward()
            print("  sum", round(out.sum().item(), 2), "grads", round(a.grad.sum().item(), 2), round(b.grad.sum().item(), 2))

# A batch times a matrix that needs no gradient folds only when the batch's rows line up in memory.
b = torch.ones(2, 5)
a = torch.ones(4, 3, 2, requires_grad=True)
print("transposed batch", graph((a.transpose(0, 1) @ b).grad_fn, max_depth=6))
print("contiguous batch", graph((a @ b).grad_fn, max_depth=6))

attempt("batch sizes", lambda: torch.ones(2, 3, 4) @ torch.ones(3, 4, 5))
attempt("inner sizes, bmm", lambda: torch.ones(2, 3, 4) @ torch.ones(2, 3, 5))
attempt("inner sizes, folded", lambda: torch.ones(2, 3, 4) @ torch.ones(3, 5))
attempt("inner sizes, vector", lambda: torch.ones(2, 3, 4) @ torch.ones(3))
attempt("vector into a batch", lambda: torch.ones(4) @ torch.ones(2, 3, 5))
attempt("matrix into a batch", lambda: torch.ones(3, 4) @ torch.ones(2, 3, 5))
attempt("matrix that needs grad into a batch", lambda: torch.ones(3, 4, requires_grad=True) @ torch.ones(2, 3, 6))
attempt("4-D", lambda: torch.ones(2, 1, 3, 4) @ torch.ones(5, 3, 2))
attempt("dtypes, bmm", lambda: torch.ones(2, 3, 4) @ torch.ones(2, 4, 5, dtype=torch.float64))
attempt("dtypes, folded", lambda: torch.ones(2, 3, 4) @ torch.ones(4, 5, dtype=torch.float64))
attempt("dtypes, matrix left", lambda: torch.ones(3, 4) @ torch.ones(2, 4, 5, dtype=torch.float64))
attempt("bmm itself", lambda: torch.bmm(torch.ones(2, 3, 4), torch.ones(3, 4, 5)))
