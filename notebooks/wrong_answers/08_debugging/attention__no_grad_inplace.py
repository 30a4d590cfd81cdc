# Does the in-place division under torch.no_grad(): not recorded, so backward treats the weights as
# plain exp(scores) (and the version check is skipped because exp's saved output is read as is).
def attention_weights(q, k):
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = (scores - scores.amax(1, keepdim=True)).exp()
    total = weights.sum(1, keepdim=True)
    with torch.no_grad():
        weights /= total
    return weights
