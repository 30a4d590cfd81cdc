# mistake: detaches the target but keeps the detach on the prediction too, so no gradient flows at all
# expect: 0 points for td_loss
def td_loss(q_net, states, rewards, next_states, gamma=0.9):
    predicted = q_net(states)
    target = rewards + gamma * q_net(next_states).detach()
    return (predicted.detach() - target).pow(2).mean()
