"""kl_divergence(p, q) for the pairs chibigrad knows, each PyTorch's closed form."""
from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal


def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
    t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (p.logits.sigmoid().log() - q.logits.sigmoid().log())
    t2 = (1 - p.probs) * ((-p.logits).sigmoid().log() - (-q.logits).sigmoid().log())
    return t1 + t2


_KL = {(Normal, Normal): _kl_normal_normal, (Categorical, Categorical): _kl_categorical_categorical,
       (Bernoulli, Bernoulli): _kl_bernoulli_bernoulli}


def kl_divergence(p, q):
    try:
        rule = _KL[type(p), type(q)]
    except KeyError:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}") from None
    return rule(p, q)
