# A dim out of range is an IndexError naming the valid range, for every op that takes a dim
# (numpy would wrap it around or raise its own AxisError); repeated dims are refused too.
import torch
from golden_helpers import attempt


x = torch.arange(6.).reshape(2, 3)
for dim in (2, -3, 3, -1):
    attempt(f"sum {dim}", lambda: x.sum(dim))
    attempt(f"sum keepdim {dim}", lambda: x.sum(dim, keepdim=True))
    attempt(f"mean {dim}", lambda: x.mean(dim))
    attempt(f"max {dim}", lambda: x.max(dim))
    attempt(f"min {dim}", lambda: x.min(dim))
    attempt(f"amax {dim}", lambda: x.amax(dim))
    attempt(f"prod {dim}", lambda: x.prod(dim))
    attempt(f"argmax {dim}", lambda: x.argmax(dim))
    attempt(f"var {dim}", lambda: x.var(dim))
    attempt(f"std {dim}", lambda: x.std(dim))
    attempt(f"norm {dim}", lambda: x.norm(dim=dim))
    attempt(f"softmax {dim}", lambda: x.softmax(dim))
    attempt(f"log_softmax {dim}", lambda: x.log_softmax(dim))
    attempt(f"logsumexp {dim}", lambda: x.logsumexp(dim))
    attempt(f"squeeze {dim}", lambda: x.squeeze(dim))
    attempt(f"transpose {dim}", lambda: x.transpose(0, dim))
    attempt(f"flatten {dim}", lambda: x.flatten(dim))
    attempt(f"split {dim}", lambda: x.split(1, dim))
    attempt(f"chunk {dim}", lambda: x.chunk(2, dim))
    attempt(f"unbind {dim}", lambda: x.unbind(dim))
    attempt(f"cat {dim}", lambda: torch.cat([x, x], dim))
for dim in (2, -3, 3, -4):
    attempt(f"unsqueeze {dim}", lambda: x.unsqueeze(dim).shape)
    attempt(f"stack {dim}", lambda: torch.stack([x, x], dim).shape)
attempt("sum dims out of range", lambda: x.sum((0, 2)))
attempt("sum dims repeated", lambda: x.sum((0, -2)))
attempt("mean dims repeated", lambda: x.mean(dim=(1, -1)))
attempt("norm dims", lambda: x.norm(dim=(0, 1)))
attempt("std dims", lambda: x.std(dim=(0, 5)))
attempt("flatten start after end", lambda: x.flatten(1, 0))
attempt("flatten 1 -1", lambda: x.flatten(1, -1))

s = torch.tensor(5., requires_grad=True)  # a 0-d tensor takes dims 0 and -1
attempt("0-d sum 0", lambda: s.sum(0))
attempt("0-d sum -1 keepdim", lambda: s.sum(-1, keepdim=True))
attempt("0-d sum 1", lambda: s.sum(1))
attempt("0-d mean -1", lambda: s.mean(-1))
attempt("0-d max 0", lambda: s.max(0))
attempt("0-d argmax 0", lambda: s.argmax(0))
attempt("0-d softmax 0", lambda: s.softmax(0))
attempt("0-d log_softmax -1", lambda: s.log_softmax(-1))
attempt("0-d squeeze 0", lambda: s.squeeze(0))
attempt("0-d unsqueeze -1", lambda: s.unsqueeze(-1))
attempt("0-d unsqueeze 1", lambda: s.unsqueeze(1))
attempt("0-d transpose", lambda: s.transpose(0, -1))
attempt("0-d flatten", lambda: s.flatten(0))
y = s.sum(0) * 3
y.backward()
print("0-d sum(0) backward", y, s.grad)
