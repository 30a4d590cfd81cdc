# Logs the incoming gradient with a tensor hook (before it is added to .grad): when gradients
# accumulate over several backward passes, that is not the .grad the optimizer uses.
class GradNormLogger:
    def __init__(self, model):
        self.norms, self.handles = {}, []
        for name, param in model.named_parameters():
            if param.requires_grad:
                self.norms[name] = []
                hook = (lambda values: lambda grad: values.append(float(grad.norm())))(self.norms[name])
                self.handles.append(param.register_hook(hook))

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
