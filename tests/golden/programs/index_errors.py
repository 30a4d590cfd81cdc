# Indices out of range, too many indices and masks of the wrong shape: PyTorch's IndexError texts.
import torch
from golden_helpers import attempt


x = torch.arange(6.).reshape(2, 3)
attempt("int", lambda: x[5])
attempt("negative int", lambda: x[-3])
attempt("second dim", lambda: x[1, 5])
attempt("slice then int", lambda: x[:, 3])
attempt("too many", lambda: x[0, 0, 0])
attempt("too many with ellipsis", lambda: x[..., 1, 2, 3])
attempt("0-d", lambda: torch.tensor(1.)[0])
attempt("tensor index", lambda: x[torch.tensor([0, 2])])
attempt("list index", lambda: torch.ones(3)[[5]])
attempt("two tensor indices", lambda: x[torch.tensor([0]), torch.tensor([5])])
attempt("mask too short", lambda: torch.ones(3)[torch.tensor([True, False])])
attempt("mask on dim 1", lambda: x[:, torch.tensor([True, False])])
attempt("2-d mask", lambda: x[torch.tensor([[True, False, True]])])
attempt("mask after None", lambda: x[None, :, torch.tensor([True])])
attempt("mask after ellipsis", lambda: x[..., torch.tensor([True, False])])
attempt("in range", lambda: x[-2, -1])


def assign(key, value):
    y = torch.zeros(3)
    y[key] = value
    return y


attempt("setitem int", lambda: assign(5, 1.))
attempt("setitem mask", lambda: assign(torch.tensor([True]), 1.))
attempt("setitem ok", lambda: assign(torch.tensor([True, False, True]), 1.))
