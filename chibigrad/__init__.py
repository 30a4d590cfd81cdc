"""chibigrad: PyTorch's autograd, re-implemented on numpy to be read.

``import chibigrad as torch`` runs the covered subset of PyTorch programs
unchanged: tensors, the differentiable ops, autograd, nn, optim and friends.
"""
import numpy as _np

# PyTorch computes inf and nan silently (log(0) is -inf, 0/0 is nan); numpy warns on
# each. Rather than pay for an np.errstate around every op, importing chibigrad turns
# numpy's floating-point warnings off for the importing thread, as np.seterr documents.
_np.seterr(all="ignore")

from . import _dtype
from ._device import device
from ._dtype import (Size, bool, double, dtype, float, float16, float32, float64, get_default_dtype, half, int,
                     int8, int16, int32, int64, long, uint8)
from .tensor import Tensor
from ._tensor_str import set_printoptions
from ._legacy import (BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
                      LongTensor, ShortTensor)
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, get_rng_state,
                       linspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn, randn_like,
                       randperm, set_rng_state, tensor, zeros, zeros_like)
from .ops import *  # noqa: F401,F403 - torch.mul, torch.sum, ...: every op function (chibigrad/ops/__init__.py)
from . import autograd, cuda, distributions, func, linalg, memory, nn, optim, profiler, testing, utils
from .autograd import functional as _functional  # noqa: F401 - torch.autograd.functional, once Tensor exists
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .autograd.anomaly_mode import is_anomaly_enabled
from ._dtype import set_default_dtype  # noqa: E402 - issue 16: default dtype and device, save and load
from ._device import get_default_device, set_default_device  # noqa: E402
from . import serialization  # noqa: E402
from . import compile  # noqa: E402,A004 - torch.compile; chibigrad.compile.explain
from .serialization import load, save  # noqa: E402

__version__ = "0.1.0"

from . import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch")
