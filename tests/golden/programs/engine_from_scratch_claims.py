# The PyTorch behaviour chapter 1b's small engine copies: the first example's numbers, which node is shared,
# backward twice through a graph that saved nothing (works) and through one that did (fails), many paths.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
out = (x * y + x) ** 2
add = out.grad_fn.next_functions[0][0]
mul = add.next_functions[0][0]

def name(node):
    return type(node).__name__


print(name(out.grad_fn), [name(n) for n, _ in out.grad_fn.next_functions])
print(name(add), [name(n) for n, _ in add.next_functions], name(mul), [name(n) for n, _ in mul.next_functions])
print("x's node is shared:", mul.next_functions[0][0] is add.next_functions[1][0])
out.backward()
print(out.item(), x.grad, y.grad)
try:
    out.backward()
except RuntimeError as err:
    print("second backward:", err)

for label, make in (("(x + y) * 2", lambda a, b: (a + b) * torch.tensor(2.0)), ("x + y", lambda a, b: a + b),
                    ("x * y", lambda a, b: a * b)):
    a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    result = make(a, b)
    result.backward()
    try:
        result.backward()
        print(label, "twice: fine, a.grad =", a.grad)
    except RuntimeError as err:
        print(label, "twice:", str(err)[:52])

h0 = torch.tensor(1.0, requires_grad=True)
h = h0
for _ in range(20):
    h = h * h
h.backward()
print("20 squarings of 1:", h0.grad, 2 ** 20)
