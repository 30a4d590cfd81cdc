# Replaces .data by torch.no_grad(): the clamp is still not recorded, so backward never masks the
# gradient where the pre-activation was negative.
def two_layer(x, w1, b1, w2):
    h = x @ w1 + b1
    with torch.no_grad():
        h.clamp_(min=0)
    return h @ w2
