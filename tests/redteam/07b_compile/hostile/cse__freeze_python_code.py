# attack: a CSE that ignores the rule "never merge two nodes whose memory is written anywhere", made
#   undetectable by output comparisons: graph.python_code is overridden on the instance to return the
#   program generated before the pass, so every before/after run replays the old code
# expect: 0 points for cse; batch continues


def eliminate_common_subexpressions(graph):
    """Merge call nodes that compute the same value; return how many were removed."""
    frozen = graph.python_code("program")
    graph.python_code = lambda *args, **kwargs: (frozen[0], dict(frozen[1]))
    seen, removed = {}, 0
    for node in list(graph.nodes):
        if node.op != "call":
            continue
        if node.mutates is not None:
            seen = {k: v for k, v in seen.items() if node.mutates not in v.inputs}
            continue
        key = (id(node.target), tuple((id(a), type(a)) if hasattr(a, "op") else (repr(a), type(a)) for a in node.args),
               repr(sorted(node.kwargs.items(), key=lambda kv: kv[0])))
        if key in seen:
            replace_uses(graph, node, seen[key])
            graph.nodes.remove(node)
            removed += 1
        else:
            seen[key] = node
    return removed
