# Detaches both sides "to be safe": the loss no longer depends on any parameter and backward fails.
def td_loss(q_net, states, rewards, next_states, gamma=0.9):
    predicted = q_net(states).detach()
    target = (rewards + gamma * q_net(next_states)).detach()
    return (predicted - target).pow(2).mean()
