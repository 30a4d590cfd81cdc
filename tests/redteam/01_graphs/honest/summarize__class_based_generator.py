# style: a small class with a generator method (__iter__) doing the walk; summarize counts what it yields
# expect: full points for summarize; no integrity row
from collections import Counter


class GraphNodes:
    """Iterate over every node reachable from a grad_fn, each once (a breadth-first queue)."""

    def __init__(self, root):
        self.root = root

    def __iter__(self):
        if self.root is None:
            return
        seen, queue = {self.root}, [self.root]
        while queue:
            node = queue.pop(0)
            yield node
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    return dict(Counter(node.name() for node in GraphNodes(t.grad_fn)))
