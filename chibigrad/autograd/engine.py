"""The backward engine: order the graph, then run each node once.

Two steps, kept apart so each can be read (and replaced) on its own:

1. ``ordering(roots)`` lists every node reachable from the roots so that a
   node comes before all the nodes it sends gradients to. The default,
   ``topological_order``, counts dependencies (Kahn's algorithm) and breaks
   ties as PyTorch does: the most recently created node first, leaves'
   AccumulateGrad nodes as soon as they are ready. ``use_ordering`` plugs in
   another strategy, such as a depth-first one.
2. ``execute`` walks that list with a gradient buffer per node, summing the
   gradients that arrive from every path before the node runs.

Nothing here recurses, so a graph of any depth can be differentiated.
"""
import contextlib
import heapq
import itertools

from .. import _device
from .._dtype import from_numpy_dtype
from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import anomaly_mode, fast_path, grad_mode, profiler
from .node import AccumulateGrad, check_hook_result


def topological_order(roots):
    """Nodes reachable from ``roots``, each before the nodes it feeds."""
    deps = _count_dependencies(roots)
    tie = itertools.count()  # among nodes of equal sequence number, the first one ready goes first
    ready = []
    for root in dict.fromkeys(roots):
        if not deps.get(root):
            heapq.heappush(ready, (-root._sequence_nr, next(tie), root))
    order = []
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for nxt in node._next_nodes:
            if nxt is not None:
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._sequence_nr, next(tie), nxt))
    return order


def _count_dependencies(roots):
    """How many edges point at each node, found with an explicit stack. (``_next_nodes`` are
    the nodes of ``next_functions``, as the node stores them.)"""
    deps, stack, seen = {}, list(dict.fromkeys(roots)), set(roots)  # a root given twice is walked once
    while stack:
        for nxt in stack.pop()._next_nodes:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


_ordering = [topological_order]
_tasks = []  # [id, order, needed, accumulate] of each backward call in progress, innermost last
_task_ids = itertools.count()


@contextlib.contextmanager
def use_ordering(ordering):
    """Run every backward in this block with ``ordering(roots) -> [nodes]``."""
    _ordering.append(ordering)
    try:
        yield
    finally:
        _ordering.pop()


def execute(roots, retain_graph=False, create_graph=False, targets=None, accumulate=True):
    """Backpropagate from ``roots``, a list of ``(node, output_nr, grad)``.

    ``targets`` (edges ``(node, output_nr)``) restricts the work to what
    reaches them; with ``accumulate=False`` their gradients are returned
    instead of being added into ``.grad`` (that is ``autograd.grad``).
    Returns a dict edge -> captured gradient.
    """
    buffers, captured = {}, {}
    for node, nr, grad in roots:
        _add_to_buffer(buffers, node, nr, grad)
    order = _ordering[-1](list(buffers))  # the roots' nodes, each once
    needed = _needed(order, targets) if targets is not None else None
    capture = set(targets or ()) if not accumulate else set()
    evaluate = profiler.timed_node(evaluate_function) if profiler._active else evaluate_function
    _tasks.append([next(_task_ids), order, needed, accumulate])
    try:
        with grad_mode.set_grad_enabled(create_graph):  # backward is recorded only for create_graph
            for node in order:
                grads = buffers.pop(node, None)
                if grads is None or (needed is not None and node not in needed):
                    continue
                outs = evaluate(node, grads, capture, captured)
                if not retain_graph:
                    node.release_saved()
                for nxt, nr, g in zip(node._next_nodes, node._next_nrs, outs):
                    if nxt is not None and g is not None:
                        _add_to_buffer(buffers, nxt, nr, g)
    finally:
        _tasks.pop()
    return captured


def current_graph_task_id():
    """Which backward call is running (-1 outside one): hooks that gather several gradients of one
    backward call (``autograd.graph.register_multi_grad_hook``) tell the calls apart by it."""
    return _tasks[-1][0] if _tasks else -1


def will_engine_execute_node(node):
    """Whether the backward call now running will run ``node`` (it may stop short of it when given
    ``inputs``). The set of nodes is made only when asked."""
    if not _tasks:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward pass")
    task = _tasks[-1]
    if isinstance(node, AccumulateGrad) and not task[3]:
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    if task[2] is None:
        task[2] = set(task[1])
    return node in task[2]


def evaluate_function(node, grads, capture, captured):
    """One node's turn: its outputs' tensor hooks and retain_grad, the gradients
    ``autograd.grad`` asked for, then the node itself (PyTorch's name)."""
    if node._tensor_hooks or node._retained:
        grads = _tensor_pre_hooks(node, grads)
    if capture:
        for nr, grad in enumerate(grads):
            if (node, nr) in capture:
                captured[(node, nr)] = grad
        if isinstance(node, AccumulateGrad):
            return ()
    return call_node(node, grads)


def _needed(order, targets):
    """Nodes that lead to a target; ``order`` lists producers before consumers."""
    target_nodes = {node for node, _ in targets}
    needed = set()
    for node in reversed(order):
        if node in target_nodes or any(n in needed for n in node._next_nodes if n is not None):
            needed.add(node)
    return needed


