# What a node saved, as PyTorch shows it: grad_fn._saved_<name> and _raw_saved_<name>, before and after
# backward, and for a custom Function (saved_tensors, _raw_saved_tensors).
import torch
import torch.nn.functional as F
from golden_helpers import attempt

a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
b = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
v = torch.tensor([1.0, 2.0], requires_grad=True)


def describe(t, name):
    fn = t.grad_fn
    shown = []
    for attr in ("self", "other", "result", "exponent", "mat1", "mat2", "vec", "tensor"):
        try:
            value = getattr(fn, "_saved_" + attr)
        except AttributeError:
            continue
        if isinstance(value, torch.Tensor):
            value = ("self" if value is a else "other" if value is b else "result" if value is t
                     else [round(x, 4) for x in value.flatten().tolist()])
        shown.append(f"{attr}={value}")
    print(name, type(fn).__name__, shown)


for name, t in {"mul": a * b, "div": a / b, "pow": a ** 2, "pow tensor": a ** b, "exp": a.exp(), "log": a.log(),
                "sqrt": a.sqrt(), "sin": a.sin(), "cos": a.cos(), "tanh": a.tanh(), "sigmoid": a.sigmoid(),
                "relu": a.relu(), "abs": a.abs(), "reciprocal": a.reciprocal(), "clamp": a.clamp(0, 3),
                "maximum": torch.maximum(a, b), "mm": a @ b, "mv": a @ v, "dot": v.dot(v), "softmax": a.softmax(0),
                "log_softmax": a.log_softmax(1), "linear": F.linear(a, b, v), "amax": a.amax()}.items():
    describe(t, name)

c = torch.tensor([3.0, 4.0])
y = v * c
print("one side", y.grad_fn._saved_self, y.grad_fn._saved_other)
print(y.grad_fn._saved_other is c, type(y.grad_fn._raw_saved_other).__name__)
e = v.exp()
print(e.grad_fn._saved_result.equal(e), e.grad_fn._saved_result is e)
e.sum().backward()
attempt("after backward", lambda: e.grad_fn._saved_result)
attempt("no such name", lambda: e.grad_fn._saved_weight)
p = v ** 3
p.sum().backward()
print("value after backward", p.grad_fn._saved_exponent)


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x


s = Scale.apply(v, c)
print([t.tolist() for t in s.grad_fn.saved_tensors], len(s.grad_fn._raw_saved_tensors))
