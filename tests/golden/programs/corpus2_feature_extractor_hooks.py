# Extracting intermediate activations with forward hooks, after the widely shared PyTorch forum answer
# "How can I extract intermediate layer output from loaded CNN model?" (https://discuss.pytorch.org/t/how-can-l-load-my-best-model-as-a-feature-extractor-evaluator/17254/6:
# activation = {}; def get_activation(name): def hook(model, input, output): activation[name] = output.detach(); return hook;
# model.fc2.register_forward_hook(get_activation('fc2'))) and Grad-CAM style gradient capture with
# register_full_backward_hook / tensor.register_hook, removing handles afterwards.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MyModel(nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.fc1 = nn.Linear(2 * 3 * 3, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        x = F.relu(self.conv(x))
        self.feature_map = x
        x = x.view(x.size(0), -1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


model = MyModel()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()
    return hook


h1 = model.fc1.register_forward_hook(get_activation('fc1'))
h2 = model.conv.register_forward_hook(get_activation('conv'))
gradients = {}


def save_grad(module, grad_input, grad_output):
    gradients['conv_out'] = grad_output[0]
    print('backward hook', type(module).__name__, len(grad_input), [g is None for g in grad_input])


h3 = model.conv.register_full_backward_hook(save_grad)
x = torch.sin(torch.arange(2 * 25) * 0.4).reshape(2, 1, 5, 5)
output = model(x)
print(activation['fc1'])
print(activation['conv'].shape, activation['conv'].requires_grad)
fm_grads = []
model.feature_map.register_hook(lambda g: fm_grads.append(g))
output[:, 1].sum().backward()
print(gradients['conv_out'].shape, torch.equal(fm_grads[0], gradients['conv_out'] * (model.feature_map > 0)))
weights = gradients['conv_out'].mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * activation['conv']).sum(dim=1))
print(cam[0])
for h in (h1, h2, h3):
    h.remove()
activation.clear()
model(x)
print(activation)
