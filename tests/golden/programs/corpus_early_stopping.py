# Follows the early-stopping recipe in training tutorials: track the best validation loss, keep a
# copy.deepcopy of model.state_dict(), stop after `patience` epochs without improvement, then
# model.load_state_dict(best_state).
import copy
import torch
import torch.nn as nn

x_train = torch.tensor([[0.0], [1.0], [2.0], [3.0], [4.0]])
y_train = torch.tensor([[1.0], [3.2], [4.8], [7.1], [9.0]])
x_val = torch.tensor([[1.5], [2.5], [5.0]])
y_val = torch.tensor([[4.0], [6.0], [11.5]])

model = nn.Linear(1, 1)
with torch.no_grad():
    model.weight.fill_(0.0)
    model.bias.fill_(0.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.12)
loss_fn = nn.MSELoss()

best_val, best_state, best_epoch = float("inf"), None, -1
patience, bad_epochs = 2, 0
for epoch in range(50):
    model.train()
    optimizer.zero_grad()
    train_loss = loss_fn(model(x_train), y_train)
    train_loss.backward()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        val_loss = loss_fn(model(x_val), y_val).item()
    print(f"epoch {epoch:2d} train {train_loss.item():.4f} val {val_loss:.4f}")
    if val_loss < best_val:
        best_val, best_epoch, bad_epochs = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print(f"early stopping at epoch {epoch}, best epoch {best_epoch}")
            break

print(model.weight.item() == best_state["weight"].item())
print(model.load_state_dict(best_state))
print(model.state_dict())
with torch.no_grad():
    print(round(loss_fn(model(x_val), y_val).item(), 4), round(best_val, 4))
print(best_state["weight"].requires_grad, model.weight.requires_grad)
