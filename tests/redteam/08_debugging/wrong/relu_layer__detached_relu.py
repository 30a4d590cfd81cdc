# mistake: computes the ReLU on a detached copy, so no gradient reaches w1 and b1
# expect: 0 points for relu_layer
def two_layer(x, w1, b1, w2):
    h = x @ w1 + b1
    h = h.detach().clamp(min=0)
    return h @ w2
