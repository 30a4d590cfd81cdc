# mistake: updates the momentum m before taking the step's sign (Adam's order), so the step uses the
#   new m instead of the old one
# expect: 0 points for lion
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
                lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "exp_avg" not in state:
                        state["exp_avg"] = torch.zeros_like(p)
                    m = state["exp_avg"]
                    m.mul_(b2).add_(p.grad * (1 - b2))
                    p.mul_(1 - lr * wd)
                    p.sub_(lr * torch.sign(b1 * m + (1 - b1) * p.grad))
        return loss
