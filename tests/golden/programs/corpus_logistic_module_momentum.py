# Follows the common "logistic regression with nn.Module" tutorials: a Module subclass with
# torch.sigmoid in forward, nn.BCELoss, SGD with momentum and weight decay, accuracy each few epochs.
import torch
import torch.nn as nn

X = torch.tensor([[1.0, 2.0], [2.0, 1.0], [2.0, 3.0], [3.0, 2.5], [-1.0, -2.0], [-2.0, -1.0], [-1.5, 0.0], [0.0, -1.0]])
y = torch.tensor([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]).view(-1, 1)


class LogisticRegression(nn.Module):
    def __init__(self, n_input_features):
        super(LogisticRegression, self).__init__()
        self.linear = nn.Linear(n_input_features, 1)

    def forward(self, x):
        y_predicted = torch.sigmoid(self.linear(x))
        return y_predicted


model = LogisticRegression(2)
with torch.no_grad():
    model.linear.weight[:] = torch.tensor([[-0.1, 0.2]])
    model.linear.bias.zero_()
print(model)
criterion = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
print(optimizer)
num_epochs = 25
for epoch in range(num_epochs):
    y_predicted = model(X)
    loss = criterion(y_predicted, y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if (epoch + 1) % 5 == 0:
        print(f'epoch: {epoch+1}, loss = {loss.item():.4f}')

with torch.no_grad():
    y_predicted = model(X)
    y_predicted_cls = y_predicted.round()
    acc = y_predicted_cls.eq(y).sum() / float(y.shape[0])
    print(f'accuracy: {acc.item():.4f}')
    print(y_predicted_cls.squeeze())
print(optimizer.state_dict()['param_groups'][0]['momentum'], len(optimizer.state))
print(y_predicted.requires_grad, y_predicted.grad_fn)
