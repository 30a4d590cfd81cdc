"""torch.nn.utils: gradient clipping, skip_init."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .init import skip_init
