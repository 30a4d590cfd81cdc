# Follows the PyTorch text-classification tutorial's shape (an embedding, mean over tokens, a linear
# layer, CrossEntropyLoss, SGD with StepLR, train/evaluate functions printing accuracy), on a tiny fixed
# vocabulary instead of AG_NEWS, with weights copied in under no_grad.
import torch
from torch import nn

vocab = {"<pad>": 0, "good": 1, "great": 2, "bad": 3, "awful": 4, "movie": 5, "plot": 6, "the": 7}
train_data = [("good movie", 1), ("great plot", 1), ("bad movie", 0), ("awful plot", 0), ("the good plot", 1),
              ("the bad movie", 0)]
test_data = [("great movie", 1), ("awful movie", 0), ("the great plot", 1)]


def encode(text, length=3):
    ids = [vocab[w] for w in text.split()]
    return ids + [0] * (length - len(ids))


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        with torch.no_grad():
            self.embedding.weight.copy_(torch.linspace(-0.5, 0.5, 16).reshape(8, 2))
            self.embedding.weight[0].zero_()
            self.fc.weight.copy_(torch.tensor([[0.2, -0.3], [-0.1, 0.4]]))
            self.fc.bias.zero_()

    def forward(self, text):
        embedded = self.embedding(text)
        mask = (text != 0).unsqueeze(-1).float()
        return self.fc((embedded * mask).sum(1) / mask.sum(1))


model = TextClassificationModel(len(vocab), 2, 2)
print(model)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)
X_train = torch.tensor([encode(t) for t, _ in train_data])
y_train = torch.tensor([label for _, label in train_data])
X_test = torch.tensor([encode(t) for t, _ in test_data])
y_test = torch.tensor([label for _, label in test_data])


def train(X, y):
    model.train()
    optimizer.zero_grad()
    predicted_label = model(X)
    loss = criterion(predicted_label, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
    return (predicted_label.argmax(1) == y).sum().item() / y.size(0), loss.item()


def evaluate(X, y):
    model.eval()
    with torch.no_grad():
        predicted_label = model(X)
        return (predicted_label.argmax(1) == y).sum().item() / y.size(0)


for epoch in range(1, 5):
    acc, loss = train(X_train, y_train)
    accu_val = evaluate(X_test, y_test)
    scheduler.step()
    print(f"| end of epoch {epoch:3d} | train acc {acc:8.3f} | loss {loss:.4f} | valid accuracy {accu_val:8.3f} | lr {scheduler.get_last_lr()[0]}")
print(model.embedding.weight.grad[0], model.embedding.weight[0])
print(model(torch.tensor([encode("good plot")])).softmax(1))
