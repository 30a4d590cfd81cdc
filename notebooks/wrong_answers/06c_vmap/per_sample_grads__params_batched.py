# vmaps over the parameters too (in_dims=0 for everything)
def per_sample_grads(params, xs, ys):
    def sample_loss(params, x, y):
        return loss(params, x.unsqueeze(0), y.unsqueeze(0))
    return vmap(grad(sample_loss))(params, xs, ys)
