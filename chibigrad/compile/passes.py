"""Passes over a captured Graph: each takes the graph and changes its node list in place.

- ``eliminate_dead_code``: drop calls whose results nothing uses.
- ``reuse_buffers``: give large element-wise results a buffer kept between calls (``out=``).
- ``simplify``: ``a.T.T`` is ``a``; ``np.ones_like(a)`` is a constant (the shape is fixed).
- ``expand_scalars``: ``np.maximum(a, 0)`` becomes ``np.maximum(a, zeros)``, numpy's fast loop.
- ``rematerialize``: recompute cheap element-wise forward values in backward instead of
  keeping them alive in between (AOTAutograd's min-cut partitioner makes the same trade).
- ``peak_bytes``: the memory a program that frees each value after its last use would need.
"""
import collections

import numpy as np

from .graph import Node

BUFFER_MIN_BYTES = 4096  # below this an allocation costs less than numpy parsing out=


def eliminate_dead_code(graph):
    """Remove every node whose value is never used, by counting each node's users (as fx does).

    A node without users goes, unless it is the output, a data check or writes into an array
    (``mutates``); each input it used loses a user, and may go in turn. Users come after the
    nodes they use, so one walk from the end settles every count. Returns the number removed."""
    users = collections.Counter(id(n) for node in graph.nodes for n in node.inputs)
    dead = set()
    for node in reversed(graph.nodes):
        if users[id(node)] == 0 and node.op not in ("output", "check") and node.mutates is None:
            dead.add(id(node))
            users.subtract(id(n) for n in node.inputs)
    graph.nodes = [n for n in graph.nodes if id(n) not in dead]
    return len(dead)


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


_FILLED_LIKE = {"np.ones_like", "np.zeros_like", "np.full_like"}


def simplify(graph):
    """Two rewrites that leave every value as it was, bit for bit:

    - a transpose of a transpose (``W.T`` in forward, ``.T`` again in backward) is the array
      itself, the same memory and strides: readers use that array;
    - ``np.ones_like(a)`` (the gradient backward starts from), ``np.zeros_like`` and ``np.full_like``
      depend only on ``a``'s shape and dtype, which the trace fixed: the value becomes a
      constant, made once, unless the step writes into it or returns it (a caller could).

    Run ``eliminate_dead_code`` after it. Returns the number of nodes rewritten."""
    mutated = graph.mutated_storages() | {n.storage for n in graph.nodes if n.op == "output" for n in n.inputs}
    replace, nodes, count = {}, [], 0
    for node in graph.nodes:
        node.args, node.kwargs = _replace_all((node.args, node.kwargs), replace)
        inner = node.args[0] if node.op == "call" and node.target_name == ".T" else None
        if isinstance(inner, Node) and inner.op == "call" and inner.target_name == ".T" and \
                isinstance(inner.args[0], Node):
            replace[id(node)] = inner.args[0]
            count += 1
            continue
        if node.op == "call" and node.target_name in _FILLED_LIKE and node.mutates is None and \
                node.storage not in mutated and isinstance(node.value, np.ndarray):
            node.op, node.args, node.kwargs = "constant", (), {}
            count += 1
        nodes.append(node)
    graph.nodes = nodes
    return count


_SCALAR_SLOW = (np.maximum, np.minimum)


def expand_scalars(graph):
    """Pass ``np.maximum`` and ``np.minimum`` an array full of their scalar operand (ReLU's
    ``np.maximum(h, 0)`` becomes ``np.maximum(h, zeros)``), a constant made once.

    Numpy runs these two ufuncs with vector instructions only when both operands are whole
    arrays; with a scalar it takes an element-by-element loop, several times slower on
    float32. Same ufunc, same operand order, same values: the result is the same to the bit
    (NaN and -0.0 included). Only for results of at least BUFFER_MIN_BYTES whose shape and
    dtype are those of the array operand. Returns the number of calls rewritten."""
    count, nodes, made = 0, [], {}
    for node in graph.nodes:
        array = _scalar_operand_of(node)
        if array is not None:
            scalar = next(a for a in node.args if a is not array)
            value = np.full(array.shape, scalar, dtype=array.dtype)
            key = (array.shape, array.dtype, value.flat[0].tobytes())  # bits: 0.0 and -0.0 differ
            if key not in made:  # one constant per shape, dtype and value
                made[key] = Node("constant", graph._name("zeros" if not value.any() else "full"), value=value)
                nodes.append(made[key])
            node.args = tuple(made[key] if a is scalar else a for a in node.args)
            count += 1
        nodes.append(node)
    graph.nodes = nodes
    return count


