# mistake: removes the in-place division and the max shift with it: exp of large scores overflows
# expect: 0 points for attention
def attention_weights(q, k):
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = scores.exp()
    return weights / weights.sum(1, keepdim=True)
