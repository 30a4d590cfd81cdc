"""Every differentiable op: values against numpy, gradients against central
differences (float64) and exact hand-derived values, grad_fn names as PyTorch
prints them, and broadcasting gradients summed back to each input's shape and dtype.
"""
import re

import numpy as np
import pytest

import chibigrad as torch


def arr(t):
    return t.detach()._array


def numeric_grads(fn, arrays, eps=1e-6):
    """d sum(weights * fn(arrays)) / d arrays by central differences."""
    out = np.asarray(fn(*arrays), dtype=np.float64)
    weights = np.random.default_rng(7).uniform(0.5, 1.5, out.shape)
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            old = a[i]
            a[i] = old + eps
            hi = (weights * fn(*arrays)).sum()
            a[i] = old - eps
            lo = (weights * fn(*arrays)).sum()
            a[i] = old
            g[i] = (hi - lo) / (2 * eps)
        grads.append(g)
    return weights, grads


def rand(shape, low=-2.0, high=2.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def positive(shape, seed=0):
    return rand(shape, 0.5, 2.0, seed)


def away_from_zero(shape, seed=0):
    """Values whose magnitude is in [0.3, 2]: no kinks of abs/relu/sign nearby."""
    x = rand(shape, 0.3, 2.0, seed)
    return np.where(np.random.default_rng(seed + 100).random(shape) < 0.5, -x, x)


def distinct(shape, seed=0):
    """Values far apart, so max/min/sort ties and near-ties do not occur."""
    n = int(np.prod(shape))
    return np.random.default_rng(seed).permutation(np.arange(n) * 0.37 - n * 0.15).reshape(shape)


# name: (torch function, numpy function, input arrays)
OPS = {
    "add": (lambda a, b: a + b, lambda a, b: a + b, [rand((2, 3)), rand((2, 3), seed=1)]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=2), lambda a, b: a + 2 * b, [rand((2, 3)), rand((3,), seed=1)]),
    "sub": (lambda a, b: a - b, lambda a, b: a - b, [rand((2, 3)), rand((3,), seed=1)]),
    "mul": (lambda a, b: a * b, lambda a, b: a * b, [rand((2, 3)), rand((2, 1), seed=1)]),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [rand((2, 3)), away_from_zero((3,), seed=1)]),
    "pow_scalar": (lambda a: a ** 3, lambda a: a ** 3, [rand((2, 3))]),
    "pow_half": (lambda a: a ** 0.5, lambda a: a ** 0.5, [positive((2, 3))]),
    "pow_negative": (lambda a: a.pow(-2), lambda a: a ** -2.0, [away_from_zero((4,))]),
    "pow_tensor": (lambda a, b: a ** b, lambda a, b: a ** b, [positive((2, 3)), rand((2, 3), seed=1)]),
    "torch.pow": (lambda a, b: torch.pow(a, b), lambda a, b: a ** b, [positive((3,)), rand((2, 3), seed=1)]),
    "rpow": (lambda a: 2 ** a, lambda a: 2.0 ** a, [rand((2, 3))]),
    "neg": (lambda a: -a, lambda a: -a, [rand((2, 3))]),
    "rsub": (lambda a: 10 - a, lambda a: 10 - a, [rand((2, 3))]),
    "rmul": (lambda a: 2 * a, lambda a: 2 * a, [rand((2, 3))]),
    "rdiv": (lambda a: 1 / a, lambda a: 1 / a, [away_from_zero((2, 3))]),
    "radd": (lambda a: 3.5 + a, lambda a: 3.5 + a, [rand((2, 3))]),
    "exp": (torch.exp, np.exp, [rand((2, 3))]),
    "log": (torch.log, np.log, [positive((2, 3))]),
    "sqrt": (torch.sqrt, np.sqrt, [positive((2, 3))]),
    "abs": (torch.abs, np.abs, [away_from_zero((2, 3))]),
    "sin": (torch.sin, np.sin, [rand((2, 3))]),
    "cos": (torch.cos, np.cos, [rand((2, 3))]),
    "tanh": (torch.tanh, np.tanh, [rand((2, 3))]),
    "sigmoid": (torch.sigmoid, lambda a: 1 / (1 + np.exp(-a)), [rand((2, 3))]),
    "relu": (torch.relu, lambda a: np.maximum(a, 0), [away_from_zero((2, 3))]),
    "reciprocal": (lambda a: a.reciprocal(), lambda a: 1 / a, [away_from_zero((2, 3))]),
    "clamp": (lambda a: a.clamp(-0.5, 0.7), lambda a: np.clip(a, -0.5, 0.7), [away_from_zero((3, 4))]),
    "clamp_min": (lambda a: torch.clamp(a, min=0.4), lambda a: np.maximum(a, 0.4), [away_from_zero((3, 4))]),
    "clamp_max": (lambda a: a.clamp(max=-0.4), lambda a: np.minimum(a, -0.4), [away_from_zero((3, 4))]),
    "where": (lambda a, b: torch.where(a > 0, a * a, b), lambda a, b: np.where(a > 0, a * a, b),
              [away_from_zero((2, 3)), rand((3,), seed=1)]),
    "where_scalar": (lambda a: torch.where(a > 0, a, 0.), lambda a: np.where(a > 0, a, 0.), [away_from_zero((2, 3))]),
    "maximum": (torch.maximum, np.maximum, [distinct((2, 3)), distinct((2, 3), seed=1) + 0.1]),
    "minimum": (torch.minimum, np.minimum, [distinct((2, 3)), distinct((3,), seed=1) + 0.1]),
    "sum": (lambda a: a.sum(), lambda a: a.sum(), [rand((2, 3))]),
    "sum_dim": (lambda a: a.sum(1), lambda a: a.sum(1), [rand((2, 3, 2))]),
    "sum_dims_keepdim": (lambda a: a.sum((0, 2), keepdim=True), lambda a: a.sum((0, 2), keepdims=True),
                         [rand((2, 3, 2))]),
    "mean": (lambda a: a.mean(), lambda a: a.mean(), [rand((2, 3))]),
    "mean_dim": (lambda a: a.mean(-1, keepdim=True), lambda a: a.mean(-1, keepdims=True), [rand((2, 3))]),
    "max": (lambda a: a.max(), lambda a: a.max(), [distinct((3, 4))]),
    "max_dim": (lambda a: a.max(1).values, lambda a: a.max(1), [distinct((3, 4))]),
    "max_dim_keepdim": (lambda a: a.max(0, keepdim=True)[0], lambda a: a.max(0, keepdims=True), [distinct((3, 4))]),
    "min": (lambda a: torch.min(a), lambda a: a.min(), [distinct((3, 4))]),
    "min_dim": (lambda a: a.min(dim=0).values, lambda a: a.min(0), [distinct((3, 4))]),
    "amax": (lambda a: a.amax(1), lambda a: a.max(1), [distinct((3, 4))]),
    "amin": (lambda a: a.amin(0), lambda a: a.min(0), [distinct((3, 4))]),
    "prod": (lambda a: a.prod(), lambda a: a.prod(), [away_from_zero((2, 3))]),
    "prod_dim": (lambda a: a.prod(1, keepdim=True), lambda a: a.prod(1, keepdims=True), [away_from_zero((2, 3))]),
    "norm": (lambda a: a.norm(), lambda a: np.sqrt((a * a).sum()), [rand((2, 3))]),
    "norm_dim": (lambda a: a.norm(dim=1), lambda a: np.sqrt((a * a).sum(1)), [rand((2, 3))]),
    "var": (lambda a: a.var(), lambda a: a.var(ddof=1), [rand((2, 3))]),
    "var_dim": (lambda a: a.var(1, keepdim=True), lambda a: a.var(1, ddof=1, keepdims=True), [rand((2, 3))]),
    "std": (lambda a: a.std(), lambda a: a.std(ddof=1), [rand((2, 3))]),
    "std_dim": (lambda a: a.std(0), lambda a: a.std(0, ddof=1), [rand((4, 3))]),
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [rand((2, 3)), rand((3, 4), seed=1)]),
    "mm": (torch.mm, lambda a, b: a @ b, [rand((2, 3)), rand((3, 4), seed=1)]),
    "bmm": (torch.bmm, lambda a, b: a @ b, [rand((2, 2, 3)), rand((2, 3, 4), seed=1)]),
    "matmul_batched": (torch.matmul, np.matmul, [rand((2, 2, 3)), rand((3, 4), seed=1)]),
    "dot": (lambda a, b: a @ b, lambda a, b: a @ b, [rand((3,)), rand((3,), seed=1)]),
    "mv": (lambda a, b: a @ b, lambda a, b: a @ b, [rand((2, 3)), rand((3,), seed=1)]),
    "vm": (lambda a, b: a @ b, lambda a, b: a @ b, [rand((3,)), rand((3, 2), seed=1)]),
    "reshape": (lambda a: a.reshape(3, 2) * a.reshape(3, 2), lambda a: a.reshape(3, 2) ** 2, [rand((2, 3))]),
    "view": (lambda a: a.view(-1) ** 2, lambda a: a.reshape(-1) ** 2, [rand((2, 3))]),
    "flatten": (lambda a: a.flatten(1) ** 2, lambda a: a.reshape(2, -1) ** 2, [rand((2, 3, 2))]),
    "squeeze": (lambda a: a.squeeze() ** 2, lambda a: a.squeeze() ** 2, [rand((2, 1, 3))]),
    "squeeze_dim": (lambda a: a.squeeze(1) ** 2, lambda a: a.squeeze(1) ** 2, [rand((2, 1, 3))]),
    "unsqueeze": (lambda a: a.unsqueeze(0) ** 2, lambda a: a[None] ** 2, [rand((2, 3))]),
    "transpose": (lambda a: a.transpose(0, 1) * torch.arange(2.), lambda a: a.T * np.arange(2.), [rand((2, 3))]),
    "permute": (lambda a: a.permute(2, 0, 1) * torch.arange(4.), lambda a: a.transpose(2, 0, 1) * np.arange(4.),
                [rand((2, 4, 3))]),
    "movedim": (lambda a: torch.movedim(a, 0, -1) * torch.arange(2.), lambda a: np.moveaxis(a, 0, -1) * np.arange(2.),
                [rand((2, 3, 2))]),
    "T": (lambda a: a.T * torch.arange(2.), lambda a: a.T * np.arange(2.), [rand((2, 3))]),
    "t": (lambda a: a.t() * torch.arange(2.), lambda a: a.T * np.arange(2.), [rand((2, 3))]),
    "expand": (lambda a: a.expand(4, 3) * torch.arange(12.).reshape(4, 3),
               lambda a: np.broadcast_to(a, (4, 3)) * np.arange(12.).reshape(4, 3), [rand((1, 3))]),
    "index_int": (lambda a: a[1] ** 2, lambda a: a[1] ** 2, [rand((3, 4))]),
    "index_slice": (lambda a: a[:, 1:] ** 2, lambda a: a[:, 1:] ** 2, [rand((3, 4))]),
    "index_step": (lambda a: a[::2, -1] ** 2, lambda a: a[::2, -1] ** 2, [rand((3, 4))]),
    "index_bool": (lambda a: a[a > 0] ** 2, lambda a: a[a > 0] ** 2, [away_from_zero((3, 4))]),
    "index_int_array": (lambda a: a[[0, 2, 0]] ** 2, lambda a: a[[0, 2, 0]] ** 2, [rand((3, 4))]),
    "index_tensor": (lambda a: a[torch.tensor([2, 2, 1])] ** 2, lambda a: a[[2, 2, 1]] ** 2, [rand((3, 4))]),
    "index_pairs": (lambda a: a[[0, 1], [3, 3]] ** 2, lambda a: a[[0, 1], [3, 3]] ** 2, [rand((3, 4))]),
    "index_ellipsis_none": (lambda a: a[..., None, 0] ** 2, lambda a: a[..., None, 0] ** 2, [rand((3, 4))]),
    "cat": (lambda a, b: torch.cat([a, b, a]) ** 2, lambda a, b: np.concatenate([a, b, a]) ** 2,
            [rand((2, 3)), rand((1, 3), seed=1)]),
    "cat_dim1": (lambda a, b: torch.cat([a, b], dim=1) ** 2, lambda a, b: np.concatenate([a, b], 1) ** 2,
                 [rand((2, 3)), rand((2, 1), seed=1)]),
    "stack": (lambda a, b: torch.stack([a, b]) * torch.arange(2.).reshape(2, 1),
              lambda a, b: np.stack([a, b]) * np.arange(2.).reshape(2, 1), [rand((3,)), rand((3,), seed=1)]),
    "stack_dim1": (lambda a, b: torch.stack([a, b], dim=1) ** 2, lambda a, b: np.stack([a, b], 1) ** 2,
                   [rand((2, 3)), rand((2, 3), seed=1)]),
    "split": (lambda a: a.split(2)[1] ** 2, lambda a: a[2:4] ** 2, [rand((5, 2))]),
    "split_sizes": (lambda a: torch.split(a, [1, 2], dim=1)[1] ** 2, lambda a: a[:, 1:] ** 2, [rand((2, 3))]),
    "chunk": (lambda a: a.chunk(2)[1] ** 2, lambda a: a[3:] ** 2, [rand((5, 2))]),
    "softmax": (lambda a: a.softmax(1), lambda a: np.exp(a) / np.exp(a).sum(1, keepdims=True), [rand((2, 3))]),
    "softmax_dim0": (lambda a: torch.softmax(a, dim=0), lambda a: np.exp(a) / np.exp(a).sum(0), [rand((2, 3))]),
    "log_softmax": (lambda a: a.log_softmax(-1), lambda a: a - np.log(np.exp(a).sum(-1, keepdims=True)),
                    [rand((2, 3))]),
    "logsumexp": (lambda a: a.logsumexp(1), lambda a: np.log(np.exp(a).sum(1)), [rand((2, 3))]),
    "logsumexp_keepdim": (lambda a: torch.logsumexp(a, 0, keepdim=True),
                          lambda a: np.log(np.exp(a).sum(0, keepdims=True)), [rand((2, 3))]),
    "clone": (lambda a: a.clone() ** 2, lambda a: a ** 2, [rand((2, 3))]),
    "to_float32": (lambda a: a.float() * 2, lambda a: a * 2, [rand((2, 3))]),
}


