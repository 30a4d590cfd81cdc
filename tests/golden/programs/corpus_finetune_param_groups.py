# Follows the transfer-learning tutorial pattern: freeze a "backbone" with requires_grad = False,
# give the optimizer only trainable parameters (filter(lambda p: p.requires_grad, ...)), per-layer
# learning rates with parameter groups, weight decay off for biases, and add_param_group to unfreeze.
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
head = nn.Linear(3, 1)
model = nn.Sequential(backbone, head)
with torch.no_grad():
    backbone[0].weight.copy_(torch.tensor([[0.5, -0.5], [1.0, 0.25], [-0.75, 0.5]]))
    backbone[0].bias.copy_(torch.tensor([0.1, 0.0, 0.2]))
    head.weight.copy_(torch.tensor([[0.3, -0.2, 0.6]]))
    head.bias.fill_(0.0)

for param in backbone.parameters():
    param.requires_grad = False
trainable = filter(lambda p: p.requires_grad, model.parameters())
optimizer = torch.optim.SGD(trainable, lr=0.1, momentum=0.9)
print(len(optimizer.param_groups[0]['params']))

x = torch.tensor([[1.0, 2.0], [2.0, -1.0], [0.0, 1.0]])
y = torch.tensor([[1.0], [0.0], [0.5]])
for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(epoch, f"{loss.item():.5f}", backbone[0].weight.grad, head.weight.grad)
print(backbone[0].weight)

# unfreeze and add the backbone with a smaller learning rate
for param in backbone.parameters():
    param.requires_grad = True
optimizer.add_param_group({'params': backbone.parameters(), 'lr': 0.01})
print([g['lr'] for g in optimizer.param_groups], [len(g['params']) for g in optimizer.param_groups])
print(optimizer.param_groups[1]['momentum'])
for epoch in range(2):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    print(epoch, f"{loss.item():.5f}")
print(backbone[0].weight)

# no weight decay on biases, as in many training scripts
decay, no_decay = [], []
for name, param in model.named_parameters():
    (no_decay if name.endswith("bias") else decay).append(param)
opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.01}, {'params': no_decay, 'weight_decay': 0.0}], lr=1e-3)
print([(len(g['params']), g['weight_decay'], g['lr']) for g in opt.param_groups])
opt.zero_grad()
nn.functional.mse_loss(model(x), y).backward()
opt.step()
print(head.bias, head.weight)

try:
    optimizer.add_param_group({'params': head.parameters()})
except ValueError as e:
    print("ValueError:", e)
try:
    torch.optim.SGD([torch.ones(2, requires_grad=True)])
except TypeError as e:
    print("TypeError:", e)
