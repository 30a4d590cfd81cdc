"""torch.nn: modules, parameters, losses, ``functional`` and ``init``."""
from . import functional, init, utils
from .modules import (GELU, BatchNorm1d, BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Dropout, Embedding, Flatten,
                      HuberLoss, Identity, KLDivLoss, L1Loss, LayerNorm, LeakyReLU, Linear, LogSoftmax, Module,
                      ModuleDict, ModuleList, MSELoss, NLLLoss, ParameterDict, ParameterList, ReLU, Sequential, Sigmoid,
                      SiLU, SmoothL1Loss, Softmax, Tanh, Unflatten)
from .modules import (AdaptiveAvgPool2d, AvgPool2d, BatchNorm2d, Conv1d, Conv2d, Dropout2d,  # noqa: E402
                      MaxPool2d)
from .modules import (CosineEmbeddingLoss, GroupNorm, HingeEmbeddingLoss, InstanceNorm2d,  # noqa: E402
                      MarginRankingLoss, RMSNorm, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .parameter import Parameter
from .parallel import DataParallel

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.nn")
