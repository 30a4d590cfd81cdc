"""Passes over a captured Graph: each takes the graph and changes its node list in place.

- ``eliminate_dead_code``: drop calls whose results nothing uses.
- ``reuse_buffers``: give large element-wise results a buffer kept between calls (``out=``).
- ``rematerialize``: recompute cheap element-wise forward values in backward instead of
  keeping them alive in between (AOTAutograd's min-cut partitioner makes the same trade).
- ``peak_bytes``: the memory a program that frees each value after its last use would need.
"""
import numpy as np

from .graph import Node

BUFFER_MIN_BYTES = 4096  # below this an allocation costs less than numpy parsing out=


def eliminate_dead_code(graph):
    """Remove every node whose value is never used, walking backwards from the output.

    A node stays if it is the output, a data check, writes into an array (``mutates``),
    or is an input of a node that stays. Returns the number of nodes removed."""
    ### BEGIN SOLUTION
    live, kept = set(), []
    for node in reversed(graph.nodes):
        if node.op in ("output", "check") or node.mutates is not None or id(node) in live:
            kept.append(node)
            live.update(id(n) for n in node.inputs)
    removed = len(graph.nodes) - len(kept)
    graph.nodes = kept[::-1]
    return removed
    ### END SOLUTION


def eliminate_copies(graph):
    """Drop ``y = x.copy()`` where nothing reads x's memory afterwards: y is then x itself.

    The engine copies a gradient before handing it to ``.grad`` because eager code cannot
    know whether another view of that memory lives on; the whole program can. Only copies
    with the same memory layout are dropped (the strides a reader sees do not change).
    Returns the number of copies dropped."""
    external = {n.storage for n in graph.nodes if n.op in ("placeholder", "constant", "buffer")}
    mutated = graph.mutated_storages()
    replace, count = {}, 0
    for i, node in enumerate(graph.nodes):
        node.args, node.kwargs = _replace_all((node.args, node.kwargs), replace)
        if node.op != "call" or node.target_name != ".copy" or len(node.args) != 1 or node.kwargs:
            continue
        source = node.args[0]
        if (source.storage in external or source.storage in mutated or not isinstance(source.value, np.ndarray)
                or source.value.strides != node.value.strides
                or any(a.storage == source.storage for later in graph.nodes[i + 1:] for a in later.inputs)):
            continue
        replace[id(node)] = source
        count += 1
    graph.nodes = [n for n in graph.nodes if id(n) not in replace]
    return count


def _replace_all(obj, replace):
    if isinstance(obj, Node):
        return replace.get(id(obj), obj)
    if type(obj) in (tuple, list):
        return type(obj)(_replace_all(x, replace) for x in obj)
    if type(obj) is dict:
        return {k: _replace_all(v, replace) for k, v in obj.items()}
    return obj


def reuse_buffers(graph):
    """Element-wise results of at least BUFFER_MIN_BYTES that never leave the step are written
    into a buffer allocated once (``np.add(a, b, out=buf)``): no allocation, no page faults.
    Returns the number of calls rewritten."""
    escaping = {n.storage for n in graph.nodes if n.op == "output" for n in n.inputs}
    count, nodes = 0, []
    for node in graph.nodes:
        if _bufferable(node, escaping):
            buffer = Node("buffer", f"buf_{node.name}", value=np.empty_like(node.value))
            nodes.append(buffer)
            node.kwargs = dict(node.kwargs, out=buffer)
            count += 1
        nodes.append(node)
    graph.nodes = nodes
    return count


def _bufferable(node, escaping):
    value = node.value
    return (node.op == "call" and isinstance(node.target, np.ufunc) and node.mutates is None
            and "out" not in node.kwargs and isinstance(value, np.ndarray) and value.base is None
            and value.ndim > 0 and value.nbytes >= BUFFER_MIN_BYTES and node.storage not in escaping)


def rematerialize(graph):
    """Recompute cheap element-wise forward values next to their first use in backward.

    A forward value used in backward stays alive from forward to backward. If it is one
    element-wise numpy call whose inputs are alive at that use anyway (used later, or
    inputs of the step), recomputing it there costs one cheap op and frees its memory
    for the whole time between. Returns the number of values recomputed."""
    mutated = graph.mutated_storages()
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    last_use = _last_uses(graph)
    moves = {}
    for node in graph.nodes:
        if not _cheap(node, mutated):
            continue
        users = [n for n in graph.nodes if node in n.inputs]
        later = [u for u in users if u.phase in ("backward", "update")]
        if not later or len(later) == len(users) and later[0].phase == node.phase:
            continue
        first = min(position[id(u)] for u in later)
        if all(a.op in ("placeholder", "constant") or last_use[a.storage] >= first for a in node.inputs):
            moves[id(node)] = (first, later)
    for node_id, (first, later) in sorted(moves.items(), key=lambda m: -m[1][0]):
        original = graph.nodes[next(i for i, n in enumerate(graph.nodes) if id(n) == node_id)]
        clone = Node("call", graph._name(original.name + "_recomputed"), original.target, original.target_name,
                     original.args, original.kwargs, original.value, later[0].phase)
        graph.nodes.insert(first, clone)
        for user in later:
            user.args, user.kwargs = _replace((user.args, user.kwargs), original, clone)
    return len(moves)


def _cheap(node, mutated):
    return (node.op == "call" and node.phase == "forward" and isinstance(node.target, np.ufunc)
            and node.target.nin <= 2 and node.mutates is None and "out" not in node.kwargs
            and isinstance(node.value, np.ndarray) and node.storage not in mutated
            and not any(a.storage in mutated for a in node.inputs))


def _replace(obj, old, new):
    if obj is old:
        return new
    if type(obj) in (tuple, list):
        return type(obj)(_replace(x, old, new) for x in obj)
    if type(obj) is dict:
        return {k: _replace(v, old, new) for k, v in obj.items()}
    return obj


def _last_uses(graph):
    """For each storage, the position of the last node that reads it (outputs: past the end)."""
    last = {}
    for i, node in enumerate(graph.nodes):
        for a in node.inputs:
            last[a.storage] = len(graph.nodes) if node.op == "output" else i
        if node.storage is not None:
            last.setdefault(node.storage, i)
    return last


def peak_bytes(graph):
    """Peak bytes of values made by the step, if each were freed right after its last use
    (inputs and buffers are not counted: they live outside one call)."""
    last = _last_uses(graph)
    external = {n.storage for n in graph.nodes if n.op in ("placeholder", "constant", "buffer")}
    sizes, live, peak, current = {}, set(), 0, 0
    for i, node in enumerate(graph.nodes):
        s = node.storage
        if node.op == "call" and s is not None and s not in external and s not in sizes:
            sizes[s] = _root(node.value).nbytes
            live.add(s)
            current += sizes[s]
        peak = max(peak, current)
        for s in [s for s in live if last.get(s, i) <= i]:
            live.discard(s)
            current -= sizes[s]
    return peak


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array