@pytest.mark.parametrize("name", OPS)
def test_values_and_gradients(name):
    fn, ref, inputs = OPS[name]
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs]
    out = fn(*tensors)
    expected = ref(*[a.copy() for a in inputs])
    tol = 1e-5 if out.dtype is torch.float32 else 1e-10
    np.testing.assert_allclose(arr(out), expected, rtol=tol, atol=tol)
    weights, numeric = numeric_grads(ref, [a.copy() for a in inputs])
    (out * torch.tensor(weights)).sum().backward()
    for t, g in zip(tensors, numeric):
        assert t.grad.shape == t.shape and t.grad.dtype is torch.float64
        np.testing.assert_allclose(arr(t.grad), g, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op, x, value, grad", [
    (lambda x: (x ** 2).sum(), [1., 2., 3.], 14., [2., 4., 6.]),
    (lambda x: (x * 3 + 1).sum(), [1., 2.], 11., [3., 3.]),
    (lambda x: (10 - x).sum(), [1., 2.], 17., [-1., -1.]),
    (lambda x: (1 / x).sum(), [1., 2.], 1.5, [-1., -0.25]),
    (lambda x: (2 ** x).sum(), [1., 2.], 6., [2 * np.log(2), 4 * np.log(2)]),
    (lambda x: x.abs().sum(), [-1., 0., 2.], 3., [-1., 0., 1.]),
    (lambda x: x.relu().sum(), [-1., 0., 2.], 2., [0., 0., 1.]),
    (lambda x: torch.maximum(x, torch.zeros(3)).sum(), [-1., 0., 2.], 2., [0., 0.5, 1.]),
    (lambda x: torch.minimum(x, torch.zeros(3)).sum(), [-1., 0., 2.], -1., [1., 0.5, 0.]),
    (lambda x: x.clamp(0., 1.).sum(), [-1., 0., 0.5, 1., 2.], 2.5, [0., 1., 1., 1., 0.]),
    (lambda x: x.max(), [1., 3., 3.], 3., [0., 0.5, 0.5]),
    (lambda x: x.amax(0), [1., 3., 3.], 3., [0., 0.5, 0.5]),
    (lambda x: x.min(), [2., 1., 1.], 1., [0., 0.5, 0.5]),
    (lambda x: x.max(0).values, [1., 3., 3.], 3., [0., 1., 0.]),
    (lambda x: x.prod(), [2., 0., 3.], 0., [0., 6., 0.]),
    (lambda x: x.sqrt().sum(), [4., 0.25], 2.5, [0.25, 1.]),
    (lambda x: x.mean(), [1., 2., 3., 6.], 3., [0.25, 0.25, 0.25, 0.25]),
    (lambda x: x.var(), [1., 2., 3., 6.], 14 / 3, [-2 / 3 * 2, -1 / 3 * 2, 0., 1.0 * 2]),
])
def test_exact_values_and_gradients(op, x, value, grad):
    """Hand-derived results, including PyTorch's choices at kinks and ties."""
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    out = op(t)
    assert out.item() == pytest.approx(value)
    out.backward()
    np.testing.assert_allclose(arr(t.grad), grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", [lambda x: x.round(), lambda x: x.floor(), lambda x: x.sign(),
                                lambda x: torch.round(x), lambda x: torch.floor(x), lambda x: torch.sign(x)])
