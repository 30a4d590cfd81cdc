# Follows the gradient-accumulation recipe from training scripts and forum answers: divide the loss
# by accumulation_steps, call backward every micro-batch, step and zero_grad every N; compares the
# accumulated gradient with the full-batch gradient.
import torch
import torch.nn as nn

inputs = torch.tensor([[1.0, 2.0], [2.0, -1.0], [0.5, 0.5], [-1.0, 3.0], [2.5, 1.0], [0.0, -2.0]])
targets = torch.tensor([[1.0], [0.0], [0.5], [2.0], [1.5], [-1.0]])


def make_model():
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.25, -0.5]]))
        model.bias.fill_(0.125)
    return model


model = make_model()
criterion = nn.MSELoss()
# lr is a power of two: PyTorch's SGD update p.add_(grad, alpha=-lr) is one fused multiply-add,
# chibigrad's rounds lr * grad first (README: "SGD's update is not fused"); with lr = 2**-3 the
# product is exact and both round once
optimizer = torch.optim.SGD(model.parameters(), lr=0.125)
accumulation_steps = 3
optimizer.zero_grad()
for i in range(6):
    outputs = model(inputs[i:i + 1])
    loss = criterion(outputs, targets[i:i + 1])
    loss = loss / accumulation_steps
    loss.backward()
    print(i, round(loss.item(), 5), model.weight.grad)
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
        print("step", model.weight.data, model.bias.data, model.weight.grad)

# accumulated micro-batch gradients equal the gradient of the mean loss over the batch
model_a, model_b = make_model(), make_model()
for i in range(3):
    (criterion(model_a(inputs[i:i + 1]), targets[i:i + 1]) / 3).backward()
criterion(model_b(inputs[:3]), targets[:3]).backward()
print(model_a.weight.grad, model_b.weight.grad)
print(torch.allclose(model_a.weight.grad, model_b.weight.grad), torch.allclose(model_a.bias.grad, model_b.bias.grad))

# forgetting zero_grad: the gradients keep adding up
w = torch.tensor([1.0, 2.0], requires_grad=True)
for step in range(3):
    (w * w).sum().backward()
    print(step, w.grad)
