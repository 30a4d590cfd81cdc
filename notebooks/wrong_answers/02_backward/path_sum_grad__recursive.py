# Recursive path enumeration: fine on the toy network, RecursionError on a long chain.
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    ones = torch.ones_like(output)

    def paths(node, product):
        total = torch.zeros_like(leaf)
        for (child, _), derivative in zip(node.next_functions, call_node(node, [ones])):
            if child is None or derivative is None:
                continue
            if isinstance(child, AccumulateGrad):
                if child.variable is leaf:
                    total = total + product * derivative
            else:
                total = total + paths(child, product * derivative)
        return total

    if output.grad_fn is None:
        return torch.zeros_like(leaf)
    with torch.no_grad():
        return paths(output.grad_fn, ones)
