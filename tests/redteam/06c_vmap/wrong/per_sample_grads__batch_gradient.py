# mistake: one gradient of the batch's mean loss, repeated for every sample
# expect: 0 points for per_sample_grads
def per_sample_grads(params, xs, ys):
    g = grad(loss)(params, xs, ys)
    return tuple(t.unsqueeze(0).expand(xs.shape[0], *t.shape) for t in g)
