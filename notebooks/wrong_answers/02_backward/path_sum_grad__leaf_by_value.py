# Recognises the leaf by its values (torch.equal) instead of by identity (`is`): another leaf that holds
# the same numbers counts as the same leaf, and its paths are added in.
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    total = torch.zeros_like(leaf)
    if output.grad_fn is None:
        return total
    with torch.no_grad():
        ones = torch.ones_like(output)
        stack = [(output.grad_fn, ones)]
        while stack:
            node, product = stack.pop()
            for (child, _), derivative in zip(node.next_functions, call_node(node, [ones])):
                if child is None or derivative is None:
                    continue
                if isinstance(child, AccumulateGrad):
                    if child.variable.shape == leaf.shape and torch.equal(child.variable, leaf):
                        total = total + product * derivative
                else:
                    stack.append((child, product * derivative))
    return total
