# mistake: keeps a set of visited nodes, as for walking a graph, so a shared node contributes only the
#   first path that reaches it
# expect: 0 points for path_sum_grad
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    total = torch.zeros_like(leaf)
    ones = torch.ones_like(output)
    with torch.no_grad():
        stack, seen = [(output.grad_fn, ones)], set()
        while stack:
            node, prod = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, AccumulateGrad):
                if node.variable is leaf:
                    total = total + prod
                continue
            for (child, _), local in zip(node.next_functions, call_node(node, [ones])):
                if child is not None and local is not None:
                    stack.append((child, prod * local))
    return total
