# Runs a node as soon as a gradient reaches it (no dependency counts): a shared node runs once per path, and its freed values make the second run fail.
def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    start = np.ones_like(tensor.data) if gradient is None else np.asarray(gradient, dtype=np.float64)
    queue = [(tensor.node, start)]
    while queue:
        node, grad = queue.pop(0)
        if isinstance(node, Leaf):
            leaf = node.tensor
            leaf.grad = grad.copy() if leaf.grad is None else leaf.grad + grad
            continue
        outputs = node.apply(grad)
        if node.saved and not retain_graph:
            node.saved = None
        for child, g, shape in zip(node.edges, outputs, node.input_shapes):
            if child is None:
                continue
            g = np.asarray(g)
            while g.ndim > len(shape):
                g = g.sum(axis=0)
            for axis, size in enumerate(shape):
                if size == 1 and g.shape[axis] != 1:
                    g = g.sum(axis=axis, keepdims=True)
            queue.append((child, g))
