# Assignment into a row drops the value's leading 1-dims (makemore's logits[i] = model(x[[i]])), and the errors.
import torch
a=torch.zeros(2,3); a[0]=torch.ones(1,1,3); print(a)
a=torch.zeros(2,3); a[[0]]=torch.ones(1,1,3); print(a)
a=torch.zeros(2,3); w=torch.ones(1,3,requires_grad=True); a[1]=w*2; print(a); a.sum().backward(); print(w.grad)
a=torch.zeros(2,3); w=torch.ones(1,1,3,requires_grad=True); a[[1]]=w*2; print(a); a.sum().backward(); print(w.grad)
for shape in [(2, 3), (1, 2, 3)]:
    try: a=torch.zeros(2,3); a[0]=torch.ones(*shape)
    except Exception as e: print(type(e).__name__, e)
logits = torch.zeros(3, 4)
W = torch.arange(8.0).reshape(2, 4).requires_grad_()
x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
for i in range(3):
    logits[i] = x[[i]] @ W
print(logits)
logits.sum().backward(); print(W.grad)
a=torch.zeros(2,3); w=torch.ones(3,requires_grad=True); b=a.clone(); b[0]=w; print(b.grad_fn, b.grad_fn.next_functions)
b=a.clone(); s=torch.tensor(2.0,requires_grad=True); b[0]=s; print(b.grad_fn.next_functions, b.grad_fn.next_functions[1][0].next_functions if b.grad_fn.next_functions[1][0] else '')
b.sum().backward(); print(s.grad)
b=a.clone(); b[:, 1]=5; print(b)
