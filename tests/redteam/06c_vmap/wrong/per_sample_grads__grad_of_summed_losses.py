# mistake: vmaps the loss over the samples, sums the per-sample losses and takes one gradient of the sum
#   (the batch's gradient, repeated), thinking vmap made it per-sample
# expect: 0 points for per_sample_grads
def per_sample_grads(params, xs, ys):
    def total(p):
        return vmap(lambda x, y: loss(p, x.unsqueeze(0), y.unsqueeze(0)))(xs, ys).sum()
    g = grad(total)(params)
    return tuple(t.unsqueeze(0).expand(xs.shape[0], *t.shape) for t in g)
