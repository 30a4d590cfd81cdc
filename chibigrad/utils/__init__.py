"""torch.utils: checkpointing and data loading."""
