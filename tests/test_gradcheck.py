"""gradcheck and gradgradcheck: the checker itself, then every built-in op in float64."""
import warnings

import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import Function, gradcheck, gradgradcheck
from chibigrad.autograd.gradcheck import GradcheckError

FLOAT32_WARNING = ("Input #0 requires gradient and is not a double precision floating point or complex. This check "
                   "will likely fail if all the inputs are not of double precision floating point or complex. ")


def leaf(*shape, low=None, seed=0):
    """A float64 leaf with values of both signs (or all >= ``low``), away from ties."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape)
    if low is not None:
        values = low + np.abs(values)
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


class Square(Function):
    factor = 2  # a wrong backward uses another factor

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * Square.factor * x


# ---- the checker ------------------------------------------------------------------------------

def test_passes_on_a_correct_function():
    assert gradcheck(Square.apply, (leaf(3),)) is True
    assert gradcheck(torch.sin, leaf(3)) is True  # a single tensor is accepted too


def test_wrong_backward_raises_gradcheck_error_with_both_jacobians(monkeypatch):
    monkeypatch.setattr(Square, "factor", 4)
    x = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as err:
        gradcheck(Square.apply, (x,))
    assert isinstance(err.value, RuntimeError)
    assert str(err.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[ 3.0000,  0.0000,  0.0000],\n"
        "        [ 0.0000, -1.0000,  0.0000],\n"
        "        [ 0.0000,  0.0000,  4.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[ 6.,  0.,  0.],\n"
        "        [-0., -2., -0.],\n"
        "        [ 0.,  0.,  8.]], dtype=torch.float64)\n")


def test_raise_exception_false_returns_false(monkeypatch):
    monkeypatch.setattr(Square, "factor", 3)
    assert gradcheck(Square.apply, (leaf(3),), raise_exception=False) is False


def test_mismatch_names_the_output_and_the_input():
    class WrongForB(Function):
        @staticmethod
        def forward(ctx, k, a, b):
            ctx.save_for_backward(a, b)
            return a * k, a * b

        @staticmethod
        def backward(ctx, grad_ak, grad_ab):
            a, b = ctx.saved_tensors
            return None, grad_ak * 2 + grad_ab * b, grad_ab  # d(ab)/db is a, not 1

    a, b = leaf(2, seed=1), leaf(2, seed=2)
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 1 with respect to input 1,\n"):
        gradcheck(WrongForB.apply, (2.0, a, b))


def test_input_index_counts_only_inputs_that_require_grad():
    class WrongForB(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, grad * b

    a = torch.tensor([1., 2.], dtype=torch.float64)  # no grad: not counted
    b, c = leaf(2, seed=1), leaf(2, seed=2)
    with pytest.raises(GradcheckError, match="for output 0 with respect to input 1,"):
        gradcheck(lambda a, b, c: WrongForB.apply(b, c) + a, (a, b, c))


def test_float32_inputs_warn_like_pytorch():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning) as record:
        gradcheck(torch.sin, (x,), raise_exception=False)
    assert [str(w.message) for w in record] == [FLOAT32_WARNING]
    assert record[0].filename == __file__  # points at the caller


def test_float64_inputs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(torch.sin, (leaf(3),))


def test_no_input_requires_grad_raises_value_error():
    with pytest.raises(ValueError) as err:
        gradcheck(torch.sin, (torch.ones(3, dtype=torch.float64),))
    assert str(err.value) == ("gradcheck expects at least one input tensor to require gradient, but none of them "
                              "have requires_grad=True.")


def test_function_without_differentiable_outputs_must_be_flat():
    assert gradcheck(lambda x: x.detach().round(), (leaf(3),))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda x: x.detach() * 2, (leaf(3),))


def test_eps_atol_rtol_are_used():
    x = leaf(4)
    slightly_off = lambda t: torch.exp(t) + 1e-4 * t.detach()  # noqa: E731 - numerical slope 1e-4 higher
    assert not gradcheck(slightly_off, (x,), rtol=0, raise_exception=False)
    assert gradcheck(slightly_off, (x,), atol=1e-3)
    # a large eps makes the central difference of t**3 off by eps**2 (= 1e-4 here)
    assert not gradcheck(lambda t: t ** 3, (x,), eps=1e-2, atol=1e-6, rtol=1e-6, raise_exception=False)
    assert gradcheck(lambda t: t ** 3, (x,), eps=1e-2, atol=1e-3)


def test_inputs_are_left_unchanged():
    x = leaf(2, 3)
    before = x.detach().clone()
    gradcheck(lambda t: (t * t).sum(1), (x,))
    assert torch.equal(x, before) and x._version == 0 and x.grad is None


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable():
    class CubeDetached(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x.detach() ** 2  # detaching breaks double backward

    x = leaf(3)
    assert gradcheck(CubeDetached.apply, (x,))
    with pytest.raises(GradcheckError) as err:
        gradgradcheck(CubeDetached.apply, (x,))
    assert str(err.value).startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "analytical:tensor([[0., 0., 0.],\n" in str(err.value)
    assert gradgradcheck(CubeDetached.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_with_given_grad_outputs():
    x = leaf(3)
    g = torch.tensor([1., -2., 0.5], dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.sin() * t, (x,), (g,))


def test_grad_outputs_that_require_grad_stay_in_the_double_backward_graph():
    x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    g = torch.tensor([1., -2.], dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(x.exp(), x, g, create_graph=True)
    (dg,) = torch.autograd.grad(dx.sum(), g)
    assert torch.allclose(dg, x.detach().exp())


# ---- every built-in op, float64 ---------------------------------------------------------------

def _setitem(x, v):
    y = x.clone()
    y[0, 1:] = v
    return y


def _inplace(method, *args):
    def f(x, *tensors):
        y = x * 1
        getattr(y, method)(*(tensors or args))
        return y
    return f


def _inplace_through_views(x, v):
    y = x * 1
    y[1:, :2] *= v  # CopySlices, twice (Python writes the changed view back)
    before = y[0]
    y[:, 2].add_(v.sum())  # ``before`` sees this: AsStridedBackward0
    return y * before.sum()


def _cholesky_solve(b, m):
    """Solve with the Cholesky factor of m m^T + I (positive definite for any m)."""
    return torch.cholesky_solve(b, torch.linalg.cholesky(m @ m.mT + torch.eye(3, dtype=torch.float64)))


MASK = torch.tensor([[True, False, True], [False, False, True]])
ROWS = torch.tensor([1, 0, 1, 1])
COND = torch.tensor([[True, False, True], [False, True, False]])

# name -> (function, input tensors). Positive inputs where the op needs them; values are
# random normals, so no input sits within eps of a kink (abs, relu, clamp, max...).
OPS = {
    # pointwise, with broadcasting and reversed operands
    "add": (lambda a, b: a + b, [leaf(2, 3), leaf(3, seed=1)]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=3), [leaf(2, 3), leaf(2, 1, seed=1)]),
    "sub": (lambda a, b: a - b, [leaf(2, 3), leaf(1, 3, seed=1)]),
    "rsub": (lambda a: 10 - a, [leaf(3)]),
    "mul": (lambda a, b: a * b, [leaf(2, 3), leaf(3, seed=1)]),
    "mul_scalar": (lambda a: 2.5 * a, [leaf(3)]),
    "div": (lambda a, b: a / b, [leaf(2, 3), leaf(3, low=0.5, seed=1)]),
    "rdiv": (lambda a: 3 / a, [leaf(3, low=0.5)]),
    "neg": (lambda a: -a, [leaf(3)]),
    "pow_scalar": (lambda a: a ** 3, [leaf(3)]),
    "pow_fractional": (lambda a: a ** 1.5, [leaf(3, low=0.5)]),
    "pow_tensor": (lambda a, b: a ** b, [leaf(2, 3, low=0.5), leaf(3, seed=1)]),
    "rpow": (lambda a: 2 ** a, [leaf(3)]),
    "exp": (torch.exp, [leaf(2, 3)]),
    "log": (torch.log, [leaf(2, 3, low=0.1)]),
    "log2": (torch.log2, [leaf(2, 3, low=0.1)]),
    "log10": (torch.log10, [leaf(2, 3, low=0.1)]),
    "log1p": (torch.log1p, [leaf(2, 3, low=0.1)]),
    "expm1": (torch.expm1, [leaf(2, 3)]),
    "sqrt": (torch.sqrt, [leaf(2, 3, low=0.1)]),
    "abs": (torch.abs, [leaf(2, 3)]),
    "sin": (torch.sin, [leaf(2, 3)]),
    "cos": (torch.cos, [leaf(2, 3)]),
    "tanh": (torch.tanh, [leaf(2, 3)]),
    "sigmoid": (torch.sigmoid, [leaf(2, 3)]),
    "relu": (torch.relu, [leaf(2, 3)]),
    "reciprocal": (torch.reciprocal, [leaf(3, low=0.5)]),
    "round": (torch.round, [leaf(2, 3)]),
    "floor": (torch.floor, [leaf(2, 3)]),
    "round_decimals": (lambda a: a.round(decimals=2), [leaf(2, 3)]),
    "remainder": (lambda a, b: a % b, [leaf(2, 3), leaf(3, low=0.5, seed=1)]),
    "remainder_scalar": (lambda a: a % 0.75, [leaf(2, 3)]),
    "fmod": (torch.fmod, [leaf(2, 3), leaf(3, low=0.5, seed=1)]),
    "fmod_scalar": (lambda a: torch.fmod(a, -0.75), [leaf(2, 3)]),
    "unflatten": (lambda a: a.unflatten(1, (2, 2)), [leaf(3, 4)]),
    "tril": (lambda a: a.tril(-1), [leaf(2, 3, 3)]),
    "repeat": (lambda a: a.repeat(2, 1, 3), [leaf(2, 3)]),
    "inverse": (lambda a: (a + 3 * torch.eye(3, dtype=torch.float64)).inverse(), [leaf(2, 3, 3)]),
    "det": (lambda a: (a + 3 * torch.eye(3, dtype=torch.float64)).det(), [leaf(2, 3, 3)]),
    "slogdet": (lambda a: torch.slogdet(a + 3 * torch.eye(3, dtype=torch.float64)).logabsdet, [leaf(2, 3, 3)]),
    "triu": (lambda a: torch.triu(a, 1), [leaf(3, 4)]),
    "l1_loss": (torch.nn.functional.l1_loss, [leaf(2, 3), leaf(2, 3, seed=1)]),
    "smooth_l1_loss": (lambda a, b: torch.nn.functional.smooth_l1_loss(a, b, beta=0.8), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "huber_loss": (lambda a, b: torch.nn.functional.huber_loss(a, b, reduction="sum", delta=0.7),
                   [leaf(2, 3), leaf(2, 3, seed=1)]),
    "sign": (torch.sign, [leaf(2, 3)]),
    "clamp_min": (lambda a: a.clamp(min=-0.3), [leaf(2, 3)]),
    "clamp_max": (lambda a: a.clamp(max=0.3), [leaf(2, 3)]),
    "clamp_both": (lambda a: torch.clamp(a, -0.5, 0.5), [leaf(2, 3)]),
    "clip": (lambda a: torch.clip(a, -0.5, 0.5), [leaf(2, 3)]),
    "where": (lambda a, b: torch.where(COND, a, b), [leaf(2, 3), leaf(3, seed=1)]),
    "where_scalar": (lambda a: torch.where(COND, a, 0.0), [leaf(2, 3)]),
    "hypot": (torch.ops.hypot, [leaf(2, 3), leaf(3, seed=1)]),
    "maximum": (torch.maximum, [leaf(2, 3), leaf(2, 3, seed=1)]),
    "minimum": (torch.minimum, [leaf(2, 3), leaf(3, seed=1)]),
    "clone": (torch.clone, [leaf(2, 3)]),
    "to_float64": (lambda a: (a * 1).to(torch.float64), [leaf(3)]),
    # reductions, with dim and keepdim
    "sum": (torch.sum, [leaf(2, 3)]),
    "sum_dim": (lambda a: a.sum(1), [leaf(2, 3)]),
    "sum_dims_keepdim": (lambda a: a.sum((0, 2), keepdim=True), [leaf(2, 3, 4)]),
    "mean": (torch.mean, [leaf(2, 3)]),
    "mean_dim_keepdim": (lambda a: a.mean(-1, keepdim=True), [leaf(2, 3)]),
    "max": (torch.max, [leaf(2, 3)]),
    "max_dim": (lambda a: a.max(1)[0], [leaf(2, 3)]),
    "max_dim_keepdim": (lambda a: a.max(0, keepdim=True)[0], [leaf(2, 3)]),
    "min": (torch.min, [leaf(2, 3)]),
    "min_dim": (lambda a: a.min(dim=0)[0], [leaf(2, 3)]),
    "amax": (lambda a: a.amax(1), [leaf(2, 3)]),
    "amin": (lambda a: a.amin((0, 1)), [leaf(2, 3)]),
    "prod": (torch.prod, [leaf(2, 3)]),
    "prod_dim": (lambda a: a.prod(1, keepdim=True), [leaf(2, 3)]),
    "prod_one_zero": (lambda a: a.prod(), [torch.tensor([2., 0., -3.], dtype=torch.float64, requires_grad=True)]),
    "prod_two_zeros": (lambda a: a.prod(), [torch.tensor([2., 0., 0.], dtype=torch.float64, requires_grad=True)]),
    "prod_dim_zero": (lambda a: a.prod(0), [torch.tensor([[2., 0.], [0., 0.], [-1., 4.]], dtype=torch.float64,
                                                         requires_grad=True)]),
    "norm": (torch.norm, [leaf(2, 3)]),
    "norm_dim": (lambda a: a.norm(dim=1), [leaf(2, 3)]),
    "norm_p1": (lambda a: a.norm(p=1), [leaf(2, 3)]),
    "norm_p3_keepdim": (lambda a: a.norm(p=3, dim=0, keepdim=True), [leaf(2, 3)]),
    "var": (torch.var, [leaf(2, 3)]),
    "var_dim_biased": (lambda a: a.var(1, unbiased=False), [leaf(2, 3)]),
    "std": (torch.std, [leaf(2, 3)]),
    "std_dim_keepdim": (lambda a: a.std(0, keepdim=True), [leaf(3, 2)]),
    "softmax": (lambda a: torch.softmax(a, 1), [leaf(2, 3)]),
    "softmax_dim0": (lambda a: a.softmax(0), [leaf(2, 3)]),
    "log_softmax": (lambda a: torch.log_softmax(a, -1), [leaf(2, 3)]),
    "logsumexp": (lambda a: torch.logsumexp(a, 1), [leaf(2, 3)]),
    "logsumexp_keepdim": (lambda a: a.logsumexp(0, keepdim=True), [leaf(2, 3)]),
    # products
    "matmul_2d": (torch.matmul, [leaf(2, 3), leaf(3, 4, seed=1)]),
    "matmul_batched_broadcast": (torch.matmul, [leaf(2, 2, 3), leaf(3, 4, seed=1)]),
    "matmul_batched_bmm": (torch.matmul, [leaf(2, 1, 2, 3), leaf(3, 3, 2, seed=1)]),
    "matmul_batch_of_one": (torch.matmul, [leaf(1, 2, 3), leaf(2, 3, 2, seed=1)]),
    "matmul_vector_into_batch": (torch.matmul, [leaf(3), leaf(2, 3, 2, seed=1)]),
    "matmul_batch_times_vector": (torch.matmul, [leaf(2, 2, 2, 3), leaf(3, seed=1)]),
    "matmul_1d_2d": (torch.matmul, [leaf(3), leaf(3, 2, seed=1)]),
    "matmul_2d_1d": (lambda a, b: a @ b, [leaf(2, 3), leaf(3, seed=1)]),
    "mm": (torch.mm, [leaf(2, 3), leaf(3, 4, seed=1)]),
    "bmm": (torch.bmm, [leaf(2, 2, 3), leaf(2, 3, 2, seed=1)]),
    "dot": (lambda a, b: a.dot(b), [leaf(3), leaf(3, seed=1)]),
    "mv": (lambda a, b: a @ b, [leaf(2, 3), leaf(3, seed=1)]),
    "linear": (torch.ops.linear, [leaf(4, 3), leaf(2, 3, seed=1), leaf(2, seed=2)]),
    "linear_3d": (lambda x, w: torch.ops.linear(x, w), [leaf(2, 2, 3), leaf(2, 3, seed=1)]),
    # shapes
    "reshape": (lambda a: a.reshape(3, 2), [leaf(2, 3)]),
    "view": (lambda a: a.view(-1), [leaf(2, 3)]),
    "flatten": (lambda a: a.flatten(1), [leaf(2, 3, 2)]),
    "squeeze": (lambda a: a.squeeze(), [leaf(2, 1, 3)]),
    "squeeze_dim": (lambda a: a.squeeze(1), [leaf(2, 1, 3)]),
    "unsqueeze": (lambda a: a.unsqueeze(1), [leaf(2, 3)]),
    "transpose": (lambda a: a.transpose(0, 2), [leaf(2, 3, 2)]),
    "t": (lambda a: a.t(), [leaf(2, 3)]),
    "T": (lambda a: a.T, [leaf(2, 3)]),
    "mT": (lambda a: a.mT, [leaf(2, 2, 3)]),
    "permute": (lambda a: a.permute(2, 0, 1), [leaf(2, 3, 2)]),
    "expand": (lambda a: a.expand(2, 3, 3), [leaf(3, 1)]),
    "expand_as": (lambda a, b: a.expand_as(b), [leaf(1, 3), leaf(2, 3, seed=1)]),
    "sum_to_size": (lambda a: a.sum_to_size(1, 3), [leaf(2, 3)]),
    "unbind": (lambda a: a.unbind(1), [leaf(2, 3)]),
    # indexing
    "index_int": (lambda a: a[1], [leaf(2, 3)]),
    "index_slice": (lambda a: a[:, 1:], [leaf(2, 3)]),
    "index_step": (lambda a: a[::2], [leaf(5)]),
    "index_none_ellipsis": (lambda a: a[None, ..., 0], [leaf(2, 3)]),
    "index_bool_mask": (lambda a: a[MASK], [leaf(2, 3)]),
    "index_bool_from_values": (lambda a: a[a.detach() > 0], [leaf(2, 3)]),
    "index_int_array_repeats": (lambda a: a[ROWS], [leaf(2, 3)]),
    "index_list_repeats": (lambda a: a[[0, 0, 2, 0]], [leaf(3)]),
    "index_arrays_pair": (lambda a: a[ROWS, torch.tensor([0, 2, 2, 1])], [leaf(2, 3)]),
    "index_array_and_slice": (lambda a: a[ROWS, 1:], [leaf(2, 3)]),
    "setitem": (_setitem, [leaf(2, 3), leaf(2, seed=1)]),
    "masked_fill": (lambda a: a.masked_fill(MASK, 0.5), [leaf(2, 3)]),
    # picking and placing by index, sorting
    "gather": (lambda a: a.gather(1, torch.tensor([[0, 0], [2, 1]])), [leaf(2, 3)]),
    "scatter": (lambda a, s: a.scatter(0, torch.tensor([[0, 1, 1], [1, 0, 0]]), s), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "scatter_value": (lambda a: a.scatter(1, torch.tensor([[1], [0]]), 2.5), [leaf(2, 3)]),
    "scatter_add": (lambda a, s: a.scatter_add(0, torch.tensor([[0, 1, 1], [0, 0, 1]]), s),
                    [leaf(2, 3), leaf(2, 3, seed=1)]),
    "index_select": (lambda a: a.index_select(1, torch.tensor([2, 2, 0])), [leaf(2, 3)]),
    "index_add": (lambda a, s: a.index_add(1, torch.tensor([2, 0, 2]), s, alpha=2.0), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "sort": (lambda a: a.sort(dim=1, descending=True).values, [leaf(2, 3)]),
    "topk": (lambda a: torch.topk(a, 1, dim=0).values, [leaf(2, 3)]),
    # joining and splitting
    "cat": (lambda a, b: torch.cat([a, b]), [leaf(2, 3), leaf(1, 3, seed=1)]),
    "cat_dim1": (lambda a, b: torch.cat((a, b), dim=1), [leaf(2, 3), leaf(2, 1, seed=1)]),
    "stack": (lambda a, b: torch.stack([a, b], 1), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "movedim": (lambda a: torch.movedim(a, (0, 2), (2, 0)), [leaf(2, 3, 4)]),
    "split": (lambda a: a.split(2), [leaf(5, 2)]),
    "split_sections": (lambda a: torch.split(a, [1, 2], dim=1), [leaf(2, 3)]),
    "chunk": (lambda a: a.chunk(2, dim=1), [leaf(2, 3)]),
    # in-place ops on a tensor in the graph
    "add_": (_inplace("add_"), [leaf(2, 3), leaf(3, seed=1)]),
    "sub_": (_inplace("sub_"), [leaf(2, 3), leaf(3, seed=1)]),
    "mul_": (_inplace("mul_"), [leaf(2, 3), leaf(3, seed=1)]),
    "inplace_through_views": (_inplace_through_views, [leaf(2, 3), leaf(2, seed=1)]),
    "div_": (_inplace("div_"), [leaf(2, 3), leaf(3, low=0.5, seed=1)]),
    "clamp_": (_inplace("clamp_", -0.5, 0.5), [leaf(2, 3)]),
    "copy_": (_inplace("copy_"), [leaf(2, 3), leaf(3, seed=1)]),
    "fill_": (_inplace("fill_", 2.0), [leaf(2, 3)]),
    "zero_": (_inplace("zero_"), [leaf(2, 3)]),
    "exp_": (_inplace("exp_"), [leaf(2, 3)]),
    "log_": (_inplace("log_"), [leaf(2, 3, low=0.5)]),
    "sqrt_": (_inplace("sqrt_"), [leaf(2, 3, low=0.5)]),
    "sin_": (_inplace("sin_"), [leaf(2, 3)]),
    "cos_": (_inplace("cos_"), [leaf(2, 3)]),
    "tanh_": (_inplace("tanh_"), [leaf(2, 3)]),
    "sigmoid_": (_inplace("sigmoid_"), [leaf(2, 3)]),
    "neg_": (_inplace("neg_"), [leaf(2, 3)]),
    # added with the API round: special functions, diagonal, repeat_interleave, a Cholesky solve
    "erf": (torch.erf, [leaf(2, 3)]),
    "erfinv": (lambda a: torch.erfinv(torch.tanh(a)), [leaf(2, 3)]),
    "rsqrt": (torch.rsqrt, [leaf(2, 3, low=0.5)]),
    "xlogy": (torch.xlogy, [leaf(2, 3, low=0.5), leaf(2, 3, low=0.5, seed=1)]),
    "diagonal": (lambda a: torch.diagonal(a, 1, 1, 2), [leaf(2, 3, 4)]),
    "repeat_interleave": (lambda a: a.repeat_interleave(torch.tensor([1, 0, 3]), dim=1), [leaf(2, 3)]),
    "cholesky_solve": (_cholesky_solve, [leaf(3, 2), leaf(3, 3, seed=1)]),
}


@pytest.mark.parametrize("name", OPS)
def test_gradcheck_builtin_op(name):
    func, inputs = OPS[name]
    assert gradcheck(func, inputs)


def test_every_public_differentiable_op_is_covered():
    """A new op in chibigrad.ops must get a gradcheck case here."""
    not_differentiable = {"allclose", "argmax", "argmin", "argsort", "all", "any", "equal", "isclose", "detach", "Tensor",
                          "isnan", "isinf", "isfinite", "nonzero",
                          "wrap", "operand", "linalg", "conv", "pointwise", "reduction", "selection", "shape", "pw", "red",
                          "sel", "sh", "np"}
    aliases = {"index": "index_int", "pow": "pow_scalar", "linear": "linear", "rdiv": "rdiv", "rpow": "rpow"}
    missing = [name for name in torch.ops.__all__
               if name not in not_differentiable and aliases.get(name, name) not in OPS
               and not any(key.startswith(name + "_") for key in OPS)]
    assert missing == []


GRADGRAD = ["mul", "div", "pow_scalar", "pow_tensor", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu",
            "clamp_both", "where", "maximum", "hypot", "sum_dim", "mean_dim_keepdim", "max_dim", "prod", "norm_dim",
            "var", "std", "softmax", "log_softmax", "logsumexp", "matmul_batched_broadcast", "matmul_batched_bmm",
            "matmul_batch_of_one", "mm", "dot", "linear", "reshape", "permute", "expand", "index_int_array_repeats",
            "index_bool_mask", "setitem", "cat", "stack", "split", "unbind", "mul_", "prod_one_zero",
            "prod_two_zeros", "prod_dim_zero", "inplace_through_views", "log2", "log1p", "expm1", "gather",
            "scatter", "scatter_value", "scatter_add", "index_select", "index_add", "sort", "topk", "remainder", "fmod",
            "unflatten", "smooth_l1_loss", "huber_loss", "tril", "inverse", "det", "slogdet"]


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck_builtin_op(name):
    func, inputs = OPS[name]
    assert gradgradcheck(func, inputs)

