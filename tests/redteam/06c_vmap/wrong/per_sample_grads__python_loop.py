# mistake: a Python loop of grad calls, one backward pass per sample (right values; not what the exercise asks)
# expect: 0 points for per_sample_grads
def per_sample_grads(params, xs, ys):
    rows = [grad(loss)(params, xs[i:i + 1], ys[i:i + 1]) for i in range(xs.shape[0])]
    return tuple(torch.stack([r[k] for r in rows]) for k in range(len(params)))