def _add_to_buffer(buffers, node, nr, grad):
    """Sum gradients arriving at ``node``'s output ``nr`` from different paths."""
    buffer = buffers.setdefault(node, [None] * len(node._output_meta))
    if buffer[nr] is None:
        buffer[nr] = grad
    else:
        buffer[nr] = fast_path.add(buffer[nr], grad)  # buffer[nr] + grad, in place if nothing else holds it


def _tensor_pre_hooks(node, grads):
    """Tensor hooks of the node's outputs, then retain_grad, on each output's gradient."""
    if node._tensor_hooks:
        for nr, hooks in node._tensor_hooks.items():
            for hook in hooks:
                if grads[nr] is not None:
                    new = hook(grads[nr])
                    if new is not None:
                        grads[nr] = check_hook_result(hook, grads[nr], new)
                    grads[nr]._shared_grad = True  # the hook may have kept it
    if node._retained:
        for nr, ref in node._retained.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                g = grads[nr] if grad_mode.is_grad_enabled() else grads[nr].detach()
                tensor.grad = g.clone() if tensor.grad is None else tensor.grad + g
    return grads


def call_node(node, grads):
    """Run one node with its hooks; check and fix up the gradients it returns."""
    for hook in node._pre_hooks:
        new = hook(tuple(grads))
        if new is not None:
            grads = list(new)
    if len(grads) > 1:
        grads = _materialize(node, grads)
    try:
        outs = node.apply(*grads)
    except Exception as err:
        anomaly_mode.report_failure(node, err)
        raise
    outs = _validate(node, outs)
    _mark_shared(grads, outs)
    if anomaly_mode._state.enabled:
        anomaly_mode.check_nan(node, outs)
    for hook in node._post_hooks:
        new = hook(outs, tuple(grads))
        if new is not None:
            outs = tuple(new)
    return outs


def _mark_shared(grads_in, grads_out):
    """Flag gradients someone else can also see: one the node passed on unchanged (or as a
    view), or gave to two inputs. A leaf copies those before accumulating into them in place."""
    seen = list(grads_in)
    for g in grads_out:
        if g is None:
            continue
        if g._array.base is not None:
            g._shared_grad = True
        for s in seen:
            if s is g:  # (an identity test: == would compare elements)
                g._shared_grad = True
        seen.append(g)


def _materialize(node, grads):
    """Outputs that got no gradient receive zeros (unless the Function asked for None)."""
    if not getattr(node, "materialize_grads", False):
        return grads
    for nr, meta in enumerate(node._output_meta):
        if grads[nr] is None and meta is not None:
            grads[nr] = _tensor.wrap(_device.zeros(*meta))
    return grads


def _validate(node, outs):
    """One gradient per tensor input of the forward, each reduced to its input's shape and
    cast to its dtype; None where the input needs no gradient."""
    if not isinstance(outs, tuple):
        outs = (outs,)
    if len(outs) != len(node._input_meta):
        outs = _check_count(node, outs, len(node._input_meta))
    for i, grad in enumerate(outs):
        if grad is not None and i not in node._tensor_args:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                               f"{i + 1}, but the corresponding forward input was not a Variable")
    fitted = []
    for i, position in enumerate(node._tensor_args):
        grad, meta = outs[position], node._input_meta[position]
        if grad is None or meta is None:
            grad = None
        elif (grad._array.shape, grad._array.dtype, type(grad._array)) != meta:  # most gradients fit already
            grad = _fit(node, i, grad, meta)
        fitted.append(grad)
    return tuple(fitted)


def _check_count(node, outs, expected):
    """Extra trailing Nones are fine (PyTorch allows them); any other count is an error."""
    if len(outs) > expected and all(g is None for g in outs[expected:]):
        return outs[:expected]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {expected}, got {len(outs)})")


def _fit(node, index, grad, meta):
    """Sum a broadcast gradient back to the input's shape; cast it to the input's dtype;
    check it is on the input's device."""
    shape, dtype, array_type = meta
    if grad._array.shape != shape:
        if not _expandable(shape, grad._array.shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got "
                               f"{list(grad.shape)} but expected shape compatible with {list(shape)}")
        grad = grad.sum_to_size(shape)
    if grad._array.dtype != dtype:
        grad = grad.to(from_numpy_dtype(dtype))
    if type(grad._array) is not array_type:
        grad = check_grad_device(grad, _device.device_of_type(array_type), index,
                                 f"Function {node.name()} returned an ")
    return grad


def check_grad_device(grad, device, index, prefix=""):
    """PyTorch moves a 0-dim gradient to the device of its input and refuses any other."""
    if grad.ndim != 0:
        raise RuntimeError(f"{prefix}invalid gradient at index {index} - expected device {device} but got "
                           f"{grad.device}")
    return grad.to(device)


def _expandable(shape, target):
    """True when ``shape`` broadcasts to ``target`` (so summing back is right)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))
