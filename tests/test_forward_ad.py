"""Forward mode: every op's ``jvp`` rule against reverse mode (J v from jacrev's full Jacobian) and
central differences, on random shapes with broadcasting; dual_level, make_dual and unpack_dual with
PyTorch's errors; jvp on custom Functions; forward over reverse."""
import math

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.autograd.forward_ad as fwAD
import chibigrad.nn.functional as F
from chibigrad import func
from chibigrad.ops import pointwise, reduction, selection, shape
from chibigrad.ops import linalg
from chibigrad.nn import _functions
from chibigrad.utils.checkpoint import checkpoint

rng = np.random.default_rng(0)


def rand(*shape, low=-2.0, high=2.0):
    return torch.tensor(rng.uniform(low, high, shape))


def positive(*shape):
    return rand(*shape, low=0.5, high=2.0)


def index(*shape, high):
    return torch.tensor(rng.integers(0, high, shape))


# (name, function of the differentiated tensors, the tensors): shapes broadcast where the op allows it
CASES = [
    ("add", lambda a, b: a + b, [rand(3, 1), rand(4)]),
    ("sub", lambda a, b: a - b, [rand(2, 3), rand(3)]),
    ("rsub", lambda a: 2.0 - a, [rand(3)]),
    ("mul", lambda a, b: a * b, [rand(3, 1), rand(1, 4)]),
    ("mul_scalar", lambda a: a * 3.5, [rand(2, 2)]),
    ("div", lambda a, b: a / b, [rand(2, 3), positive(3)]),
    ("neg", lambda a: -a, [rand(4)]),
    ("pow", lambda a: a ** 3, [rand(3, 2)]),
    ("pow_zero", lambda a: a ** 0, [rand(3)]),
    ("pow_tensor", lambda a, b: a ** b, [positive(2, 3), rand(3)]),
    ("rpow", lambda a: 2.0 ** a, [rand(4)]),
    ("exp", lambda a: a.exp(), [rand(2, 3)]),
    ("log", lambda a: a.log(), [positive(3)]),
    ("log2", lambda a: a.log2(), [positive(3)]),
    ("log10", lambda a: a.log10(), [positive(3)]),
    ("log1p", lambda a: a.log1p(), [positive(3)]),
    ("expm1", lambda a: a.expm1(), [rand(3)]),
    ("sqrt", lambda a: a.sqrt(), [positive(2, 2)]),
    ("abs", lambda a: a.abs(), [rand(5)]),
    ("sin", lambda a: a.sin(), [rand(3)]),
    ("cos", lambda a: a.cos(), [rand(3)]),
    ("tanh", lambda a: a.tanh(), [rand(2, 3)]),
    ("sigmoid", lambda a: a.sigmoid(), [rand(2, 3)]),
    ("relu", lambda a: a.relu(), [rand(6)]),
    ("reciprocal", lambda a: a.reciprocal(), [positive(3)]),
    ("clamp", lambda a: a.clamp(-0.5, 0.7), [rand(6)]),
    ("clamp_tensor", lambda a: a.clamp(min=torch.tensor(-0.3)), [rand(6)]),
    ("where", lambda a, b: torch.where(a > 0, a, b), [rand(2, 3), rand(3)]),
    ("maximum", lambda a, b: torch.maximum(a, b), [rand(2, 3), rand(3)]),
    ("minimum", lambda a, b: torch.minimum(a, b), [rand(2, 3), rand(3)]),
    ("hypot", lambda a, b: torch.hypot(a, b), [rand(2, 3), rand(3)]),
    ("floor", lambda a: a.floor() + a, [rand(3)]),
    ("round", lambda a: a.round(decimals=1) + a, [rand(3)]),
    ("remainder", lambda a, b: a % b, [rand(3), positive(3)]),
    ("fmod", lambda a, b: torch.fmod(a, b), [rand(3), positive(3)]),
    ("clone", lambda a: a.clone(), [rand(3)]),
    ("to", lambda a: a.to(torch.float32).to(torch.float64), [rand(3)]),
    ("add_", lambda a, b: a.clone().add_(b).mul_(b), [rand(2, 3), rand(3)]),
    ("index_put_scalar", lambda a: _put(a, 0.5), [rand(2, 3)]),
    ("sum", lambda a: a.sum(), [rand(2, 3)]),
    ("sum_dim", lambda a: a.sum(1, keepdim=True), [rand(2, 3)]),
    ("mean", lambda a: a.mean(0), [rand(2, 3)]),
    ("amax", lambda a: a.amax(1), [rand(2, 3)]),
    ("max_all", lambda a: a.max(), [rand(2, 3)]),
    ("max_dim", lambda a: a.max(1).values, [rand(2, 3)]),
    ("min_dim", lambda a: a.min(0, keepdim=True).values, [rand(2, 3)]),
    ("prod", lambda a: a.prod(1), [rand(2, 3)]),
    ("var", lambda a: a.var(1), [rand(2, 4)]),
    ("std", lambda a: a.std(), [rand(2, 4)]),
    ("norm", lambda a: a.norm(), [rand(2, 3)]),
    ("norm_p", lambda a: torch.norm(a, p=3, dim=1), [rand(2, 3)]),
    ("softmax", lambda a: a.softmax(-1), [rand(2, 3)]),
    ("log_softmax", lambda a: a.log_softmax(0), [rand(2, 3)]),
    ("logsumexp", lambda a: a.logsumexp(1), [rand(2, 3)]),
    ("view", lambda a: a.t().reshape(6).view(3, 2), [rand(2, 3)]),
    ("squeeze", lambda a: a.unsqueeze(0).squeeze(), [rand(1, 3)]),
    ("transpose", lambda a: a.transpose(0, 1) * 1.0, [rand(2, 3)]),
    ("permute", lambda a: a.permute(2, 0, 1), [rand(2, 3, 2)]),
    ("expand", lambda a: a.expand(2, 3), [rand(3)]),
    ("index", lambda a: a[1:, 0] + a[[0, 1], [2, 0]], [rand(2, 3)]),
    ("index_put", lambda a, b: _put(a, b), [rand(2, 3), rand(3)]),
    ("tril", lambda a: a.tril() + a.triu(1), [rand(3, 3)]),
    ("cat", lambda a, b: torch.cat([a, b], 1), [rand(2, 1), rand(2, 3)]),
    ("stack", lambda a, b: torch.stack([a, b], 1), [rand(2, 3), rand(2, 3)]),
    ("split", lambda a: a.split(2, 1)[1] * 2, [rand(2, 3)]),
    ("unbind", lambda a: a.unbind(1)[2], [rand(2, 3)]),
    ("gather", lambda a, i=index(2, 4, high=3): a.gather(1, i), [rand(2, 3)]),
    ("scatter_add", lambda a, b, i=index(2, 2, high=3): a.scatter_add(1, i, b), [rand(2, 3), rand(2, 2)]),
    ("scatter", lambda a, b: a.scatter(1, torch.tensor([[2], [0]]), b), [rand(2, 3), rand(2, 1)]),
    ("scatter_value", lambda a: a.scatter(1, torch.tensor([[2], [0]]), value=1.5), [rand(2, 3)]),
    ("index_select", lambda a: a.index_select(0, torch.tensor([1, 1, 0])), [rand(2, 3)]),
    ("index_add", lambda a, b: a.index_add(0, torch.tensor([1, 1]), b, alpha=2), [rand(2, 3), rand(2, 3)]),
    ("sort", lambda a: a.sort(1).values, [rand(2, 4)]),
    ("topk", lambda a: a.topk(2).values, [rand(2, 4)]),
    ("matmul", lambda a, b: a @ b, [rand(2, 3), rand(3, 4)]),
    ("bmm", lambda a, b: a @ b, [rand(2, 2, 3), rand(3, 2)]),
    ("mv", lambda a, b: a @ b, [rand(2, 3), rand(3)]),
    ("dot", lambda a, b: a @ b, [rand(3), rand(3)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), [rand(4, 3), rand(2, 3), rand(2)]),
    ("linear_3d", lambda x, w, b: F.linear(x, w, b), [rand(2, 4, 3), rand(2, 3), rand(2)]),
    ("erf", lambda a: _functions.Erf.apply(a), [rand(3)]),
    ("gelu", lambda a: F.gelu(a) + F.gelu(a, approximate="tanh"), [rand(4)]),
    ("silu", lambda a: F.silu(a), [rand(4)]),
    ("leaky_relu", lambda a: F.leaky_relu(a, 0.1), [rand(5)]),
    ("mse_loss", lambda a, b: F.mse_loss(a, b), [rand(2, 3), rand(2, 3)]),
    ("smooth_l1", lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), [rand(2, 3), rand(2, 3)]),
    ("huber", lambda a, b: F.huber_loss(a, b, reduction="sum", delta=0.7), [rand(2, 3), rand(2, 3)]),
    ("bce", lambda a, b: F.binary_cross_entropy(a, b, weight=torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)),
     [rand(2, 3, low=0.1, high=0.9), rand(2, 3, low=0.1, high=0.9)]),
    ("bce_logits", lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"), [rand(2, 3), rand(2, 3)]),
    ("bce_logits_pos", lambda a, b: F.binary_cross_entropy_with_logits(
        a, b, pos_weight=torch.tensor([2.0, 1.0, 0.5], dtype=torch.float64)), [rand(2, 3), rand(2, 3)]),
    ("cross_entropy", lambda a: F.cross_entropy(a, torch.tensor([2, 0])), [rand(2, 3)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (3,), w, b), [rand(2, 3), rand(3), rand(3)]),
    ("layer_norm_2d", lambda x: F.layer_norm(x, (2, 3)), [rand(4, 2, 3)]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [rand(4, 3), rand(3), rand(3)]),
    ("batch_norm_eval", lambda x, w, b: F.batch_norm(x, torch.tensor([0.1, -0.2], dtype=torch.float64),
                                                     torch.tensor([1.5, 0.5], dtype=torch.float64), w, b),
     [rand(3, 2, 4), rand(2), rand(2)]),
    ("embedding", lambda w: F.embedding(torch.tensor([[1, 0], [1, 1]]), w), [rand(3, 2)]),
]


