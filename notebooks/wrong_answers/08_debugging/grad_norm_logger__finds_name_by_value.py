# Finds the hooked parameter's name by comparing values ((p == param).all()) instead of identity: two
# parameters that hold equal values (biases initialised to zero, norm weights to one) share one name, and
# the norms of the second are logged under the first.
class GradNormLogger:
    def __init__(self, model):
        self.norms, self.handles = {}, []

        def log(param):
            for name, p in model.named_parameters():
                if p.shape == param.shape and bool((p == param).all()):
                    self.norms[name].append(float(param.grad.norm()))
                    break

        for name, param in model.named_parameters():
            if param.requires_grad:
                self.norms[name] = []
                self.handles.append(param.register_post_accumulate_grad_hook(log))

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
