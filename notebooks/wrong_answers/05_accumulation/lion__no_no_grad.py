# Updates the parameters in place without torch.no_grad(): autograd refuses an in-place change of a leaf
# that requires grad.
class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                p.mul_(1 - lr * decay)
                p.add_((m * beta1 + p.grad * (1 - beta1)).sign(), alpha=-lr)
                m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
        return loss
