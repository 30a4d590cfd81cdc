# mistake: makes the error go away by dividing through .data, which hides the change from backward:
#   no error, wrong gradients
# expect: 0 points for attention
def attention_weights(q, k):
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = (scores - scores.amax(1, keepdim=True)).exp()
    weights.data /= weights.data.sum(1, keepdim=True)
    return weights
