# Keeps only the handle of the last hook registered (the variable is overwritten in the loop), so
# remove() takes out one hook and the others go on logging.
class GradNormLogger:
    def __init__(self, model):
        self.norms, names = {}, {}

        def log(param):
            self.norms[names[id(param)]].append(float(param.grad.norm()))

        for name, param in model.named_parameters():
            if param.requires_grad:
                self.norms[name], names[id(param)] = [], name
                self.handle = param.register_post_accumulate_grad_hook(log)

    def remove(self):
        self.handle.remove()
