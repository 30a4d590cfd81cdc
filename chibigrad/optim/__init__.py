"""torch.optim: optimizers and learning-rate schedules."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

# As in torch.optim, the modules are not part of the namespace (import chibigrad.optim.adam still works).
del adadelta, adagrad, adam, adamax, asgd, lbfgs, nadam, optimizer, radam, rmsprop, rprop, sgd  # noqa: F821

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.optim")