def _put(a, b):
    out = a.clone()
    out[1] = b
    return out


def forward_jvp(fn, inputs, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip(inputs, tangents)]
        out = fn(*duals)
        return fwAD.unpack_dual(out).tangent


def reverse_jvp(fn, inputs, tangents):
    """J v assembled from the full Jacobians that reverse mode (jacrev) gives, one per input."""
    total = 0
    for i, (x, t) in enumerate(zip(inputs, tangents)):
        jac = func.jacrev(fn, argnums=i)(*inputs).numpy()
        out_shape = jac.shape[:jac.ndim - x.ndim]
        total = total + jac.reshape(*out_shape, -1) @ t.numpy().reshape(-1)
    return total


def finite_difference_jvp(fn, inputs, tangents, eps=1e-6):
    plus = fn(*[x + eps * t for x, t in zip(inputs, tangents)]).numpy()
    minus = fn(*[x - eps * t for x, t in zip(inputs, tangents)]).numpy()
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_jvp_rule_matches_reverse_mode_and_finite_differences(name, fn, inputs):
    tangents = [rand(*x.shape) for x in inputs]
    got = forward_jvp(fn, inputs, tangents)
    assert got is not None, f"{name}: the output has no tangent"
    value = fn(*inputs)
    assert got.shape == value.shape and got.dtype == value.dtype
    rtol = 1e-6 if name == "to" else 1e-9  # through float32
    np.testing.assert_allclose(got.numpy(), reverse_jvp(fn, inputs, tangents), rtol=rtol, atol=1e-12)
    if name != "to":  # (float32 inside: too coarse for finite differences)
        np.testing.assert_allclose(got.numpy(), finite_difference_jvp(fn, inputs, tangents), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name,fn,inputs", CASES[:30:3], ids=[c[0] for c in CASES[:30:3]])
def test_only_some_inputs_dual(name, fn, inputs):
    """Inputs without a tangent count as constants: their tangent is zero."""
    tangents = [rand(*inputs[0].shape)] + [torch.zeros_like(x) for x in inputs[1:]]
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(inputs[0], tangents[0]), *inputs[1:])
        got = fwAD.unpack_dual(out).tangent
    np.testing.assert_allclose(got.numpy(), reverse_jvp(fn, inputs, tangents), rtol=1e-9, atol=1e-12)


