# Shapes that do not fit: PyTorch's error texts for broadcasting and matrix products.
import torch
from golden_helpers import attempt


attempt("add", lambda: torch.ones(2, 3) + torch.ones(3, 2))
attempt("mul 1-d", lambda: torch.ones(3) * torch.ones(4))
attempt("sub 3-d", lambda: torch.ones(2, 1, 3) - torch.ones(4, 2))
attempt("mm", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
attempt("dot", lambda: torch.ones(3) @ torch.ones(4))
attempt("mv", lambda: torch.ones(2, 3) @ torch.ones(2))
attempt("expand", lambda: torch.ones(2, 3).expand(3, 3))
attempt("view", lambda: torch.ones(2, 3).view(4, 2))
attempt("reshape", lambda: torch.ones(2, 3).reshape(5))
