# Removes the detach altogether: the gradient now also flows through the target, pulling the next
# state's value towards the current prediction (the "residual gradient", not TD learning).
def td_loss(q_net, states, rewards, next_states, gamma=0.9):
    predicted = q_net(states)
    target = rewards + gamma * q_net(next_states)
    return (predicted - target).pow(2).mean()