def test_piecewise_constant_ops_have_zero_gradient(op):
    x = torch.tensor([-1.7, -0.2, 0.5, 2.4], requires_grad=True)
    y = op(x)
    assert y.requires_grad
    (y * torch.tensor([1., 2., 3., 4.])).sum().backward()
    assert x.grad.tolist() == [0., 0., 0., 0.]


def test_round_floor_sign_values():
    x = torch.tensor([-1.5, -0.2, 0.5, 2.5, 2.7])
    assert x.round().tolist() == [-2., -0., 0., 2., 3.]  # round half to even, as PyTorch
    assert x.floor().tolist() == [-2., -1., 0., 2., 2.]
    assert x.sign().tolist() == [-1., -1., 1., 1., 1.]


# ---- grad_fn names ----------------------------------------------------------------
_a = torch.tensor([[0.5, -1.0, 2.0, 1.5], [-0.3, 0.8, -2.2, 0.1], [1.2, -0.7, 0.4, -1.9]], requires_grad=True)
_b = torch.tensor([[1.0, 2.0, -0.5, 0.3], [0.7, -1.1, 0.9, 2.0], [-0.4, 0.6, 1.3, -0.8]], requires_grad=True)
_p = torch.tensor([[0.5, 1.0, 2.0, 1.5], [0.3, 0.8, 2.2, 0.1], [1.2, 0.7, 0.4, 1.9]], requires_grad=True)
_v = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
_m = torch.ones(4, 5, requires_grad=True)
_B1, _B2 = torch.ones(2, 3, 4, requires_grad=True), torch.ones(2, 4, 5, requires_grad=True)
_mask = _a.detach() > 0

