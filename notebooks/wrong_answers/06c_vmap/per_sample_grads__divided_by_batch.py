# divides each sample's loss by the batch size, as the batch's mean would weigh it
def per_sample_grads(params, xs, ys):
    def sample_loss(params, x, y):
        return loss(params, x.unsqueeze(0), y.unsqueeze(0)) / len(xs)
    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, xs, ys)
