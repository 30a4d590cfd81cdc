# Follows the nn.ModuleDict / nn.ParameterList documentation examples and course code that keeps
# layers and parameters in containers: a ModuleDict of activations chosen by name, a ParameterList of
# per-layer weights used in a loop, ParameterDict, and how each shows in parameters(), state_dict and repr.
import torch
import torch.nn as nn


class MyModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.choices = nn.ModuleDict({
            'linear': nn.Linear(2, 2),
            'scale': nn.Linear(2, 2, bias=False),
        })
        self.activations = nn.ModuleDict([
            ['lrelu', nn.LeakyReLU()],
            ['relu', nn.ReLU()],
        ])

    def forward(self, x, choice, act):
        x = self.choices[choice](x)
        x = self.activations[act](x)
        return x


m = MyModule()
with torch.no_grad():
    m.choices['linear'].weight.copy_(torch.tensor([[1.0, -1.0], [0.5, 2.0]]))
    m.choices['linear'].bias.copy_(torch.tensor([0.0, -3.0]))
    m.choices['scale'].weight.copy_(torch.tensor([[2.0, 0.0], [0.0, -2.0]]))
print(m)
print(list(m.choices.keys()), len(m.activations), 'relu' in m.activations)
x = torch.tensor([[1.0, 2.0]])
out = m(x, 'linear', 'lrelu')
print(out, out.grad_fn.name())
out.sum().backward()
print(m.choices['linear'].weight.grad, m.choices['scale'].weight.grad)
print([name for name, _ in m.named_parameters()])
for key, module in m.activations.items():
    print(key, module)


class MyList(nn.Module):
    def __init__(self):
        super().__init__()
        self.params = nn.ParameterList([nn.Parameter(torch.full((2, 2), float(i + 1))) for i in range(3)])

    def forward(self, x):
        for i, p in enumerate(self.params):
            x = self.params[i // 2].mm(x) + p.mm(x)
        return x


ml = MyList()
print(ml)
y = ml(torch.tensor([[1.0], [0.5]]))
y.sum().backward()
print(y, [p.grad for p in ml.params])
print(list(ml.state_dict().keys()), len(ml.params))
ml.params.append(nn.Parameter(torch.zeros(1)))
print(len(list(ml.parameters())))

pd = nn.ParameterDict({'left': nn.Parameter(torch.tensor([1.0, 2.0])), 'right': nn.Parameter(torch.tensor([3.0]))})
print(pd)
print(sorted(pd.keys()), pd['left'] * 2)
(pd['left'].sum() * pd['right']).sum().backward()
print(pd['left'].grad, pd['right'].grad)
holder = nn.Module()
holder.pd = pd
print([n for n, _ in holder.named_parameters()])
