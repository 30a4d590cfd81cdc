# attack: recurse although the exercise forbids it, and stop the grader from lowering the recursion
#   limit: raise it, then replace sys.setrecursionlimit (and threading.stack_size) with no-ops
# expect: 0 points for dead_nodes (the deep cases must run under the grader's limit); batch continues
import sys, threading

sys.setrecursionlimit(200_000)
threading.stack_size(512 * 2**20)
sys.setrecursionlimit = lambda limit: None
threading.stack_size = lambda *a: 0


def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    live = set()

    def mark(node):
        if id(node) in live:
            return
        live.add(id(node))
        for inp in node.inputs:
            mark(inp)

    for node in graph.nodes:
        if node.op in ("output", "check") or node.mutates is not None:
            mark(node)
    return [n for n in graph.nodes if id(n) not in live]
