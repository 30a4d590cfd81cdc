# REINFORCE, after pytorch/examples reinforcement_learning/reinforce.py
# (https://github.com/pytorch/examples/blob/main/reinforcement_learning/reinforce.py): Policy with Dropout,
# Categorical(probs), m.log_prob(action), discounted returns normalised with eps, policy_loss = torch.cat(...).sum().
# The environment is replaced by fixed states; actions are the argmax instead of m.sample(); dropout is off (eval).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma = 0.99


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
with torch.no_grad():
    for i, p in enumerate(policy.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
policy.eval()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = probs.argmax(dim=1)
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss


for i_episode in range(3):
    for t in range(5):
        state = np.sin(np.arange(4) * 0.9 + t + i_episode)
        action = select_action(state)
        policy.rewards.append(1.0 if action == 0 else 0.5)
    loss = finish_episode()
    print(i_episode, action, round(loss.item(), 4))
print(policy.affine2.bias)
