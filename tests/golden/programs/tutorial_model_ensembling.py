# requires: func.stack_module_state
# PyTorch's tutorial "Model ensembling" (torch.func), transcribed with fixed data instead of torch.randn,
# fewer and smaller minibatches, and the base model kept on the CPU (chibigrad has no 'meta' device).
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


def fixed(*shape, phase=0.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float64) * 0.37 + phase).sin().float().reshape(shape)


num_models = 4
data = fixed(num_models, 8, 1, 28, 28)
models = [SimpleMLP() for _ in range(num_models)]
with torch.no_grad():
    for m, model in enumerate(models):
        for i, p in enumerate(model.parameters()):
            p.copy_(fixed(*p.shape, phase=m + 0.1 * i) * 0.05)

minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
print(predictions1_vmap.shape)
print(predictions1_vmap[:, 0, :3].round(decimals=4))
assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)

predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print(predictions2_vmap[:, 1, :3].round(decimals=4))
assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
print("the ensemble's predictions match the loop")
