"""torch.optim: optimizers and learning-rate schedules."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD
