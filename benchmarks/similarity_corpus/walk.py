# Four students' own walk(t), each another shape: a breadth-first queue, recursion, a class, levels.
# ---- variant
from collections import deque


def walk(t):
    if not t.grad_fn:
        return []
    result = [t.grad_fn]
    visited = {id(t.grad_fn)}
    todo = deque([t.grad_fn])
    while len(todo) > 0:
        current = todo.popleft()
        for edge in current.next_functions:
            nxt = edge[0]
            if nxt is None or id(nxt) in visited:
                continue
            visited.add(id(nxt))
            result.append(nxt)
            todo.append(nxt)
    return result
# ---- variant
import sys


def walk(t):
    sys.setrecursionlimit(100000)
    out = []

    def go(fn):
        if fn is None or any(fn is o for o in out):
            return
        out.append(fn)
        for pair in fn.next_functions:
            go(pair[0])

    go(t.grad_fn)
    return out
# ---- variant
class GraphWalker:
    def __init__(self, root):
        self.root = root
        self.order = []
        self.marked = set()

    def visit(self, node):
        if node is not None and node not in self.marked:
            self.marked.add(node)
            self.order.append(node)
            return [n for n, _ in node.next_functions]
        return []

    def run(self):
        pending = [self.root]
        while pending:
            pending = self.visit(pending[-1]) + pending[:-1]
        return self.order


def walk(t):
    return GraphWalker(t.grad_fn).run() if t.grad_fn is not None else []
# ---- variant
def walk(t):
    level = [t.grad_fn] if t.grad_fn is not None else []
    everything = dict.fromkeys(level)
    while level:
        below = []
        for n in level:
            below.extend(c for c, _ in n.next_functions if c is not None and c not in everything)
        for c in below:
            everything.setdefault(c)
        level = list(dict.fromkeys(below))
    return list(everything)
