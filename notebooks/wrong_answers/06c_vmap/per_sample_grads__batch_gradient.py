# the gradient of the batch's mean loss: one gradient for all samples, not one per sample
def per_sample_grads(params, xs, ys):
    return grad(loss)(params, xs, ys)
