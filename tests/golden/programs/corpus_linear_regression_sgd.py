# Follows PyTorch's "Learning PyTorch with Examples" / "Linear Regression in PyTorch" tutorials:
# nn.Linear, nn.MSELoss, optim.SGD, print(epoch, loss.item()), then the learned weight and bias.
import torch
import torch.nn as nn

# y = 2x + 1 with a little fixed "noise"
x_train = torch.tensor([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
y_train = torch.tensor([[3.1], [4.9], [7.2], [8.8], [11.1], [13.0]])

model = nn.Linear(1, 1)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.5]]))
    model.bias.copy_(torch.tensor([0.0]))
print(model)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(20):
    outputs = model(x_train)
    loss = criterion(outputs, y_train)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 5 == 0:
        print('Epoch [{}/{}], Loss: {:.4f}'.format(epoch + 1, 20, loss.item()))

print(model.weight, model.bias)
print(model.weight.grad, model.bias.grad)
predicted = model(x_train).detach()
print(predicted)
print(predicted.numpy().round(3))
for name, param in model.named_parameters():
    print(name, param.data, param.requires_grad)
w, b = model.parameters()
print(f"w = {w.item():.3f}, b = {b.item():.3f}")