NAMES = [
    ("a+b", lambda: _a + _b, "AddBackward0"), ("a-b", lambda: _a - _b, "SubBackward0"),
    ("a*b", lambda: _a * _b, "MulBackward0"), ("a/b", lambda: _a / _b, "DivBackward0"),
    ("a+1", lambda: _a + 1, "AddBackward0"), ("1+a", lambda: 1 + _a, "AddBackward0"),
    ("2*a", lambda: 2 * _a, "MulBackward0"), ("a/2", lambda: _a / 2, "DivBackward0"),
    ("10-a", lambda: 10 - _a, "RsubBackward1"), ("a-10", lambda: _a - 10, "SubBackward0"),
    ("1/a", lambda: 1 / _a, "MulBackward0"), ("2**a", lambda: 2 ** _a, "PowBackward2"),
    ("a**2", lambda: _a ** 2, "PowBackward0"), ("p**b", lambda: _p ** _b, "PowBackward1"),
    ("p**0.5", lambda: _p ** 0.5, "PowBackward0"), ("-a", lambda: -_a, "NegBackward0"),
    ("exp", lambda: _a.exp(), "ExpBackward0"), ("log", lambda: _p.log(), "LogBackward0"),
    ("sqrt", lambda: _p.sqrt(), "SqrtBackward0"), ("abs", lambda: _a.abs(), "AbsBackward0"),
    ("sin", lambda: _a.sin(), "SinBackward0"), ("cos", lambda: _a.cos(), "CosBackward0"),
    ("tanh", lambda: _a.tanh(), "TanhBackward0"), ("sigmoid", lambda: torch.sigmoid(_a), "SigmoidBackward0"),
    ("relu", lambda: _a.relu(), "ReluBackward0"), ("torch.relu", lambda: torch.relu(_a), "ReluBackward0"),
    ("reciprocal", lambda: _a.reciprocal(), "ReciprocalBackward0"),
    ("clamp", lambda: _a.clamp(-1, 1), "ClampBackward1"), ("clamp_min", lambda: _a.clamp(min=0), "ClampBackward1"),
    ("where", lambda: torch.where(_mask, _a, _b), "WhereBackward0"),
    ("where_scalar", lambda: torch.where(_mask, _a, 0.), "WhereBackward0"),
    ("maximum", lambda: torch.maximum(_a, _b), "MaximumBackward0"),
    ("minimum", lambda: torch.minimum(_a, _b), "MinimumBackward0"),
    ("sum", lambda: _a.sum(), "SumBackward0"), ("sum_dim", lambda: _a.sum(dim=0), "SumBackward1"),
    ("sum_keepdim", lambda: _a.sum(1, keepdim=True), "SumBackward1"),
    ("mean", lambda: _a.mean(), "MeanBackward0"), ("mean_dim", lambda: _a.mean(dim=1), "MeanBackward1"),
    ("max", lambda: _a.max(), "MaxBackward1"), ("max_dim", lambda: _a.max(dim=1).values, "MaxBackward0"),
    ("min", lambda: _a.min(), "MinBackward1"), ("min_dim", lambda: _a.min(0)[0], "MinBackward0"),
    ("amax", lambda: _a.amax(), "AmaxBackward0"), ("amax_dim", lambda: _a.amax(dim=1), "AmaxBackward0"),
    ("amin", lambda: _a.amin(1), "AminBackward0"), ("prod", lambda: _a.prod(), "ProdBackward0"),
    ("prod_dim", lambda: _a.prod(1), "ProdBackward1"), ("norm", lambda: _a.norm(), "LinalgVectorNormBackward0"),
    ("norm_dim", lambda: _a.norm(dim=1), "LinalgVectorNormBackward0"),
    ("var", lambda: _a.var(), "VarBackward0"), ("var_dim", lambda: _a.var(dim=1), "VarBackward0"),
    ("std", lambda: _a.std(), "StdBackward0"), ("std_dim", lambda: _a.std(1), "StdBackward0"),
    ("mm", lambda: _a @ _m, "MmBackward0"), ("torch.mm", lambda: torch.mm(_a, _m), "MmBackward0"),
    ("bmm", lambda: torch.bmm(_B1, _B2), "BmmBackward0"), ("3d@3d", lambda: _B1 @ _B2, "UnsafeViewBackward0"),
    ("dot", lambda: _v @ _v, "DotBackward0"), ("mv", lambda: _a @ _v, "MvBackward0"),
    ("vm", lambda: _v @ _m, "SqueezeBackward4"), ("3d@2d", lambda: _B1 @ _m, "UnsafeViewBackward0"),
    ("reshape", lambda: _a.reshape(4, 3), "ViewBackward0"), ("view", lambda: _a.view(-1), "ViewBackward0"),
    ("reshape_copy", lambda: _a.t().reshape(12), "UnsafeViewBackward0"),
    ("flatten", lambda: _a.flatten(), "ViewBackward0"), ("squeeze", lambda: (_a * 1)[None].squeeze(), "SqueezeBackward0"),
    ("squeeze_dim", lambda: _a.squeeze(0), "SqueezeBackward1"), ("unsqueeze", lambda: _a.unsqueeze(0), "UnsqueezeBackward0"),
    ("transpose", lambda: _a.transpose(0, 1), "TransposeBackward0"),
    ("permute", lambda: _B1.permute(2, 0, 1), "PermuteBackward0"), ("expand", lambda: _v.expand(3, 4), "ExpandBackward0"),
    ("T", lambda: _a.T, "PermuteBackward0"), ("t", lambda: _a.t(), "TBackward0"),
    ("select", lambda: _a[0], "SelectBackward0"), ("select2", lambda: _a[0, 1], "SelectBackward0"),
    ("slice", lambda: _a[:, 1:], "SliceBackward0"), ("select_col", lambda: _a[:, 0], "SelectBackward0"),
    ("none", lambda: _a[..., None], "UnsqueezeBackward0"), ("bool_index", lambda: _a[_mask], "IndexBackward0"),
    ("list_index", lambda: _a[[0, 2]], "IndexBackward0"), ("tensor_index", lambda: _a[torch.tensor([0, 2])], "IndexBackward0"),
    ("pair_index", lambda: _a[[0, 1], [1, 2]], "IndexBackward0"),
    ("cat", lambda: torch.cat([_a, _b]), "CatBackward0"), ("stack", lambda: torch.stack([_a, _b]), "StackBackward0"),
    ("split", lambda: _a.split(2)[1], "SplitBackward0"), ("split_sizes", lambda: _a.split([1, 2])[0], "SplitWithSizesBackward0"),
    ("chunk", lambda: _a.chunk(2, dim=1)[1], "SplitBackward0"),
    ("softmax", lambda: _a.softmax(dim=1), "SoftmaxBackward0"), ("log_softmax", lambda: _a.log_softmax(1), "LogSoftmaxBackward0"),
    ("logsumexp", lambda: _a.logsumexp(1), "LogsumexpBackward0"),
    ("round", lambda: _a.round(), "RoundBackward0"), ("floor", lambda: _a.floor(), "FloorBackward0"),
    ("sign", lambda: _a.sign(), "SignBackward0"), ("clone", lambda: _a.clone(), "CloneBackward0"),
    ("t_contiguous", lambda: _a.t().contiguous(), "CloneBackward0"), ("double", lambda: _a.double(), "ToCopyBackward0"),
    ("to", lambda: _a.to(torch.float64), "ToCopyBackward0"),
]


