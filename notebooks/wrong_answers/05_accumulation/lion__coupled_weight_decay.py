# Adds weight_decay * p to the gradient (L2, as in Adam) instead of shrinking p: under sign() the decay
# vanishes into the step's direction.
class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad + decay * p
                    m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                    p.add_((m * beta1 + grad * (1 - beta1)).sign(), alpha=-lr)
                    m.mul_(beta2).add_(grad, alpha=1 - beta2)
        return loss
