# Linear warmup then cosine decay with LambdaLR, after Hugging Face transformers' get_cosine_schedule_with_warmup
# (https://github.com/huggingface/transformers/blob/main/src/transformers/optimization.py: lr_lambda(current_step) returns
# float(current_step) / float(max(1, num_warmup_steps)) during warmup, then max(0.0, 0.5 * (1.0 + math.cos(math.pi *
# float(num_cycles) * 2.0 * progress)))) and nanoGPT's get_lr; AdamW with decay / no-decay parameter groups.
import math
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5, last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return LambdaLR(optimizer, lr_lambda, last_epoch)


model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 1))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5 + (1.0 if i == 2 else 0.0))
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
print(len(decay), len(no_decay))
optimizer = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': no_decay, 'weight_decay': 0.0}], lr=1e-2)
scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=3, num_training_steps=10)
x = torch.sin(torch.arange(8 * 3) * 0.4).reshape(8, 3)
y = torch.cos(torch.arange(8) * 0.9).unsqueeze(1)
for step in range(10):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    print(step, f"{loss.item():.5f}", [round(g, 6) for g in scheduler.get_last_lr()])
print(scheduler.state_dict()['last_epoch'], scheduler.state_dict()['base_lrs'])
print(optimizer.param_groups[0]['lr'], optimizer.param_groups[0]['initial_lr'])


def get_lr(it, warmup_iters=2, lr_decay_iters=8, learning_rate=6e-4, min_lr=6e-5):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


for it in range(10):
    lr = get_lr(it)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
print(optimizer)