@pytest.mark.parametrize("make, name", [(m, n) for _, m, n in NAMES], ids=[i for i, _, _ in NAMES])
def test_grad_fn_names(make, name):
    out = make()
    assert type(out.grad_fn).__name__ == name and out.grad_fn.name() == name
    assert out.requires_grad and not out.is_leaf
    assert f"grad_fn=<{name}>" in repr(out)


@pytest.mark.parametrize("make, requires_grad", [
    (lambda: _a.contiguous(), True), (lambda: _a.float(), True), (lambda: _a.detach(), False),
    (lambda: _a.detach() * 2, False), (lambda: _a.argmax(), False), (lambda: _a > 0, False),
])
def test_ops_that_record_nothing(make, requires_grad):
    out = make()
    assert out.grad_fn is None and out.requires_grad is requires_grad


def test_split_outputs_share_one_node():
    parts = (_a * 2).split(1)
    assert parts[0].grad_fn is parts[1].grad_fn is parts[2].grad_fn
    assert [p.output_nr for p in parts] == [0, 1, 2]


# ---- broadcasting: gradients summed back to shape and dtype -----------------------------------
def test_broadcast_gradients_sum_back_to_each_shape():
    a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    row = torch.tensor([10., 20., 30.], requires_grad=True)
    col = torch.tensor([[1.], [2.]], requires_grad=True)
    s = torch.tensor(2., requires_grad=True)
    one = torch.tensor([[3.]], requires_grad=True)
    (a * row + col * s - one / col).sum().backward()
    assert a.grad.tolist() == [[10., 20., 30.], [10., 20., 30.]]
    assert row.grad.tolist() == [5., 7., 9.] and row.grad.shape == (3,)
    assert col.grad.tolist() == [[15.], [8.25]] and col.grad.shape == (2, 1)
    assert s.grad.tolist() == 9. and s.grad.shape == ()
    assert one.grad.tolist() == [[-4.5]] and one.grad.shape == (1, 1)


