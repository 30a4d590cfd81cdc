# mistake: uses param.register_hook, which sees each backward's incoming gradient, not the accumulated
#   .grad the optimizer uses
# expect: 0 points for grad_norm_logger
class GradNormLogger:
    def __init__(self, model):
        self.norms, self.handles = {}, []
        for name, p in model.named_parameters():
            if p.requires_grad:
                self.norms[name] = []
                self.handles.append(p.register_hook(
                    lambda g, name=name: self.norms[name].append(float(np.linalg.norm(g.detach().numpy())))))

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []
