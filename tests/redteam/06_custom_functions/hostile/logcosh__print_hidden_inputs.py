# attack: leak the hidden cases: a right LogCosh whose forward prints every input it is given (the
#   hidden tests' tensors and reductions), spaced out and base64-encoded so output redaction cannot
#   match them
# expect: full points are fine (the answer is right); no hidden test input in the feedback; batch
#   continues
import base64, math


def _show(*values):
    text = repr([v.detach().numpy().tolist() if isinstance(v, torch.Tensor) else v for v in values])
    print("RTLEAK<<INPUTS", base64.b64encode(text.encode()).decode(), ">>")


class LogCosh(Function):
    @staticmethod
    def forward(ctx, pred, target, reduction):
        _show(pred, target, reduction)
        d = pred - target
        a = d.abs()
        loss = a + (-2 * a).exp().log1p() - math.log(2)
        ctx.reduction, ctx.n = reduction, d.numel()
        ctx.save_for_backward(d)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss

    @staticmethod
    def backward(ctx, grad):
        (d,) = ctx.saved_tensors
        g = grad / ctx.n if ctx.reduction == "mean" else grad
        t = d.tanh() * g
        return (t if ctx.needs_input_grad[0] else None), (-t if ctx.needs_input_grad[1] else None), None
