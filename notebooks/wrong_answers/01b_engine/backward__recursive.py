# micrograd's way: a recursive topological sort, then the nodes in reverse; right until the graph is deeper than the recursion limit.
def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    topo, visited = [], set()

    def build(node):
        if node not in visited:
            visited.add(node)
            for child in node.edges:
                if child is not None:
                    build(child)
            topo.append(node)

    build(tensor.node)
    grads = {tensor.node: np.ones_like(tensor.data) if gradient is None else np.asarray(gradient, dtype=float)}
    for node in reversed(topo):
        grad = grads.pop(node, None)
        if grad is None:
            continue
        if isinstance(node, Leaf):
            node.tensor.grad = grad.copy() if node.tensor.grad is None else node.tensor.grad + grad
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
            grads[child] = grads[child] + g if child in grads else g
