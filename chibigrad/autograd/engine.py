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
import gc
import heapq
import sys
import weakref

import numpy as np

from .. import _device, memory
from .._dtype import from_numpy_dtype
from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import anomaly_mode, grad_mode, profiler
from .node import AccumulateGrad, check_hook_result


def topological_order(roots):
    """Nodes reachable from ``roots``, each before the nodes it feeds."""
    deps = _count_dependencies(roots)
    ready = [(-r._sequence_nr, i, r) for i, r in enumerate(dict.fromkeys(roots)) if not deps.get(r)]
    heapq.heapify(ready)
    order, tie = [], len(ready)
    while ready:
        node = heapq.heappop(ready)[2]
        order.append(node)
        for nxt in node._next_nodes:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                tie += 1
                heapq.heappush(ready, (-nxt._sequence_nr, tie, nxt))
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
    Unless the backward itself is recorded (create_graph) or checked (anomaly
    mode), gradients travel as bare arrays (see ``_ArrayGrads``).
    Returns a dict edge -> captured gradient.
    """
    order = _ordering[-1]([node for node, _, _ in roots])
    needed = _needed(order, targets) if targets is not None else None
    capture = set(targets or ()) if not accumulate else set()
    arrays = None if create_graph or anomaly_mode._state.enabled else _ArrayGrads()
    evaluate = evaluate_function if arrays is None else arrays.evaluate
    if profiler._active:  # inside autograd.profiler.profile: each node timed
        evaluate = profiler.timed_node(evaluate)
    buffers, captured = {}, {}
    for node, nr, grad in roots:
        _add_to_buffer(buffers, node, nr, grad if arrays is None else arrays.unwrap(grad))
    prev = grad_mode.is_grad_enabled()
    grad_mode._set_enabled(create_graph)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # backward makes no reference cycles; collections would only rescan the graph
    try:
        for node in order:
            grads = buffers.pop(node, None)
            if grads is None or (needed is not None and node not in needed):
                continue
            outs = evaluate(node, grads, capture, captured)
            if not retain_graph and node._saved:
                node.release_saved()
            for nxt, nr, g in zip(node._next_nodes, node._next_nrs, outs):
                if nxt is not None and g is not None:
                    _add_to_buffer(buffers, nxt, nr, g)
    finally:
        grad_mode._set_enabled(prev)
        if gc_was_enabled:
            gc.enable()
    return captured


def evaluate_function(node, grads, capture, captured):
    """One node's turn: its outputs' tensor hooks and retain_grad, the gradients
    ``autograd.grad`` asked for, then the node itself (PyTorch's name)."""
    if node._tensor_hooks or node._retained:
        grads = _tensor_pre_hooks(node, grads)
    if capture:
        for nr in range(len(grads)):
            if (node, nr) in capture:
                captured[(node, nr)] = grads[nr]
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
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * len(node._output_meta)
    if buf[nr] is None:
        buf[nr] = grad
    elif isinstance(grad, _tensor.Tensor):
        buf[nr] = buf[nr] + grad  # with create_graph the sum itself is recorded
    elif sys.getrefcount(buf[nr]) == 2 and buf[nr].base is None:
        buf[nr] += grad  # only this list (and getrefcount) holds the array: add in place, as PyTorch does
    else:
        buf[nr] = _new_array(buf[nr] + grad)  # bare arrays (see _ArrayGrads)


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
    on_arrays = node.array_backward and not (grad_mode._state.enabled or anomaly_mode._state.enabled
                                             or node._post_hooks)
    try:
        outs = _apply_on_arrays(node, grads) if on_arrays else node.apply(*grads)
    except Exception as err:
        anomaly_mode.report_failure(node, err)
        raise
    outs = _validate(node, outs)
    if not on_arrays:  # _apply_on_arrays flagged its shared gradients already
        _mark_shared(grads, outs)
    if anomaly_mode._state.enabled:
        anomaly_mode.check_nan(node, outs)
    for hook in node._post_hooks:
        new = hook(outs, tuple(grads))
        if new is not None:
            outs = tuple(new)
    return outs


def _apply_on_arrays(node, grads):
    """Run a built-in op's backward on bare numpy arrays.

    Its formula (``grad * b``, ``grad @ w.mT``, ...) reads the same for arrays and
    tensors; without create_graph nothing needs recording, so skipping the Tensor
    layer saves a Function call per operation. Ops opt in with ``array_backward = True``.
    """
    arrays = [None if g is None else g._array for g in grads]
    outs = _backward_on_arrays(node, arrays)
    return tuple([None if o is None else _wrap_grad(o, arrays) for o in outs])


def _backward_on_arrays(node, arrays):
    """The node's backward on arrays; ``ctx.saved_tensors`` then gives arrays too. Ops opt
    in on their Function, so the node is its BackwardCFunction: the engine calls the
    Function's backward itself (what ``node.apply`` does, one frame less)."""
    node._array_mode = True
    try:
        outs = node._forward_cls.backward(node, *arrays)
    finally:
        node._array_mode = False
    return outs if type(outs) is tuple else (outs,)


def _wrap_grad(array, arrays_in):
    """A gradient array as a Tensor, flagged shared when it is (a view of) an incoming one."""
    if type(array) is not np.ndarray:
        array = _device.as_array(array)
    t = _tensor.wrap(array)
    if array.base is not None or any([array is a for a in arrays_in]):
        t._shared_grad = True
    return t


def _new_array(array):
    """A gradient array the engine made, counted by chibigrad.memory (numpy returns a 0-d
    result as a scalar: it becomes an array again)."""
    if type(array) is not np.ndarray:
        array = _device.as_array(array)
    memory.track(array)
    return array


class _ArrayGrads:
    """Gradients as bare arrays, for a backward that records nothing.

    A built-in op (``array_backward``) without hooks runs its backward on the
    arrays directly; any other node (custom Functions, hooks, retain_grad,
    AccumulateGrad, ``autograd.grad``'s captures) gets Tensors made for it.
    Arrays have no ``_shared_grad`` flag, so ``_shared`` remembers (by weak
    reference) the ones someone else can also see: a leaf copies those before
    storing them as ``.grad`` (see ``node._owned``).
    """

    def __init__(self):
        self._shared = {}  # id(array) -> weakref.ref(array)

    def evaluate(self, node, grads, capture, captured):
        """``evaluate_function`` with arrays in and out."""
        hooked = node._pre_hooks or node._post_hooks or node._tensor_hooks or node._retained
        if hooked or capture and (type(node) is AccumulateGrad or any([(node, nr) in capture
                                                                        for nr in range(len(grads))])):
            return self._evaluate_on_tensors(node, grads, capture, captured)  # hooks and captures get Tensors
        if type(node) is AccumulateGrad:
            return node.apply(self.wrap(grads[0]))  # .grad holds a Tensor; returns ()
        if not node.array_backward or (len(grads) > 1 and not all([g is not None for g in grads])):
            return self._evaluate_on_tensors(node, grads, capture, captured)  # custom Functions; zeros to fill in
        try:
            outs = _backward_on_arrays(node, grads)
        except Exception as err:
            anomaly_mode.report_failure(node, err)
            raise
        outs = _validate(node, outs, self)
        self._note_outputs(grads, outs)
        return outs

    def _note_outputs(self, grads, outs):
        """Mark the gradients a node passed on (an incoming one, or one it sent to two
        inputs); count the fresh ones for chibigrad.memory."""
        seen, marked = list(grads), None  # seen: the incoming gradients, then each fresh one
        for o in outs:
            if o is None or o is marked:  # (Add hands one gradient to both inputs: marked once)
                continue
            for s in seen:  # (an identity test; ``in`` would compare arrays element-wise)
                if s is o:
                    self._mark(o)
                    marked = o
                    break
            else:
                seen.append(o)
                if memory._counting:
                    memory.track(o)

    def _evaluate_on_tensors(self, node, grads, capture, captured):
        """The Tensor path, for a node that needs Tensors (or needs zeros for missing gradients)."""
        outs = evaluate_function(node, [None if g is None else self.wrap(g) for g in grads], capture, captured)
        outs = [None if o is None else self.unwrap(o) for o in outs]
        for o in outs:
            if o is not None and any([o is g for g in grads]):
                self._mark(o)
        return outs

    def _mark(self, array):
        self._shared[id(array)] = weakref.ref(array)

    def _is_shared(self, array):
        ref = self._shared.get(id(array))
        return ref is not None and ref() is array

    def wrap(self, array):
        """A Tensor for code that needs one, flagged if its array is shared."""
        t = _tensor.wrap(array)
        if self._is_shared(array):
            t._shared_grad = True
        return t

    def unwrap(self, tensor):
        """The array of a Tensor gradient, remembered as shared if it was flagged."""
        if tensor._shared_grad:
            self._mark(tensor._array)
        return tensor._array


def _mark_shared(grads_in, grads_out):
    """Flag gradients a node passed through unchanged (or as a view): they are
    visible elsewhere, so a leaf must copy them before accumulating in place."""
    for g in grads_out:
        if g is not None and (g._array.base is not None or any([g is x for x in grads_in])):
            g._shared_grad = True


def _materialize(node, grads):
    """Outputs that got no gradient receive zeros (or None if the Function asked)."""
    if all(g is not None for g in grads) or not getattr(node, "materialize_grads", False):
        return grads
    return [_tensor.wrap(_device.zeros(*meta)) if g is None and meta is not None else g
            for g, meta in zip(grads, node._output_meta)]


def _validate(node, outs, arrays=None):
    """One gradient per tensor input, each reduced to its input's shape and cast to its dtype.
    The gradients are Tensors, or bare arrays when ``arrays`` (an ``_ArrayGrads``) is given."""
    if type(outs) is not tuple:
        outs = (outs,)
    metas = node._input_meta
    n = len(metas)
    if len(outs) != n:
        outs = _check_count(node, outs, n)
    positions = node._tensor_args
    if len(positions) != n:
        outs, metas = _drop_non_tensor_args(node, outs, metas, positions)
    i = 0  # (a counter, not zip: this loop runs for every node)
    for g in outs:
        if g is not None:
            a = g if arrays is not None else g._array
            if (a.shape, a.dtype, type(a)) != metas[i]:  # (a meta of None never matches)
                return _fit_each(node, outs, metas, arrays)
        i += 1
    return outs  # the common case: every gradient already fits its input


def _fit_each(node, outs, metas, arrays):
    """``_validate``'s work where a gradient does not fit: ``_fit`` each one, None where
    the input needs no gradient."""
    fitted = list(outs)
    for i, meta in enumerate(metas):
        g = fitted[i]
        if g is None or meta is None:
            fitted[i] = None
            continue
        a = g if arrays is not None else g._array
        if (a.shape, a.dtype, type(a)) != meta:
            fitted[i] = _fit(node, i, g, meta) if arrays is None else arrays.unwrap(_fit(node, i, arrays.wrap(g), meta))
    return tuple(fitted)


def _check_count(node, outs, expected):
    """Extra trailing Nones are fine (PyTorch allows them); any other count is an error."""
    if len(outs) > expected and all(g is None for g in outs[expected:]):
        return outs[:expected]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {expected}, got {len(outs)})")


def _drop_non_tensor_args(node, outs, metas, positions):
    """Keep the gradients of tensor arguments; the others must be None."""
    for i, g in enumerate(outs):
        if g is not None and i not in positions:
            raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                               f"{i + 1}, but the corresponding forward input was not a Variable")
    return tuple([outs[i] for i in positions]), tuple([metas[i] for i in positions])


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