def test_every_op_with_a_backward_has_a_jvp_rule_or_is_listed():
    """A new op must come with its forward rule (or be listed here as one that has none yet)."""
    without = set()
    missing = []
    for module in (pointwise, reduction, selection, shape, linalg, _functions):
        for cls in vars(module).values():
            if (isinstance(cls, type) and issubclass(cls, torch.autograd.Function) and cls.__module__ == module.__name__
                    and cls.jvp is torch.autograd.Function.jvp):
                missing.append(cls.__name__)
    assert sorted(set(missing) - without) == []


# ---- dual_level, make_dual, unpack_dual: PyTorch's behaviour and errors ------------------------
def raises(fn, message, kind=RuntimeError):
    with pytest.raises(kind) as err:
        fn()
    assert str(err.value) == message


def test_unpack_dual_is_a_namedtuple_and_tangents_end_with_the_level():
    x, v = rand(3), rand(3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        primal, tangent = fwAD.unpack_dual(dual)
        assert type(fwAD.unpack_dual(dual)).__name__ == "UnpackedDualTensor"
        assert fwAD.unpack_dual(dual)._fields == ("primal", "tangent")
        assert tangent is v and fwAD.unpack_dual(primal).tangent is None
        assert primal._base is x and fwAD.unpack_dual(x).tangent is None
        out = dual * 2
    assert fwAD.unpack_dual(out).tangent is None and fwAD.unpack_dual(dual).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(dual).tangent is None  # a new level does not see the old one's tangents


def test_errors_as_pytorch():
    x, v = rand(3), rand(3)
    raises(lambda: fwAD.make_dual(x, v), "Trying to create a dual Tensor for forward AD but no level exists, make "
                                         "sure to enter_dual_level() first.")
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the moment$"):
            with fwAD.dual_level():
                pass
        raises(lambda: fwAD.make_dual(x, rand(4)), "Trying to set a forward gradient that has a different size than "
               "that of the original Tensor, this is not supported. Tensor is of size [3] while the given forward "
               "gradient is of size [4].")
        raises(lambda: fwAD.make_dual(torch.arange(3), torch.arange(3)),
               "Expected primal to be floating point or complex, but got: torch.int64", ValueError)
        raises(lambda: fwAD.make_dual(x, v, level=3), "Invalid level given to _make_dual")
        dual = fwAD.make_dual(x, v)
        raises(lambda: fwAD.make_dual(dual, v), "Making a dual Tensor based on a Tensor that already has a forward "
                                                "gradient at the same level 0 is not supported."
               .replace("level 0", f"level {fwAD._state.level}"))
        leaf_dual = fwAD.make_dual(x.clone().requires_grad_(), v)
        raises(lambda: checkpoint(torch.sin, leaf_dual, use_reentrant=True), "You must implement the jvp function for "
               "custom autograd.Function to use it with forward mode AD.", NotImplementedError)  # PyTorch's too
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with Ruleless that does not "
                                                      "support it"):
            RulelessOp.apply(dual)


