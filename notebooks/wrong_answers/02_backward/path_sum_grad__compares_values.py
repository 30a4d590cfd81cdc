# Matches the leaf by value, (child.variable == leaf).all(), instead of by identity (is): two different leaves
# that hold equal values are taken for the same one, and the gradient of each gets the other's paths too.
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    total = torch.zeros_like(leaf)
    if output.grad_fn is None:
        return total
    with torch.no_grad():
        ones, local = torch.ones_like(output), {}
        stack = [(output.grad_fn, ones)]
        while stack:
            node, product = stack.pop()
            if node not in local:
                local[node] = call_node(node, [ones])
            for (child, _), derivative in zip(node.next_functions, local[node]):
                if child is None or derivative is None:
                    continue
                if isinstance(child, AccumulateGrad):
                    if (child.variable == leaf).all():
                        total = total + product * derivative
                else:
                    stack.append((child, product * derivative))
    return total

