# The targets students get wrong: dtype, batch size and shape, as PyTorch reports them.
import torch
import torch.nn.functional as F
from golden_helpers import attempt


logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)
attempt("float class indices", lambda: F.cross_entropy(logits, torch.tensor([0., 2.])))
attempt("nll_loss float targets", lambda: F.nll_loss(logits.log_softmax(1), torch.tensor([0., 2.])))
attempt("batch size", lambda: F.cross_entropy(logits, torch.tensor([0, 1, 2])))
attempt("class out of range", lambda: F.cross_entropy(logits, torch.tensor([0, 3])))
attempt("ok", lambda: F.cross_entropy(logits, torch.tensor([0, 2])))
attempt("mse broadcast", lambda: F.mse_loss(torch.ones(2, 1), torch.zeros(2)))
attempt("mse sizes", lambda: F.mse_loss(torch.ones(2), torch.zeros(3)))
attempt("labels of shape (N, 1)", lambda: F.cross_entropy(logits, torch.tensor([[0], [2]])))
attempt("labels squeezed", lambda: F.cross_entropy(logits, torch.tensor([[0], [2]]).squeeze(1)))