class RulelessOp(torch.autograd.Function):
    """A built-in op (it names its node) without a forward rule."""
    node_name = "RulelessBackward0"

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class ScaledSin(torch.autograd.Function):
    """sin(a) * k, with the forward rule written by hand."""

    @staticmethod
    def forward(ctx, a, k):
        assert fwAD.unpack_dual(a).tangent is None  # forward sees plain values, as in PyTorch
        ctx.save_for_backward(a)
        ctx.save_for_forward(a.cos() * k)
        ctx.k = k
        return a.sin() * k

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.cos() * ctx.k, None

    @staticmethod
    def jvp(ctx, ta, _):
        (slope,) = ctx.saved_tensors  # save_for_forward's tensors
        return ta * slope


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_custom_function_jvp_and_save_for_forward():
    x, v = rand(4), rand(4)
    x.requires_grad_()
    with fwAD.dual_level():
        out = ScaledSin.apply(fwAD.make_dual(x, v), 3.0)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), (v * x.detach().cos() * 3).numpy())
        out.sum().backward()  # reverse mode still works on the same call
    np.testing.assert_allclose(x.grad.numpy(), (x.detach().cos() * 3).numpy())
    with fwAD.dual_level():
        raises(lambda: NoJvp.apply(fwAD.make_dual(x, v)), "You must implement the jvp function for custom "
               "autograd.Function to use it with forward mode AD.", NotImplementedError)
        NoJvp.apply(x)  # without a tangent among the inputs, no rule is needed


def test_non_reentrant_checkpoint_passes_tangents():
    x, v = rand(3), rand(3)
    with fwAD.dual_level():
        out = checkpoint(lambda t: t.sin() * 2, fwAD.make_dual(x, v), use_reentrant=False)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.numpy(), (2 * x.cos() * v).numpy())


