# What printing an optimizer and its state_dict shows: every hyper-parameter of each param group,
# including PyTorch's implementation switches (foreach, fused, ...), which take their defaults.
import torch

w = torch.nn.Parameter(torch.ones(2))
for opt in (torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True), torch.optim.Adam([w], lr=0.01),
            torch.optim.AdamW([w], lr=0.01, amsgrad=True), torch.optim.SGD([w], lr=0.1, foreach=False)):
    print(opt)
    print(opt.state_dict()["param_groups"])
    print(list(opt.defaults))
