# Seed 001: no_grad and inference_mode, as context managers and decorators.
import torch

w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
inp = torch.tensor([[1.0, 2.0]])


def model(t):
    return t @ w


with torch.no_grad():
    output = model(inp)
print(output.requires_grad, output.grad_fn, output)

with torch.inference_mode():
    output = model(inp)
print(output.requires_grad, output.grad_fn, output, output.is_inference())


@torch.inference_mode()
def predict(t):
    return model(t)


@torch.no_grad()
def predict2(t):
    return model(t)


print(predict(inp), predict2(inp))
print(model(inp))
print(torch.is_grad_enabled(), torch.is_inference_mode_enabled())
