# What a student used to numpy writes: axis= and keepdims= (PyTorch accepts both), float() of a
# vector, .T on a vector or a batch, shape[2] or size(2) past the last dim.
import torch


def attempt(label, fn):
    try:
        r = fn()
        print(label, "ok", r)
    except Exception as e:
        print(label, type(e).__name__, "|", e)


x = torch.arange(6.).reshape(2, 3)
attempt("sum axis", lambda: x.sum(axis=1))
attempt("mean axis keepdims", lambda: x.mean(axis=0, keepdims=True))
attempt("torch.sum axis keepdims", lambda: torch.sum(x, axis=1, keepdims=True))
attempt("max axis", lambda: x.max(axis=1))
attempt("amax axis", lambda: torch.amax(x, axis=0))
attempt("argmax axis", lambda: x.argmax(axis=1))
attempt("std axis", lambda: x.std(axis=1))
attempt("var axis", lambda: torch.var(x, axis=0))
attempt("softmax axis", lambda: x.softmax(axis=1))
attempt("logsumexp axis", lambda: x.logsumexp(axis=1))
attempt("cat axis", lambda: torch.cat([x, x], axis=1))
attempt("stack axis", lambda: torch.stack([x, x], axis=2).shape)
attempt("unsqueeze axis", lambda: x.unsqueeze(axis=0).shape)
attempt("squeeze axis", lambda: x[None].squeeze(axis=0).shape)
attempt("all axis", lambda: (x > 0).all(axis=1))
attempt("any dim out of range", lambda: (x > 0).any(2))
attempt("float of a vector", lambda: float(torch.ones(2)))
attempt("int of a vector", lambda: int(torch.ones(2)))
attempt("bool of a vector", lambda: bool(torch.ones(2)))
attempt("item of a vector", lambda: torch.ones(2).item())
attempt("float of one element", lambda: (float(torch.tensor([1.5])), int(torch.tensor([[2.7]]))))
attempt("size(2)", lambda: x.size(2))
attempt("size(-3)", lambda: x.size(-3))
attempt("size(-1)", lambda: x.size(-1))
attempt("0-d size(0)", lambda: torch.tensor(1.).size(0))
attempt("shape[2]", lambda: x.shape[2])
attempt("T of a vector", lambda: torch.ones(3).T.shape)
attempt("T of a vector again", lambda: torch.ones(3).T.shape)
attempt("T of a batch", lambda: torch.ones(2, 3, 4).T.shape)
attempt("T of a scalar", lambda: torch.tensor(1.).T)
attempt("T of a matrix", lambda: x.T.shape)
