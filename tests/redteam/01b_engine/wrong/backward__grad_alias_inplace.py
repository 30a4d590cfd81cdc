# mistake: stores the incoming array itself as leaf.tensor.grad and later adds with +=, so two leaves
#   that received the very same array (p + q) share one .grad and a second backward doubles both
# expect: 0 points for backward
def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    root = tensor.node
    counts, stack, seen = {root: 0}, [root], {root}
    while stack:
        node = stack.pop()
        for child in node.edges:
            if child is not None:
                counts[child] = counts.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
    grads = {root: np.ones(tensor.shape) if gradient is None else np.asarray(gradient, dtype=np.float64)}
    ready = [root]
    while ready:
        node = ready.pop()
        g = grads.pop(node)
        if isinstance(node, Leaf):
            if node.tensor.grad is None:
                node.tensor.grad = g
            else:
                node.tensor.grad += g
            continue
        for child, cg, shape in zip(node.edges, node.apply(g), node.input_shapes):
            if child is None:
                continue
            cg = np.asarray(cg)
            while cg.ndim > len(shape):
                cg = cg.sum(0)
            for axis, size in enumerate(shape):
                if size == 1 and cg.shape[axis] != 1:
                    cg = cg.sum(axis, keepdims=True)
            grads[child] = grads[child] + cg if child in grads else cg
            counts[child] -= 1
            if counts[child] == 0:
                ready.append(child)
        if not retain_graph:
            node.saved = None
