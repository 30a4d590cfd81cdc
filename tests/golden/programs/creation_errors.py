# torch.tensor on data that is not a rectangular array of numbers.
import torch
from golden_helpers import attempt


attempt("ragged row", lambda: torch.tensor([[1, 2], [3]]))
attempt("ragged later row", lambda: torch.tensor([[1], [2, 3]]))
attempt("ragged depth 2", lambda: torch.tensor([[[1, 2]], [[1]]]))
attempt("number among rows", lambda: torch.tensor([[1, 2], 3]))
attempt("string", lambda: torch.tensor("a"))
attempt("None", lambda: torch.tensor(None))
attempt("None inside", lambda: torch.tensor([1., None]))
attempt("empty rows", lambda: torch.tensor([[], []]).shape)
attempt("tensors inside", lambda: torch.tensor([torch.tensor(1.), torch.tensor(2.)]))
