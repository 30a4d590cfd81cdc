# the function under vmap uses the whole batch xs, ys (the outer names), not its own sample
def per_sample_grads(params, xs, ys):
    def sample_loss(params, x, y):
        return loss(params, xs, ys)
    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, xs, ys)
