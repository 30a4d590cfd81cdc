"""torch.utils: checkpointing and data loading."""
from . import checkpoint, data
