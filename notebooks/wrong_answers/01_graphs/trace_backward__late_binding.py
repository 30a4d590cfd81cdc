# The hook closes over the loop variable `node`: every hook records the last node of the loop.
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    ran, handles = [], []
    for node in topological_order([loss.grad_fn]):
        handles.append(node.register_prehook(lambda grads: ran.append(node)))
    try:
        loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    return ran
