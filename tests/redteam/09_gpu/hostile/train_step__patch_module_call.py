# attack: the data is never moved to the model's device (the exercise), and instead nn.Module.__call__
#   and F.mse_loss are patched to move their inputs to the module's / the first argument's device, so the
#   wrong train_step runs without a device error
# expect: 0 points for train_step; batch continues
_call = nn.Module.__call__


def _moving_call(self, *args, **kwargs):
    params = list(self.parameters())
    if params:
        dev = params[0].device
        args = tuple(a.to(dev) if isinstance(a, torch.Tensor) else a for a in args)
    return _call(self, *args, **kwargs)


nn.Module.__call__ = _moving_call
_mse = F.mse_loss
F.mse_loss = lambda out, target, *a, **k: _mse(out, target.to(out.device), *a, **k)
torch.nn.functional.mse_loss = F.mse_loss


def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