def test_broadcast_gradients_over_leading_and_middle_dims():
    b3 = torch.ones(2, 1, 3, requires_grad=True)
    c3 = torch.ones(4, 1, requires_grad=True)
    (b3 + c3).sum().backward()
    assert b3.grad.shape == (2, 1, 3) and (arr(b3.grad) == 4.).all()
    assert c3.grad.shape == (4, 1) and (arr(c3.grad) == 6.).all()


def test_gradients_come_back_in_each_inputs_dtype():
    u = torch.tensor([1., 2., 3.], requires_grad=True)
    w = torch.tensor([[1.], [2.]], dtype=torch.float64, requires_grad=True)
    z = u * w
    assert z.dtype is torch.float64
    z.sum().backward()
    assert u.grad.dtype is torch.float32 and u.grad.tolist() == [3., 3., 3.]
    assert w.grad.dtype is torch.float64 and w.grad.tolist() == [[6.], [6.]]
    x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    (x.float() * 3).sum().backward()
    assert x.grad.dtype is torch.float64 and x.grad.tolist() == [3., 3.]


def test_reversed_operands():
    d = torch.tensor([1., 2., 4.], requires_grad=True)
    for expr, value, grad in [(lambda: 10 - d, [9., 8., 6.], [-1.] * 3), (lambda: 2 * d, [2., 4., 8.], [2.] * 3),
                              (lambda: 3 + d, [4., 5., 7.], [1.] * 3), (lambda: 4 / d, [4., 2., 1.], [-4., -1., -0.25]),
                              (lambda: 2 ** d, [2., 4., 16.], [2 * np.log(2), 4 * np.log(2), 16 * np.log(2)])]:
        d.grad = None
        out = expr()
        np.testing.assert_allclose(arr(out), value, rtol=1e-6)
        out.sum().backward()
        np.testing.assert_allclose(arr(d.grad), grad, rtol=1e-6)
    assert (np.float64(2.) * torch.tensor([1., 2.])).dtype is torch.float32


def test_indexing_backward_accumulates_repeated_indices():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad.tolist() == [3., 0., 1.]


