# Exponential moving average of model weights, after timm's ModelEmaV2
# (https://github.com/huggingface/pytorch-image-models/blob/main/timm/utils/model_ema.py: self.module = deepcopy(model); self.module.eval();
# _update with torch.no_grad(): for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
# ema_v.copy_(update_fn(ema_v, model_v)); update_fn = lambda e, m: self.decay * e + (1. - self.decay) * m), with a BatchNorm
# buffer (num_batches_tracked is an integer) and a short SGD loop. Fixed data.
from copy import deepcopy
import torch
import torch.nn as nn


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999, device=None):
        super(ModelEmaV2, self).__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5 + 0.1)
ema = ModelEmaV2(model, decay=0.9)
print(ema.module.training, model.training, list(model.state_dict().keys()))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
x = torch.sin(torch.arange(6 * 3) * 0.5).reshape(6, 3)
y = torch.tensor([0, 1, 1, 0, 1, 0])
for step in range(4):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
    print(step, f"{loss.item():.5f}")
print(ema.module[0].bias)
print(model[0].bias)
print(ema.module[1].running_mean, ema.module[1].num_batches_tracked, model[1].num_batches_tracked)
print(ema.module(x).argmax(1), model.eval()(x).argmax(1))
print(all(not p.requires_grad for p in ema.module.parameters()), ema.module[0].weight.requires_grad)
