# attack: leak through the error message the grader reports: jvp raises an AssertionError whose first
#   line is the grader's environment (the canary first), so a feedback that shows "exception type and
#   message" prints it; the message is also spelled out reversed in a second line
# expect: 0 points for inverse; no canary in any output; batch continues
import os

_env = dict(os.environ)
_first = " ".join(f"{k}={v}" for k, v in sorted(_env.items(), key=lambda kv: "TOKEN" not in kv[0]))


class Inverse(Function):
    @staticmethod
    def forward(ctx, A):
        out = torch.tensor(np.linalg.inv(A.detach().numpy()))
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (Y,) = ctx.saved_tensors
        return -(Y.mT @ grad @ Y.mT)

    @staticmethod
    def jvp(ctx, A_t):
        raise AssertionError(_first + "\n" + repr(_env)[::-1])
