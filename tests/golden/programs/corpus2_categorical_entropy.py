# Categorical with logits, entropy bonus and log_prob of a batch of actions, as in A2C/PPO code
# (e.g. CleanRL ppo.py, https://github.com/vwxyzjn/cleanrl/blob/master/cleanrl/ppo.py: probs = Categorical(logits=logits);
# probs.log_prob(action), probs.entropy(); entropy_loss = entropy.mean()). Fixed logits and actions.
import torch
from torch.distributions.categorical import Categorical

logits = torch.tensor([[1.0, 0.5, -0.5], [0.2, 0.2, 0.2], [-1.0, 2.0, 0.0], [0.0, -3.0, 3.0]], requires_grad=True)
probs = Categorical(logits=logits)
print(probs.probs)
print(probs.logits)
action = torch.tensor([0, 2, 1, 2])
logprob = probs.log_prob(action)
entropy = probs.entropy()
print(logprob)
print(entropy)
print(probs.batch_shape, probs.event_shape)
advantages = torch.tensor([1.0, -0.5, 0.25, 2.0])
pg_loss = -(advantages * logprob).mean()
entropy_loss = entropy.mean()
loss = pg_loss - 0.01 * entropy_loss
loss.backward()
print(round(loss.item(), 6))
print(logits.grad)
c = Categorical(torch.tensor([0.25, 0.25, 0.5]))
print(c.probs, c.log_prob(torch.tensor(2)), c.entropy())
print(c.sample((5,)).shape)
print(c.enumerate_support())
