"""torch.utils: checkpointing and data loading."""
from . import checkpoint, data, hooks

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.utils")
