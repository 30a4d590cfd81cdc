# Uses a tensor hook that returns the norm it computed: a tensor hook's return value replaces the
# gradient, so every parameter's .grad becomes its gradient's norm.
class GradNormLogger:
    def __init__(self, model):
        self.norms, self.handles = {}, []
        for name, param in model.named_parameters():
            if param.requires_grad:
                self.norms[name] = []

                def hook(grad, values=self.norms[name]):
                    norm = grad.norm()
                    values.append(norm.item())
                    return norm
                self.handles.append(param.register_hook(hook))

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
