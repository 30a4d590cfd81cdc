# The DQN optimisation step, after PyTorch's "Reinforcement Learning (DQN) Tutorial"
# (https://pytorch.org/tutorials/intermediate/reinforcement_q_learning.html): optimize_model with
# non_final_mask, state_action_values = policy_net(state_batch).gather(1, action_batch),
# next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values under no_grad,
# nn.SmoothL1Loss, torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100), optim.AdamW(amsgrad=True),
# and the soft update of target_net_state_dict[key] = policy*TAU + target*(1-TAU). Fixed transitions.
from collections import namedtuple
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 16)
        self.layer2 = nn.Linear(16, 16)
        self.layer3 = nn.Linear(16, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


GAMMA, TAU, LR = 0.99, 0.005, 1e-4
policy_net = DQN(4, 2)
target_net = DQN(4, 2)
with torch.no_grad():
    for i, p in enumerate(policy_net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.4)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = []
for k in range(6):
    s = torch.sin(torch.arange(4) * 0.5 + k).unsqueeze(0)
    ns = None if k == 3 else torch.cos(torch.arange(4) * 0.5 + k).unsqueeze(0)
    memory.append(Transition(s, torch.tensor([[k % 2]]), ns, torch.tensor([1.0])))


def optimize_model():
    transitions = memory
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(len(transitions))
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss


for step in range(3):
    loss = optimize_model()
    target_net_state_dict = target_net.state_dict()
    policy_net_state_dict = policy_net.state_dict()
    for key in policy_net_state_dict:
        target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
    target_net.load_state_dict(target_net_state_dict)
    print(step, f"{loss.item():.6f}")
print(policy_net.layer3.bias, target_net.layer3.bias)
with torch.no_grad():
    print(policy_net(memory[0].state).max(1).indices.view(1, 1))