def test_setitem_records_copyslices_and_blocks_gradient_to_overwritten_part():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    y[1] = 10.
    assert type(y.grad_fn).__name__ == "CopySlices" and y.tolist() == [2., 10., 6.]
    y.sum().backward()
    assert x.grad.tolist() == [2., 0., 2.]
    x.grad = None
    y = x * 2
    y[0:2] = x[1:] * x[1:]
    assert y.tolist() == [4., 9., 6.]
    y.sum().backward()
    assert x.grad.tolist() == [0., 4., 8.]


def test_setitem_on_plain_tensor_with_value_requiring_grad():
    a = torch.tensor([1., 2.], requires_grad=True)
    y = torch.zeros(3)
    y[0] = a[0]
    y[2] = a[1] * 3
    assert y.requires_grad and not y.is_leaf and y.tolist() == [1., 0., 6.]
    y.sum().backward()
    assert a.grad.tolist() == [1., 3.]


def test_max_and_min_with_dim_return_values_and_indices():
    a = torch.tensor([[1., 5., 3.], [4., 2., 6.]], requires_grad=True)
    r = a.max(dim=1)
    values, indices = r
    assert r.values is values and r.indices is indices and r[0] is values
    assert values.tolist() == [5., 6.] and indices.tolist() == [1, 2] and indices.dtype is torch.int64
    assert not indices.requires_grad
    r = torch.min(a, 0, keepdim=True)
    assert r.values.tolist() == [[1., 2., 3.]] and r.indices.tolist() == [[0, 1, 0]]
    assert repr(torch.tensor([1., 3.]).max(0)) == "torch.return_types.max(\nvalues=tensor(3.),\nindices=tensor(1))"


def test_softmax_is_stable_for_large_inputs():
    big = torch.tensor([1000., 1001., 1002.])
    np.testing.assert_allclose(arr(big.softmax(0)), [0.09003057, 0.24472847, 0.66524096], rtol=1e-6)
    np.testing.assert_allclose(arr(big.log_softmax(0)), [-2.40760596, -1.40760596, -0.40760596], rtol=1e-6)
    assert big.logsumexp(0).item() == pytest.approx(1002.40760596)


def test_integer_sum_and_bool_sum():
    assert torch.tensor([[1, 2], [3, 4]]).sum(0).tolist() == [4, 6]
    assert torch.tensor([True, True, False]).sum().item() == 2


def test_split_and_chunk_pieces():
    x = torch.arange(10.)
    assert [p.tolist() for p in x.split(4)] == [[0., 1., 2., 3.], [4., 5., 6., 7.], [8., 9.]]
    assert [p.shape for p in x.split([3, 7])] == [(3,), (7,)]
    assert [p.shape for p in x.reshape(2, 5).chunk(3, dim=1)] == [(2, 2), (2, 2), (2, 1)]
    assert [p.tolist() for p in torch.chunk(x, 2)] == [[0., 1., 2., 3., 4.], [5., 6., 7., 8., 9.]]


