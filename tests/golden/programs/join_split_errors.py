# Joining, splitting, permuting and expanding with sizes that do not fit: PyTorch's texts.
import torch


def attempt(label, fn):
    try:
        r = fn()
        print(label, "ok", r)
    except Exception as e:
        print(label, type(e).__name__, "|", e)


a, b = torch.ones(2, 3), torch.ones(2, 2)
attempt("cat sizes dim 0", lambda: torch.cat([a, b]))
attempt("cat sizes dim 1", lambda: torch.cat([a, torch.ones(3, 3)], 1))
attempt("cat third tensor", lambda: torch.cat([a, a, torch.ones(2, 4)]))
attempt("cat ndim", lambda: torch.cat([a, torch.ones(3)]))
attempt("cat empty list", lambda: torch.cat([]))
attempt("cat ok", lambda: torch.cat([a, b], 1).shape)
attempt("stack sizes", lambda: torch.stack([torch.ones(2), torch.ones(3)]))
attempt("stack third", lambda: torch.stack([torch.ones(2), torch.ones(2), torch.ones(3)]))
attempt("stack empty list", lambda: torch.stack([]))
attempt("split sizes", lambda: a.split([1, 1], 1))
attempt("split 0", lambda: a.split(0, 1))
attempt("chunk 0", lambda: a.chunk(0, 1))
attempt("chunk -1", lambda: a.chunk(-1))
attempt("permute length", lambda: a.permute(0, 1, 2))
attempt("permute repeated", lambda: a.permute(1, -1))
attempt("permute out of range", lambda: a.permute(0, 2))
attempt("permute ok", lambda: a.permute(-1, 0).shape)
attempt("expand trailing", lambda: a.expand(2, 3, 4))
attempt("expand leading", lambda: a.expand(3, 3))
attempt("expand fewer sizes", lambda: a.expand(3))
attempt("expand -1 new dim", lambda: a.expand(-1, 2, 3))
attempt("expand ok", lambda: a.expand(4, -1, 3).shape)
attempt("reshape two -1", lambda: a.reshape(-1, -1))
attempt("view two -1", lambda: a.view(-1, 2, -1))
attempt("where sizes", lambda: torch.where(torch.ones(2) > 0, torch.ones(3), torch.ones(2)))
attempt("where other", lambda: torch.where(torch.ones(3) > 0, torch.ones(3), torch.ones(2)))
