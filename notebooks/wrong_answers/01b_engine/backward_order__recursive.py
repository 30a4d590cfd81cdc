# Recursive depth-first search (micrograd's build_topo), reversed: right, until the graph is deeper than the recursion limit.
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    topo, visited = [], set()

    def build(node):
        if node not in visited:
            visited.add(node)
            for child in node.edges:
                if child is not None:
                    build(child)
            topo.append(node)

    build(root)
    return list(reversed(topo))
