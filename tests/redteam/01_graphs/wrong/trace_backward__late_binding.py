# mistake: the classic closure trap: `lambda grads: ran.append(node)` in a loop appends the loop's last
#   node every time
# expect: 0 points for trace_backward
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    ran, handles = [], []
    for node in topological_order([loss.grad_fn]):
        handles.append(node.register_prehook(lambda grads: ran.append(node)))
    try:
        loss.backward()
    finally:
        for h in handles:
            h.remove()
    return ran