def _scalar_operand_of(node):
    """The array operand of ``np.maximum(array, scalar)`` (either order) if ``expand_scalars``
    applies to ``node``, else None."""
    if node.op != "call" or node.target not in _SCALAR_SLOW or len(node.args) != 2 or set(node.kwargs) - {"out"}:
        return None
    arrays = [a for a in node.args if isinstance(a, Node)]
    scalars = [a for a in node.args if type(a) in (int, float)]
    if len(arrays) != 1 or len(scalars) != 1 or not isinstance(arrays[0].value, np.ndarray):
        return None
    value = node.value
    if (not isinstance(value, np.ndarray) or value.nbytes < BUFFER_MIN_BYTES or value.shape != arrays[0].shape
            or value.dtype != arrays[0].dtype):
        return None
    return arrays[0]


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


def rematerialize(graph, max_ops=16):
    """Recompute cheap element-wise forward values in backward instead of keeping them.

    A forward value that backward reads stays alive from forward to backward. If it is made
    by a chain of element-wise numpy calls from values that backward keeps anyway (inputs,
    matmul results), the chain can run again right before backward needs it: a few cheap
    ops buy the memory of that value for the whole time in between (the trade AOTAutograd's
    min-cut partitioner makes). Returns the number of values recomputed."""
    mutated = graph.mutated_storages()
    writes, position = {}, {}
    for i, node in enumerate(graph.nodes):
        position[id(node)] = i
        if node.mutates is not None:
            writes.setdefault(node.mutates.storage, []).append(i)
    first_use, backward_users = {}, {}
    for i, node in enumerate(graph.nodes):
        if node.phase in ("backward", "update"):
            for a in node.inputs:
                if a.phase == "forward" or a.op in ("placeholder", "constant"):
                    first_use.setdefault(id(a), i)
                    backward_users.setdefault(id(a), []).append(node)
    clones, inserts = {}, {}

    def recompute(node, plan, at):
        """Append the chain that recomputes ``node`` to ``plan``; False if it cannot be."""
        if node.op in ("placeholder", "constant") or id(node) in clones:
            return True
        if id(node) in first_use and not _elementwise(node, mutated):
            return True  # backward keeps it anyway
        if not _elementwise(node, mutated) or len(plan) >= max_ops or any(
                position[id(node)] < w < at for a in node.inputs for w in writes.get(a.storage, ())):
            return False  # not element-wise, too long, or an input is written in between
        if not all(recompute(a, plan, at) for a in node.inputs):
            return False
        if node not in plan:
            plan.append(node)
        return True

    count = 0
    for node_id, at in sorted(first_use.items(), key=lambda item: item[1]):
        node = next(n for n in backward_users[node_id][0].inputs if id(n) == node_id)
        plan = []
        if node.op != "call" or not recompute(node, plan, at) or not plan:
            continue
        for original in plan:
            args, kwargs = _replace_all((original.args, original.kwargs), clones)
            clone = Node("call", graph._name(original.name + "_recomputed"), original.target, original.target_name,
                         args, kwargs, original.value.copy(), "backward")  # its own memory, for peak_bytes
            clones[id(original)] = clone
            inserts.setdefault(at, []).append(clone)
        count += 1
    nodes = []
    for i, node in enumerate(graph.nodes):
        nodes += inserts.get(i, [])
        if node.phase in ("backward", "update") and node.op in ("call", "check"):
            node.args, node.kwargs = _replace_all((node.args, node.kwargs), clones)
        nodes.append(node)
    graph.nodes = nodes
    return count


_ELEMENTWISE_FUNCTIONS = (np.where,)


def _elementwise(node, mutated):
    """One element-wise numpy call (no matmul) whose result is never written in place."""
    return (node.op == "call" and node.phase == "forward" and node.mutates is None and "out" not in node.kwargs
            and isinstance(node.value, np.ndarray) and node.storage not in mutated
            and ((isinstance(node.target, np.ufunc) and node.target is not np.matmul)
                 or node.target in _ELEMENTWISE_FUNCTIONS or node.target_name == ".astype"))


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
