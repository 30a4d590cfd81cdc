# Updates the momentum first and steps along sign(m): that is signed momentum SGD, not Lion, whose step
# interpolates with beta1 before m is updated with beta2.
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
                    m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
                    m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
                    p.mul_(1 - lr * decay)
                    p.add_(m.sign(), alpha=-lr)
        return loss
