# torch.save / torch.load as PyTorch's "Saving and loading models" tutorial uses them: a model's
# state_dict, a general checkpoint with the optimizer's state, resuming training, plain tensors and
# containers (to an in-memory file and to a path), and what weights_only=True refuses.
import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim
from golden_helpers import attempt


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def fixed(net):
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
    return net


X = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3], [-0.7, 0.8, 0.1], [0.0, 1.0, -1.0]])
Y = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
net = fixed(Net())
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
criterion = nn.BCEWithLogitsLoss()
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(net(X), Y)
    loss.backward()
    optimizer.step()

with tempfile.TemporaryDirectory() as tmp:
    # save/load the state_dict (recommended)
    PATH = os.path.join(tmp, "model.pt")
    torch.save(net.state_dict(), PATH)
    model = fixed(Net())
    print(model.load_state_dict(torch.load(PATH, weights_only=True)))
    model.eval()
    net.eval()
    print(torch.equal(model(X), net(X)), model.bn.running_mean, model.bn.num_batches_tracked)
    loaded = torch.load(PATH)
    print(type(loaded).__name__, list(loaded), [v.requires_grad for v in loaded.values()])
    net.train()

    # a general checkpoint for inference and/or resuming training
    CKPT = os.path.join(tmp, "checkpoint.tar")
    torch.save({"epoch": 3, "model_state_dict": net.state_dict(), "optimizer_state_dict": optimizer.state_dict(),
                "loss": loss}, CKPT)
    model = fixed(Net())
    opt = optim.SGD(model.parameters(), lr=0.5)
    checkpoint = torch.load(CKPT, weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    opt.load_state_dict(checkpoint["optimizer_state_dict"])
    epoch, saved_loss = checkpoint["epoch"], checkpoint["loss"]
    print(epoch, saved_loss, saved_loss.requires_grad, saved_loss.grad_fn, opt)
    print(checkpoint["optimizer_state_dict"]["state"][0])
    model.train()
    for m, o in ((net, optimizer), (model, opt)):  # both continue from the same point
        o.zero_grad()
        criterion(m(X), Y).backward()
        o.step()
    print(all(torch.equal(a, b) for a, b in zip(net.parameters(), model.parameters())))

    for label, fn in [("missing file", lambda: torch.load(os.path.join(tmp, "nope.pt"))),
                      ("missing directory", lambda: torch.save(torch.ones(1), os.path.join(tmp, "no", "x.pt")))]:
        try:
            fn()
        except Exception as e:  # (the temporary directory's name changes every run)
            print(label, type(e).__name__, "|", str(e).replace(tmp, "TMP"))

# tensors and containers, through an in-memory file
w = nn.Parameter(torch.tensor([1.0, -2.0]))
t = torch.arange(6.0).reshape(2, 3)
stuff = {"w": w, "t": t, "row": t[1], "tt": t.t(), "ints": torch.tensor([1, 2], dtype=torch.int32),
         "flags": torch.tensor([True, False]), "scalar": torch.tensor(3.5, dtype=torch.float64),
         "grad": torch.ones(2, requires_grad=True) * 2, "meta": (1, 2.5, None, "text", [True, {"k": 0}]),
         7: "an int key", "dtype": torch.float64, "size": torch.Size([2, 3]), "same": [w, w]}
buffer = io.BytesIO()
torch.save(stuff, buffer)
buffer.seek(0)
back = torch.load(buffer)
for key, value in back.items():
    print(repr(key), value if key != "w" else (value, type(value).__name__))
print(back["same"][0] is back["same"][1], back["w"] is back["same"][0], back["grad"].is_leaf)
for value in (torch.tensor([[1.0, 2.0]]), [torch.zeros(0), torch.ones(2, 0)], torch.tensor(5)):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    print(torch.load(buffer, weights_only=True))
