# Seed 000: grad_fn and next_functions of out = (x*y + x)**2, and walking the graph.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
z = x * y  # MulBackward0
w = z + x  # AddBackward0
out = w ** 2  # PowBackward0
print(f"out.grad_fn: {out.grad_fn}")
print(f"out.grad_fn.next_functions: {out.grad_fn.next_functions}")


def walk_graph(tensor, depth=0):
    if tensor.grad_fn is None:
        print(" " * depth + f"Leaf: {tensor}")
        return
    print(" " * depth + f"{tensor.grad_fn.__class__.__name__}")
    for parent, _ in tensor.grad_fn.next_functions:
        if parent is not None:
            walk_graph_fn(parent, depth + 1)


def walk_graph_fn(fn, depth=0):
    print(" " * depth + f"{fn.__class__.__name__}")
    for parent, _ in fn.next_functions:
        if parent is not None:
            walk_graph_fn(parent, depth + 1)


walk_graph(out)
walk_graph(x)
print(out)
print(repr(out.grad_fn.next_functions[0][0].next_functions))
acc = z.grad_fn.next_functions[0][0]
print(type(acc).__name__, acc.variable is x)
