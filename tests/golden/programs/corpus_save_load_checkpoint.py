# Follows the "Saving and Loading Models" tutorial: torch.save(model.state_dict(), PATH), a general
# checkpoint dict with epoch, model_state_dict, optimizer_state_dict and loss, torch.load and
# load_state_dict, model.eval(), then resuming training.
import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim


class TheModelClass(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def fixed_init(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 4)


model = TheModelClass()
fixed_init(model)
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
print("Model's state_dict:")
for param_tensor in model.state_dict():
    print(param_tensor, "\t", model.state_dict()[param_tensor].size())
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\t", optimizer.state_dict()[var_name])

x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
target = torch.tensor([[0.5, -0.5], [1.0, 0.0]])
for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
print(epoch, round(loss.item(), 6))

with tempfile.TemporaryDirectory() as tmp:
    PATH = os.path.join(tmp, "model.pt")
    torch.save(model.state_dict(), PATH)
    model2 = TheModelClass()
    print(model2.load_state_dict(torch.load(PATH, weights_only=True)))
    model2.eval()
    print(torch.equal(model2(x), model(x)), model2.training)

    CKPT = os.path.join(tmp, "checkpoint.tar")
    torch.save({
        'epoch': epoch,
        'model_state_dict': model.state_dict(),
        'optimizer_state_dict': optimizer.state_dict(),
        'loss': loss,
    }, CKPT)
    model3 = TheModelClass()
    optimizer3 = optim.SGD(model3.parameters(), lr=0.001, momentum=0.9)
    checkpoint = torch.load(CKPT, weights_only=True)
    model3.load_state_dict(checkpoint['model_state_dict'])
    optimizer3.load_state_dict(checkpoint['optimizer_state_dict'])
    epoch = checkpoint['epoch']
    loss = checkpoint['loss']
    print(epoch, loss, sorted(checkpoint))
    print(optimizer3.state_dict()['state'][0]['momentum_buffer'])
    model3.train()

# resuming gives the same next step as never stopping
for m, o in [(model, optimizer), (model3, optimizer3)]:
    o.zero_grad()
    nn.functional.mse_loss(m(x), target).backward()
    o.step()
print(torch.equal(model.fc1.weight, model3.fc1.weight), model3.fc2.bias)

# an in-memory buffer works the same way
buffer = io.BytesIO()
torch.save({"w": torch.tensor([1.0, 2.0]), "step": 3}, buffer)
buffer.seek(0)
print(torch.load(buffer))
# strict=False reports what did not match
partial = {k: v for k, v in model.state_dict().items() if k.startswith("fc1")}
print(model3.load_state_dict(partial, strict=False))
try:
    model3.load_state_dict(partial)
except RuntimeError as e:
    print("RuntimeError:", e)
