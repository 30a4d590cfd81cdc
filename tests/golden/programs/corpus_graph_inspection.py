# Follows the torch.autograd.graph.Node documentation and blog posts that walk the graph: grad_fn,
# next_functions, name(), metadata, register_hook / register_prehook on nodes, is_leaf and
# requires_grad propagation, and a small recursive printer as such posts write it.
import torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
print(Q.grad_fn, Q.grad_fn.name())
print([(type(n).__name__ if n is not None else None, i) for n, i in Q.grad_fn.next_functions])


def print_graph(fn, indent=0):
    if fn is None:
        return
    print(" " * indent + type(fn).__name__)
    for next_fn, _ in fn.next_functions:
        print_graph(next_fn, indent + 2)


print_graph(Q.grad_fn)
print(isinstance(Q.grad_fn, torch.autograd.graph.Node))
acc = Q.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
print(type(acc).__name__, acc.variable is a)

# the docs' example: node hooks
order = []
Q.grad_fn.register_prehook(lambda grad_outputs: order.append(("pre", grad_outputs[0].tolist())))
Q.grad_fn.register_hook(lambda grad_inputs, grad_outputs: order.append(("post", [g.tolist() for g in grad_inputs])))
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(order)
print(9 * a ** 2 == a.grad, -2 * b == b.grad)

# a prehook can change what flows into the node
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
z = y.sum()
y.grad_fn.register_prehook(lambda gO: (gO[0] * 0.5,))
z.backward()
print(x.grad, x.exp() * 0.5)

# requires_grad propagation and leaves
p = torch.ones(2)
q = torch.ones(2, requires_grad=True)
r = p + q
print(p.requires_grad, q.requires_grad, r.requires_grad, r.is_leaf, q.is_leaf, (p * 2).is_leaf)
print(torch.ones(2, requires_grad=True).sum().grad_fn.next_functions)
m = torch.nn.Linear(2, 2)
print([n for n, _ in m.named_parameters()], m.weight.is_leaf, m(torch.ones(1, 2)).grad_fn.name())

# metadata is a dict kept on the node
out = (q * 3).sum()
out.grad_fn.metadata["note"] = "sum of q times 3"
print(out.grad_fn.metadata)

# the graph is freed after backward: a second backward fails, the nodes stay
out.backward()
print(out.grad_fn.name(), out.grad_fn.next_functions[0][0].name())
try:
    out.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).split(".")[0])
