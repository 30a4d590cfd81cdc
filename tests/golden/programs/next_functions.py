# next_functions structure: (node, index) pairs, None for inputs that need no grad.
import torch

a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.])
c = torch.tensor([5., 6.], requires_grad=True)
print((a * b).grad_fn.next_functions)
print((a * c).grad_fn.next_functions)
print((a * 2).grad_fn.next_functions)
print((a + 1).grad_fn.next_functions)
print((2 * a).grad_fn.next_functions)
print((b * a).grad_fn.next_functions)
print((a.exp() * c).grad_fn.next_functions)
print((a @ c).grad_fn.next_functions)
print(((a * c).sum()).grad_fn.next_functions)
print(torch.cat([a, b, c]).grad_fn.next_functions)
print(torch.stack([a, c]).grad_fn.next_functions)
print(torch.where(a > 1, a, c).grad_fn.next_functions)
y = a * 1
y.add_(1)
print("after add_:", y.grad_fn.next_functions)
acc = (a * c).grad_fn.next_functions[0][0]
print(repr(acc), type(acc).__name__, acc.variable is a, acc.next_functions)
acc2 = (a * 3).grad_fn.next_functions[0][0]
print(acc is acc2)
print(a.grad_fn, a.is_leaf, (a * 2).is_leaf, b.is_leaf, b.grad_fn, b.requires_grad)
s = (a * 2).split(1)
print(s[0].grad_fn.next_functions, s[0].grad_fn is s[1].grad_fn)
u = (a * c).unbind(0) if hasattr(a, "unbind") else None
x = torch.tensor(2., requires_grad=True)
out = ((x * x) + x).sin()
node = out.grad_fn
while node is not None:
    print(type(node).__name__, [(type(n).__name__ if n is not None else None, i) for n, i in node.next_functions])
    node = node.next_functions[0][0] if node.next_functions else None
