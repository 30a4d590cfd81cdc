# Follows the nn.Module hook documentation and the "feature extraction with forward hooks" recipe:
# register_forward_hook to capture activations into a dict, register_forward_pre_hook to change
# inputs, register_full_backward_hook to see grad_input/grad_output, and handle.remove().
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, -0.2, 0.1], [-0.3, 0.8, 0.4]]))
    model[0].bias.copy_(torch.tensor([0.1, -0.1]))
    model[2].weight.copy_(torch.tensor([[1.5, -2.0]]))
    model[2].bias.fill_(0.3)

activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()
    return hook


handles = [model[0].register_forward_hook(get_activation('fc1')), model[1].register_forward_hook(get_activation('relu'))]
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
output = model(x)
print(activation['fc1'])
print(activation['relu'])
for handle in handles:
    handle.remove()
activation.clear()
model(x)
print(activation)


def pre_hook(module, args):
    print("pre-hook sees", args[0].shape)
    return (args[0] * 2,)


pre = model[0].register_forward_pre_hook(pre_hook)
print(model(x))
pre.remove()
print(model(x))


def forward_hook_replacing_output(module, args, output):
    return output + 100


h = model[2].register_forward_hook(forward_hook_replacing_output)
print(model(x))
h.remove()


def backward_hook(module, grad_input, grad_output):
    print(type(module).__name__, "grad_output", grad_output)
    print(type(module).__name__, "grad_input", grad_input)


hb = model[2].register_full_backward_hook(backward_hook)
hr = model[1].register_full_backward_hook(backward_hook)
x.requires_grad_(True)
model(x).sum().backward()
print(x.grad)
hb.remove()
hr.remove()
x.grad = None
model(x).sum().backward()
print(x.grad)


# a backward hook that returns a new grad_input scales what flows on
def halve(module, grad_input, grad_output):
    return tuple(None if g is None else g / 2 for g in grad_input)


model[1].register_full_backward_hook(halve)
x.grad = None
model(x).sum().backward()
print(x.grad)
out = model(x)
# type(...).__name__: PyTorch's AccumulateGrad.name() is "torch::autograd::AccumulateGrad", chibigrad's
# "AccumulateGrad" (the course's chapter 1 exercises compare name() with "AccumulateGrad")
print(out.grad_fn.name(), type(out.grad_fn.next_functions[0][0]).__name__)


# a pre-hook sees grad_output before the module's backward
def show_grad_output(module, grad_output):
    print("pre", type(module).__name__, grad_output)


model[0].register_full_backward_pre_hook(show_grad_output)
out.sum().backward()


def wrong(module, grad_input, grad_output):
    return grad_input + grad_input


model[2].register_full_backward_hook(wrong)
try:
    model(x).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
