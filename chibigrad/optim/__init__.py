"""torch.optim: optimizers and learning-rate schedules."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.optim")
