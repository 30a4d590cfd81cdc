# Actor-critic, after pytorch/examples reinforcement_learning/actor_critic.py
# (https://github.com/pytorch/examples/blob/main/reinforcement_learning/actor_critic.py): shared affine1, action_head
# and value_head, SavedAction namedtuple, advantage = R - value.item(), F.smooth_l1_loss(value, torch.tensor([R])),
# torch.stack(policy_losses).sum() + torch.stack(value_losses).sum(). Fixed states; greedy actions.
from collections import namedtuple
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
eps = np.finfo(np.float32).eps.item()


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 8)
        self.action_head = nn.Linear(8, 2)
        self.value_head = nn.Linear(8, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


model = Policy()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
optimizer = optim.Adam(model.parameters(), lr=3e-2)


def select_action(state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = torch.tensor(int(state[0] > 0))
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode(gamma=0.99):
    R = 0
    saved_actions = model.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


for episode in range(3):
    for t in range(6):
        action = select_action(np.cos(np.arange(4) * 1.1 + 0.5 * t + episode))
        model.rewards.append(1.0 - 0.1 * t)
    print(episode, '{:.4f}'.format(finish_episode()))
print(model.value_head.weight.grad)
