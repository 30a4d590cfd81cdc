# Removes the hooks only when backward succeeds: after an error they stay on the graph.
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    ran, handles = [], []
    for node in topological_order([loss.grad_fn]):
        handles.append(node.register_prehook(lambda grads, node=node: ran.append(node)))
    loss.backward()
    for handle in handles:
        handle.remove()
    return ran