def test_view_of_non_contiguous_raises_pytorch_error():
    with pytest.raises(RuntimeError) as err:
        torch.arange(6.).reshape(2, 3).t().view(6)
    assert str(err.value) == ("view size is not compatible with input tensor's size and stride (at least one "
                              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    assert torch.arange(6.).reshape(2, 3).t().reshape(6).tolist() == [0., 3., 1., 4., 2., 5.]


def test_broadcast_error_text():
    with pytest.raises(RuntimeError) as err:
        torch.ones(2, 3) + torch.ones(3, 2)
    assert str(err.value) == "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"


def test_matmul_shape_error_text():
    with pytest.raises(RuntimeError) as err:
        torch.ones(2, 3) @ torch.ones(2, 3)
    assert str(err.value) == "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"


def test_out_of_domain_values_give_nan_and_inf_silently(recwarn):
    x = torch.tensor([-1., 0., 4.], requires_grad=True)
    y = x.log() + x.sqrt() + 1 / x + x ** 0.5
    y.sum().backward()
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("name", ["var", "std"])
def test_no_degrees_of_freedom_warns_as_pytorch_and_gives_nan(name):
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning) as caught:
        out = getattr(x, name)()
    assert [str(w.message) for w in caught] == [
        f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor (input "
        "numel divided by output numel). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)"]
    assert caught[0].filename == __file__  # attributed to the caller's line, not to chibigrad
    assert np.isnan(out.item())


def test_relu_backward_of_any_order_is_recorded_as_threshold_backward():
    """As PyTorch 2.13 prints: the backward of ReLU's backward is that backward again."""
    x = torch.tensor([-1., 2., -3., 4.], requires_grad=True)
    gg = torch.tensor([1., 1., 1., 2.], requires_grad=True)
    (gx,) = torch.autograd.grad(torch.relu(x), x, gg, create_graph=True)
    (h,) = torch.autograd.grad(gx, gg, torch.tensor([5., 3., 6., 1.]), create_graph=True)
    assert gx.tolist() == [0., 1., 0., 2.] and h.tolist() == [0., 3., 0., 1.]
    assert [gx.grad_fn.name(), h.grad_fn.name()] == ["ThresholdBackwardBackward0", "ThresholdBackwardBackward0"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_relu_backward_is_zero_where_masked_even_for_inf_and_nan_gradients(dtype):
    x = torch.tensor([-1., 2., -3., 4., 0.], dtype=dtype, requires_grad=True)
    torch.relu(x).backward(torch.tensor([float("inf"), 1., float("nan"), -float("inf"), float("nan")], dtype=dtype))
    assert x.grad.tolist() == [0., 1., 0., -float("inf"), 0.] and x.grad.dtype == dtype  # as PyTorch 2.13
    assert not np.signbit(x.grad.numpy()[[0, 2, 4]]).any()  # +0, as PyTorch's select gives


def test_relu_backward_of_scalars_and_broadcast_gradients():
    s = torch.tensor(-2., requires_grad=True)
    torch.relu(s).backward(torch.tensor(float("nan")))
    assert s.grad.item() == 0. and s.grad.shape == ()
    m = torch.tensor([[1., -1.], [-2., 3.]], requires_grad=True)
    torch.relu(m).sum().backward()  # the gradient reaches ReLU as a broadcast (stride-0) array
    assert m.grad.tolist() == [[1., 0.], [0., 1.]]


@pytest.mark.parametrize("shapes, message", [
    (((2, 3), (3, 3)), "vector + matrix @ vector expected, got 1, 2, 2"),
    (((2, 3, 1), (3,)), "vector + matrix @ vector expected, got 1, 3, 1"),
    (((2, 3), (2,)), "size mismatch, got input (2), mat (2x3), vec (2)"),
])
def test_mv_checks_its_arguments_as_pytorch_does(shapes, message):
    a, v = (torch.ones(*shape) for shape in shapes)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.mv(a, v)


def test_mv_multiplies_a_matrix_by_a_vector():
    a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    out = a.mv(torch.tensor([1., 0., -1.]))
    assert out.tolist() == [-2., -2.] and out.grad_fn.name() == "MvBackward0"


def test_xlogy_is_zero_where_x_is_zero_and_its_gradients_check_in_float64():
    x = torch.tensor([0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([0.0, 3.0, 0.25], dtype=torch.float64, requires_grad=True)
    out = torch.xlogy(x, y)
    np.testing.assert_allclose(out.detach().numpy(), [0.0, 0.5 * np.log(3.0), 2.0 * np.log(0.25)])
    assert out.grad_fn.name() == "XlogyBackward0"
    v = torch.tensor([0.0, 2.0], requires_grad=True)
    torch.xlogy(v, torch.tensor([1.0, 2.0])).sum().backward()
    assert not torch.isnan(v.grad).any()
    a = torch.tensor([[0.3, 0.0], [1.2, 0.7]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.9, 1.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(torch.xlogy, (a, b))
    assert torch.autograd.gradgradcheck(torch.xlogy, (a, b))


def test_repeat_interleave_matches_numpy_and_its_gradient_sums_the_copies():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    np.testing.assert_array_equal(x.repeat_interleave(2, dim=1).detach().numpy(), np.repeat(x.detach().numpy(), 2, 1))
    np.testing.assert_array_equal(x.repeat_interleave(3).detach().numpy(), np.repeat(x.detach().numpy(), 3))
    counts = torch.tensor([1, 2])
    np.testing.assert_array_equal(x.repeat_interleave(counts, dim=0).detach().numpy(),
                                  np.repeat(x.detach().numpy(), [1, 2], 0))
    np.testing.assert_array_equal(torch.repeat_interleave(counts).numpy(), [0, 1, 1])
    assert torch.autograd.gradcheck(lambda t: t.repeat_interleave(2, dim=0), (x,))
    assert torch.autograd.gradcheck(lambda t: t.repeat_interleave(counts, dim=0), (x,))


def test_unary_inplace_ops_record_the_out_of_place_node_and_refuse_integer_tensors():
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = x.clone()
    y.sin_()
    assert y.grad_fn.name() == "SinBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.5]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.arange(3).exp_()


def test_erfinv_inverts_erf_and_both_gradients_check_in_float64():
    y = torch.tensor([-0.99, -0.5, 0.0, 0.2, 0.8, 0.95], dtype=torch.float64, requires_grad=True)
    np.testing.assert_allclose(torch.erf(torch.erfinv(y)).detach().numpy(), y.detach().numpy(), rtol=1e-12)
    assert torch.erfinv(torch.tensor([-1.0, 1.0, 1.5])).tolist()[:2] == [-float("inf"), float("inf")]
    assert np.isnan(torch.erfinv(torch.tensor([1.5])).item())
    assert torch.autograd.gradcheck(torch.erfinv, (y,))
    assert torch.autograd.gradcheck(torch.erf, (y,))


def test_diagonal_is_a_view_and_its_gradient_checks_twice():
    x = torch.arange(12.0, dtype=torch.float64).reshape(3, 4).requires_grad_()
    np.testing.assert_array_equal(x.diagonal(1).detach().numpy(), np.diagonal(x.detach().numpy(), 1))
    np.testing.assert_array_equal(torch.diagonal(x, -1).detach().numpy(), np.diagonal(x.detach().numpy(), -1))
    y = torch.zeros(3, 3)
    y.diagonal().fill_(2.0)
    assert y.tolist() == [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
    assert torch.autograd.gradcheck(lambda t: t.diagonal(1), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.diagonal(t.reshape(2, 3, 2), 0, 0, 2), (x,))