def test_inplace_on_a_view_updates_the_base_tangent():
    x, v = rand(3), rand(3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        y = torch.zeros(3)
        y[0] = dual[1] * 2
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [2 * v[1].item(), 0, 0])


# ---- torch.func -------------------------------------------------------------------------------------
W, B = rand(4, 3), rand(4)


def mlp_loss(x):
    return ((W @ x + B).tanh() ** 2).sum() + x.exp().prod()


def test_func_jvp_is_forward_mode_and_matches_reverse():
    x, v = rand(3), rand(3)
    fn = lambda a: (W @ a).sigmoid() * a.sum()  # noqa: E731
    out, tangent = func.jvp(fn, (x,), (v,))
    _, reverse = torch.autograd.functional.jvp(fn, x, v)
    np.testing.assert_allclose(tangent.numpy(), reverse.numpy(), rtol=1e-12)
    np.testing.assert_allclose(func.jacfwd(fn)(x).numpy(), func.jacrev(fn)(x).numpy(), rtol=1e-12)
    (o1, o2), (t1, t2) = func.jvp(lambda a: (a.sin(), a.cos()), (x,), (v,))
    np.testing.assert_allclose(t2.numpy(), (-x.sin() * v).numpy())
    _, _, aux = func.jvp(lambda a: (a.sin(), a.sum()), (x,), (v,), has_aux=True)
    assert fwAD.unpack_dual(aux).tangent is None and aux.item() == x.sum().item()
    raises(lambda: func.jvp(fn, x, (v,)), "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                                          "should be valid to call f(*primals).")
    raises(lambda: func.jvp(lambda a: 3, (x,), (v,)), "jvp(f, primals, tangents): expected f(*primals) to return "
                                                      "only tensors, got unsupported type <class 'int'>")


def test_hessian_is_forward_over_reverse():
    x, v = rand(3), rand(3)
    hessian = func.hessian(mlp_loss)(x)
    np.testing.assert_allclose(hessian.numpy(), func.jacrev(func.jacrev(mlp_loss))(x).numpy(), rtol=1e-10)
    assert not hessian.requires_grad
    _, hvp = func.jvp(func.grad(mlp_loss), (x,), (v,))
    np.testing.assert_allclose(hvp.numpy(), hessian.numpy() @ v.numpy(), rtol=1e-10)
    np.testing.assert_allclose(func.jacfwd(func.jacfwd(mlp_loss))(x).numpy(), hessian.numpy(), rtol=1e-10)  # nested levels


def test_gradcheck_checks_forward_mode():
    class WrongJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_forward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            return grad

        @staticmethod
        def jvp(ctx, t):
            (a,) = ctx.saved_tensors
            return t * a  # half the derivative

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    raises(lambda: torch.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False),
           "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,\n"
           "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 4.0000]], dtype=torch.float64)\n"
           "analytical:tensor([[1., 0.],\n        [0., 2.]], dtype=torch.float64)\n")  # a GradcheckError
    assert torch.autograd.gradcheck(ScaledSin.apply, (x, 2.0), check_forward_ad=True)
    assert torch.autograd.gradcheck(lambda a: (a.sin() * a).softmax(0), (x,), check_forward_ad=True)


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # (cholesky_solve has no batching rule, as linalg)
def test_forward_rules_of_cholesky_solve_group_norm_and_diagonal_match_reverse_mode():
    a = torch.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
    low = torch.linalg.cholesky(a)
    b = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float64)
    x = torch.tensor(np.random.default_rng(2).normal(size=(2, 4, 3)))
    w = torch.tensor([1.0, 0.5, -1.0, 2.0], dtype=torch.float64)
    cases = [(lambda l_, b_: torch.cholesky_solve(b_, l_), [low, b]),
             (lambda l_, b_: torch.cholesky_solve(b_, l_.mT, upper=True), [low, b]),
             (lambda t, ww, bb: F.group_norm(t, 2, ww, bb), [x, w, w * 0.3]),
             (lambda t: t.diagonal(0, 1, 2), [x])]
    for fn, inputs in cases:
        tangents = [rand(*t.shape) for t in inputs]
        np.testing.assert_allclose(forward_jvp(fn, inputs, tangents).numpy(), reverse_jvp(fn, inputs, tangents),
                                   rtol=1e-9, atol=1e-12)
