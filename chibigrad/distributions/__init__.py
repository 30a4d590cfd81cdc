"""torch.distributions: Normal, Bernoulli, Categorical and Uniform (and MixtureSameFamily of them) with PyTorch's sample, rsample,
log_prob, entropy and argument checks, and kl_divergence between two of a kind. Samples use
chibigrad's generator (other numbers than PyTorch's); log_prob and entropy are PyTorch's formulas."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence
from .mixture_same_family import MixtureSameFamily
from .normal import Normal
from .uniform import Uniform

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.distributions")
