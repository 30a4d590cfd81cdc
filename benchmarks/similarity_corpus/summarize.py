# Four students' own summarize(t).
# ---- variant
from collections import Counter, deque


def all_nodes(root):
    seen, queue = {root}, deque([root])
    while queue:
        for child, _ in queue.popleft().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    return seen


def summarize(t):
    if t.grad_fn is None:
        return {}
    return dict(Counter(n.name() for n in all_nodes(t.grad_fn)))
# ---- variant
from collections import defaultdict


def summarize(t):
    tally = defaultdict(int)
    done = set()

    def count(node):
        if node is None or id(node) in done:
            return
        done.add(id(node))
        tally[type(node).__name__] += 1
        for nxt, _ in node.next_functions:
            count(nxt)

    count(t.grad_fn)
    return dict(tally)
# ---- variant
import itertools


def summarize(t):
    by_id = {}
    frontier = [t.grad_fn] if t.grad_fn else []
    while frontier:
        node = frontier.pop(0)
        if id(node) not in by_id:
            by_id[id(node)] = node
            frontier += [c for c, _ in node.next_functions if c]
    names = sorted(n.name() for n in by_id.values())
    return {name: len(list(group)) for name, group in itertools.groupby(names)}
# ---- variant
def summarize(t):
    found = [] if t.grad_fn is None else [t.grad_fn]
    i = 0
    while i < len(found):
        for c, _ in found[i].next_functions:
            if c is not None and all(c is not f for f in found):
                found.append(c)
        i += 1
    summary = {}
    for f in found:
        key = f.name()
        summary[key] = 1 if key not in summary else summary[key] + 1
    return summary
