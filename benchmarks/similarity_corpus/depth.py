# Four students' own depth(t).
# ---- variant
def depth(t):
    if t.grad_fn is None:
        return 0
    longest = {}
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        kids = [c for c, _ in node.next_functions if c is not None]
        if expanded:
            longest[node] = 1 + max([longest[k] for k in kids], default=0)
        elif node not in longest:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if k not in longest)
    return longest[t.grad_fn]
# ---- variant
def depth(t):
    if t.grad_fn is None:
        return 0
    dist = {t.grad_fn: 1}
    changed = True
    while changed:
        changed = False
        for node, d in list(dist.items()):
            for child, _ in node.next_functions:
                if child is not None and dist.get(child, 0) < d + 1:
                    dist[child] = d + 1
                    changed = True
    return max(dist.values())
# ---- variant
from collections import deque


def depth(t):
    root = t.grad_fn
    if root is None:
        return 0
    indegree, seen, q = {root: 0}, {root}, deque([root])
    while q:
        for c, _ in q.popleft().next_functions:
            if c is None:
                continue
            indegree[c] = indegree.get(c, 0) + 1
            if c not in seen:
                seen.add(c)
                q.append(c)
    level = {root: 1}
    ready = deque([root])
    while ready:
        n = ready.popleft()
        for c, _ in n.next_functions:
            if c is None:
                continue
            level[c] = max(level.get(c, 0), level[n] + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return max(level.values())
# ---- variant
import functools
import sys


def depth(t):
    sys.setrecursionlimit(200000)

    @functools.lru_cache(maxsize=None)
    def height(fn):
        children = [height(c) for c, _ in fn.next_functions if c is not None]
        return 1 + (max(children) if children else 0)

    return 0 if t.grad_fn is None else height(t.grad_fn)
