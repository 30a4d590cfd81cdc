# mistake: removes the hooks after backward without try/finally, so when backward raises (a graph
#   already freed) the hooks stay on the graph
# expect: 0 points for trace_backward
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    ran, handles = [], []
    for node in topological_order([loss.grad_fn]):
        handles.append(node.register_prehook(lambda grads, node=node: ran.append(node)))
    loss.backward()
    for h in handles:
        h.remove()
    return ran
