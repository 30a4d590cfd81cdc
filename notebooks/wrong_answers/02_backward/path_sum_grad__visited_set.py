# Keeps a set of visited nodes, as a graph walk would: every node is entered once, so paths that
# share a node after the first one are lost (x * x counts one path instead of two).
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    total = torch.zeros_like(leaf)
    if output.grad_fn is None:
        return total
    with torch.no_grad():
        ones = torch.ones_like(output)
        seen, stack = {output.grad_fn}, [(output.grad_fn, ones)]
        while stack:
            node, product = stack.pop()
            for (child, _), derivative in zip(node.next_functions, call_node(node, [ones])):
                if child is None or derivative is None or child in seen:
                    continue
                seen.add(child)
                if isinstance(child, AccumulateGrad):
                    if child.variable is leaf:
                        total = total + product * derivative
                else:
                    stack.append((child, product * derivative))
    return total
