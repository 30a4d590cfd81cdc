"""torch.optim: optimizers (filled in by the library layer)."""
