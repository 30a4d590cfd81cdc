"""Tensor creation, dtypes, attributes and conversions, as PyTorch has them.

Expected values and messages are PyTorch 2.13's (see /work/notes/torch_messages.md).
"""
import numpy as np
import pytest

import chibigrad as torch
from chibigrad import Tensor


def arr(t):
    return t.detach()._array


# ---- creation ---------------------------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    ([1, 2], torch.int64), ([1., 2], torch.float32), ([True], torch.bool), (3, torch.int64), (2.5, torch.float32),
    ([1, 2.5], torch.float32), ([[1, 2], [3, 4]], torch.int64), (np.array([1.]), torch.float64),
    (np.array([1], dtype=np.int32), torch.int32), (np.float32(1), torch.float32), (np.int32(1), torch.int32),
])
def test_tensor_infers_pytorch_dtype(data, dtype):
    assert torch.tensor(data).dtype is dtype


def test_tensor_copies_its_data():
    a = np.array([1., 2.])
    t = torch.tensor(a)
    a[0] = 10.
    assert t.tolist() == [1., 2.]
    src = torch.tensor([1., 2.])
    with pytest.warns(UserWarning) as record:
        t2 = torch.tensor(src)
    assert str(record[0].message) == (
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
        "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")
    src[0] = 5.
    assert t2.tolist() == [1., 2.]


def test_tensor_with_dtype_and_requires_grad():
    t = torch.tensor([1, 2], dtype=torch.float64, requires_grad=True)
    assert t.dtype is torch.float64 and t.requires_grad and t.is_leaf and t.grad_fn is None
    assert arr(t).dtype == np.float64


@pytest.mark.parametrize("make, shape, dtype, value", [
    (lambda: torch.zeros(2, 3), (2, 3), torch.float32, 0.),
    (lambda: torch.zeros((2, 3)), (2, 3), torch.float32, 0.),
    (lambda: torch.ones(3, dtype=torch.int64), (3,), torch.int64, 1),
    (lambda: torch.ones([2, 2], dtype=torch.float64), (2, 2), torch.float64, 1.),
    (lambda: torch.full((2, 2), 7.), (2, 2), torch.float32, 7.),
    (lambda: torch.full((2,), 3), (2,), torch.int64, 3),
    (lambda: torch.full((1,), True), (1,), torch.bool, True),
    (lambda: torch.zeros(()), (), torch.float32, 0.),
])
def test_filled_creation(make, shape, dtype, value):
    t = make()
    assert t.shape == shape and t.dtype is dtype
    assert (arr(t) == value).all()


def test_empty_has_shape_and_dtype():
    t = torch.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype is torch.float32
    assert torch.empty(4, dtype=torch.int64).dtype is torch.int64


def test_eye():
    np.testing.assert_array_equal(arr(torch.eye(3)), np.eye(3))
    np.testing.assert_array_equal(arr(torch.eye(2, 3)), np.eye(2, 3))
    assert torch.eye(2).dtype is torch.float32


def test_arange():
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4] and torch.arange(5).dtype is torch.int64
    assert torch.arange(1, 4).tolist() == [1, 2, 3]
    assert torch.arange(0, 1, 0.25).tolist() == [0., 0.25, 0.5, 0.75]
    assert torch.arange(0, 1, 0.25).dtype is torch.float32
    assert torch.arange(3.).dtype is torch.float32
    assert torch.arange(3, dtype=torch.float64).dtype is torch.float64


def test_linspace():
    t = torch.linspace(-1, 1, 5)
    assert t.tolist() == [-1., -0.5, 0., 0.5, 1.] and t.dtype is torch.float32
    assert torch.linspace(0, 1, 3, dtype=torch.float64).dtype is torch.float64


def test_like_functions_take_shape_and_dtype():
    y = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64)
    for fn, value in ((torch.zeros_like, 0.), (torch.ones_like, 1.)):
        t = fn(y)
        assert t.shape == (2, 2) and t.dtype is torch.float64 and (arr(t) == value).all()
    t = torch.full_like(y, 2.5)
    assert t.dtype is torch.float64 and (arr(t) == 2.5).all()
    assert torch.empty_like(y).shape == (2, 2)
    assert torch.zeros_like(y, dtype=torch.int64).dtype is torch.int64
    assert torch.ones_like(torch.tensor([1, 2])).dtype is torch.int64
    assert torch.zeros_like(y, requires_grad=True).requires_grad
    assert torch.randn_like(y).shape == (2, 2) and torch.rand_like(y).dtype is torch.float64


def test_random_creation_shapes_dtypes_and_ranges():
    assert torch.randn(2, 3).shape == (2, 3) and torch.randn(2, 3).dtype is torch.float32
    assert torch.randn((4,), dtype=torch.float64).dtype is torch.float64
    r = torch.rand(1000)
    assert r.dtype is torch.float32 and 0 <= arr(r).min() and arr(r).max() < 1
    i = torch.randint(0, 10, (3, 2))
    assert i.shape == (3, 2) and i.dtype is torch.int64 and 0 <= arr(i).min() and arr(i).max() < 10
    j = torch.randint(5, (200,))
    assert j.shape == (200,) and 0 <= arr(j).min() and arr(j).max() < 5
    assert torch.randn(3, requires_grad=True).requires_grad


def test_manual_seed_repeats_random_numbers():
    torch.manual_seed(0)
    a, b = torch.randn(3), torch.randint(0, 100, (3,))
    torch.manual_seed(0)
    assert torch.equal(a, torch.randn(3)) and torch.equal(b, torch.randint(0, 100, (3,)))
    torch.manual_seed(1)
    assert not torch.equal(a, torch.randn(3))


def test_from_numpy_shares_memory_both_ways():
    a = np.array([1., 2., 3.])
    t = torch.from_numpy(a)
    assert t.dtype is torch.float64
    a[0] = 10.
    assert t.tolist() == [10., 2., 3.]
    t[1] = 20.
    assert a.tolist() == [10., 20., 3.]
    assert torch.from_numpy(np.array([1, 2], dtype=np.int32)).dtype is torch.int32


# ---- dtypes -------------------------------------------------------------------
def test_dtype_reprs_and_aliases():
    assert repr(torch.float32) == str(torch.float32) == "torch.float32"
    assert [repr(d) for d in (torch.float64, torch.int64, torch.bool)] == ["torch.float64", "torch.int64", "torch.bool"]
    assert torch.float is torch.float32 and torch.double is torch.float64 and torch.long is torch.int64
    assert torch.float32.is_floating_point and torch.float64.is_floating_point
    assert not torch.int64.is_floating_point and not torch.bool.is_floating_point
    assert torch.get_default_dtype() is torch.float32


# ---- attributes and methods -------------------------------------------------------
def test_shape_size_dim_numel():
    x = torch.ones(2, 3)
    assert x.shape == (2, 3) and isinstance(x.shape, tuple) and isinstance(x.shape, torch.Size)
    assert repr(x.shape) == "torch.Size([2, 3])" and repr(x.size()) == "torch.Size([2, 3])"
    assert repr(torch.tensor(1.).shape) == "torch.Size([])"
    assert x.size(1) == 3 and x.size(-1) == 3 and x.size() == (2, 3)
    assert x.dim() == x.ndim == 2 and x.numel() == 6 and len(x) == 2
    assert type(x.shape[0]) is int and list(x.shape) == [2, 3]
    assert torch.tensor(5.).dim() == 0 and torch.tensor(5.).numel() == 1


def test_device_and_cpu():
    x = torch.ones(2)
    assert str(x.device) == "cpu" and repr(x.device) == "device(type='cpu')" and x.device.type == "cpu"
    assert x.cpu() is x


def test_T_transposes_and_tolist():
    y = torch.tensor([[1., 2.], [3., 4.]])
    assert y.T.tolist() == [[1., 3.], [2., 4.]]
    assert y.tolist() == [[1., 2.], [3., 4.]]
    assert torch.tensor([1.5]).tolist() == [1.5] and torch.tensor(1.5).tolist() == 1.5
    assert torch.tensor([0.1]).tolist() == [0.10000000149011612]  # float32, as PyTorch shows it


def test_item_returns_python_scalars():
    assert torch.tensor(3).item() == 3 and type(torch.tensor(3).item()) is int
    assert torch.tensor(3.).item() == 3. and type(torch.tensor(3.).item()) is float
    assert torch.tensor(True).item() is True
    assert torch.tensor([[2.5]]).item() == 2.5
    assert torch.tensor(0.1).item() == 0.10000000149011612
    assert torch.tensor(0.1, dtype=torch.float64).item() == 0.1
    with pytest.raises(RuntimeError, match=r"^a Tensor with 2 elements cannot be converted to Scalar$"):
        torch.tensor([1., 2.]).item()


def test_python_conversions():
    assert float(torch.tensor([3.5])) == 3.5 and int(torch.tensor(7)) == 7
    assert bool(torch.tensor([1.])) is True and bool(torch.tensor(0.)) is False
    with pytest.raises(RuntimeError, match=r"^Boolean value of Tensor with more than one value is ambiguous$"):
        bool(torch.tensor([1., 2.]))


def test_numpy_returns_the_array_and_shares_it():
    y = torch.tensor([[1., 2.], [3., 4.]])
    n = y.numpy()
    assert isinstance(n, np.ndarray) and n.dtype == np.float32
    n[0, 0] = 9.
    assert y[0, 0].item() == 9.


@pytest.mark.parametrize("make", [
    lambda: torch.tensor([1., 2.], requires_grad=True),
    lambda: torch.tensor([1., 2.], requires_grad=True) * 2,
])
def test_numpy_on_tensor_that_requires_grad_raises(make):
    with pytest.raises(RuntimeError) as err:
        make().numpy()
    assert str(err.value) == ("Can't call numpy() on Tensor that requires grad. "
                              "Use tensor.detach().numpy() instead.")


def test_detach_numpy_and_tolist_item_work_on_tensors_that_require_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    assert y.tolist() == [2., 4.] and y.sum().item() == 6.
    assert y.detach().numpy().tolist() == [2., 4.]


def test_clone_copies():
    y = torch.tensor([1., 2.])
    c = y.clone()
    c[0] = 5.
    assert y.tolist() == [1., 2.] and c.tolist() == [5., 2.]


def test_contiguous():
    y = torch.tensor([[1., 2.], [3., 4.]])
    assert y.contiguous() is y and y.is_contiguous()
    t = y.t()
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == [[1., 3.], [2., 4.]]


def test_to_changes_dtype_and_keeps_same_dtype_as_is():
    y = torch.tensor([[1.5, 2.], [3., 4.]])
    assert y.to(torch.float32) is y and y.float() is y
    assert y.to(torch.float64).dtype is torch.float64 and y.double().dtype is torch.float64
    assert y.to(torch.int64).tolist() == [[1, 2], [3, 4]] and y.long().dtype is torch.int64
    assert y.to(dtype=torch.float64).dtype is torch.float64
    assert y.to("cpu") is y
    assert y.to(torch.tensor([1], dtype=torch.int64)).dtype is torch.int64


def test_data_shares_storage_but_not_the_graph():
    x = torch.tensor([1., 2.], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)
    assert x.tolist() == [2., 3.]
    assert x._version == 0  # .data has its own version counter, unlike detach()


def test_data_assignment_of_another_shape_or_dtype_is_what_later_ops_record():
    x = torch.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    x.data, x.grad = torch.ones(5, dtype=torch.float64), None
    (x * 2).sum().backward()  # the gradient is checked against the new shape and dtype
    assert x.grad.shape == (5,) and x.grad.dtype is torch.float64


def test_allclose_equal_isclose():
    a = torch.tensor([1., 2.])
    assert torch.allclose(a, a + 1e-9) and not torch.allclose(a, torch.tensor([1., 2.1]))
    assert torch.allclose(a, torch.tensor([1., 2.1]), atol=0.2)
    assert torch.equal(a, a.clone()) and not torch.equal(a, a + 1)
    assert not torch.equal(torch.tensor([1.]), torch.tensor([1., 1.]))
    close = torch.isclose(a, torch.tensor([1., 2.5]))
    assert close.dtype is torch.bool and close.tolist() == [True, False]


def test_comparisons_give_bool_tensors_without_grad():
    x = torch.tensor([1., 3., 2.], requires_grad=True)
    for r in (x > 1, x == 3, x <= 2., x != x):
        assert r.dtype is torch.bool and not r.requires_grad and r.grad_fn is None
    assert (x > 1.5).tolist() == [False, True, True]
    i = x.argmax()
    assert i.tolist() == 1 and i.dtype is torch.int64 and not i.requires_grad


def test_tensor_is_the_tensor_class():
    assert isinstance(torch.tensor(1.), Tensor) and torch.Tensor is Tensor


def test_is_floating_point():
    assert torch.tensor([1.]).is_floating_point() and not torch.tensor([1]).is_floating_point()


# ---- type promotion -------------------------------------------------------------
i64, f32 = torch.tensor([1, 2]), torch.tensor([1., 2.])
f64, b = torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([True, False])
i32 = torch.tensor([1, 2], dtype=torch.int32)


@pytest.mark.parametrize("expr, dtype", [
    (lambda: i64 * 2.5, torch.float32), (lambda: i64 + f32, torch.float32), (lambda: f32 + i64, torch.float32),
    (lambda: f32 + f64, torch.float64), (lambda: f32 + 1, torch.float32), (lambda: b + 1, torch.int64),
    (lambda: b * 1.5, torch.float32), (lambda: i64 / i64, torch.float32), (lambda: i64 ** 2, torch.int64),
    (lambda: 2 ** i64, torch.int64), (lambda: 2.0 ** i64, torch.float32), (lambda: i64 ** 0.5, torch.float32),
    (lambda: i32 + i64, torch.int64), (lambda: i32 + 1, torch.int32), (lambda: i32 * 1.5, torch.float32),
    (lambda: i32 / 2, torch.float32), (lambda: f32 + torch.tensor(1., dtype=torch.float64), torch.float32),
    (lambda: i64 + torch.tensor(1., dtype=torch.float64), torch.float64),
    (lambda: torch.tensor(1) + torch.tensor(1., dtype=torch.float64), torch.float64),
    (lambda: f64 * 3, torch.float64), (lambda: 10 - f64, torch.float64), (lambda: 1 / i64, torch.float32),
    (lambda: torch.where(b, i64, 0.5), torch.float32), (lambda: torch.maximum(i64, f32), torch.float32),
    (lambda: torch.cat([f32, f64]), torch.float64), (lambda: f32.sum(), torch.float32),
    (lambda: i64.sum(), torch.int64), (lambda: b.sum(), torch.int64), (lambda: i32.sum(), torch.int64),
    (lambda: i64.exp(), torch.float32), (lambda: i64.sqrt(), torch.float32), (lambda: f32 == i64, torch.bool),
    (lambda: f32 * np.float64(2), torch.float32), (lambda: np.float64(2) * f32, torch.float32),
    (lambda: i64 * np.float64(2.5), torch.float32), (lambda: i32 + np.int64(1), torch.int32),
])
def test_type_promotion(expr, dtype):
    assert expr().dtype is dtype


def test_promotion_values():
    assert (i64 * 2.5).tolist() == [2.5, 5.] and (i64 + f32).tolist() == [2., 4.]
    assert (2 ** i64).tolist() == [2, 4] and (b + 1).tolist() == [2, 1]


def test_mean_of_integers_raises_pytorch_error():
    with pytest.raises(RuntimeError) as err:
        i64.mean()
    assert str(err.value) == ("mean(): could not infer output dtype. Input dtype must be either a floating point "
                              "or complex dtype. Got: Long")


def test_requires_grad_keeps_the_dimensioned_tensors_dtype():
    y = f32 + torch.tensor(1., dtype=torch.float64, requires_grad=True)
    assert y.dtype is torch.float32 and y.grad_fn.name() == "AddBackward0"


# ---- reprs ----------------------------------------------------------------------
@pytest.mark.parametrize("make, text", [
    (lambda: torch.tensor([2., 4., 6.]), "tensor([2., 4., 6.])"),
    (lambda: torch.tensor(4., requires_grad=True) ** 3, "tensor(64., grad_fn=<PowBackward0>)"),
    (lambda: torch.tensor([1.5, 2.25]), "tensor([1.5000, 2.2500])"),
    (lambda: torch.tensor([1., 2.], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: torch.tensor([1., 2.], dtype=torch.float64), "tensor([1., 2.], dtype=torch.float64)"),
    (lambda: torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True),
     "tensor([1., 2.], dtype=torch.float64, requires_grad=True)"),
    (lambda: torch.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: torch.tensor(5), "tensor(5)"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.ones(2, 3, requires_grad=True).sum(0), "tensor([2., 2., 2.], grad_fn=<SumBackward1>)"),
    (lambda: torch.tensor([[1., -2.5], [3.25, 4.]]), "tensor([[ 1.0000, -2.5000],\n        [ 3.2500,  4.0000]])"),
])
def test_repr(make, text):
    t = make()
    assert repr(t) == text and str(t) == text


def test_format_of_zero_dim_tensor_formats_its_item():
    assert f"{torch.tensor(2.5):.2f}" == "2.50" and f"{torch.tensor(64.)}" == "64.0"


def test_in_place_arithmetic_checks_the_result_dtype_of_any_operand():
    x = torch.ones(2)
    x.add_(np.ones(2))  # a numpy operand still works, as every other op takes it
    assert x.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        torch.ones(2, dtype=torch.int64).mul_(np.full(2, 0.5, dtype=np.float32))
    assert torch.tensor([np.uint8(1), np.uint8(2)]).tolist() == [1, 2]  # small numpy integers are no overflow


def test_random_fills_follow_manual_seed_and_their_distribution():
    torch.manual_seed(3)
    a = torch.empty(20000).normal_(2.0, 0.5)
    torch.manual_seed(3)
    b = torch.empty(20000).normal_(2.0, 0.5)
    assert torch.equal(a, b)
    assert abs(a.mean().item() - 2.0) < 0.02 and abs(a.std().item() - 0.5) < 0.02
    u = torch.empty(20000, dtype=torch.float64).uniform_(-3.0, 1.0)
    assert u.dtype == torch.float64 and u.min().item() >= -3.0 and u.max().item() < 1.0
    assert abs(u.mean().item() + 1.0) < 0.05
    assert abs(torch.empty(20000).bernoulli_(0.25).mean().item() - 0.25) < 0.02
    assert abs(torch.empty(20000).exponential_(4.0).mean().item() - 0.25) < 0.02


@pytest.mark.parametrize("module, name", [(torch, "fft"), (torch.nn, "ConvTranspose2d"), (torch.nn.functional, "conv_transpose2d"),
                                          (torch.optim, "SparseAdam"), (torch.autograd, "set_multithreading_enabled"),
                                          (torch.utils, "tensorboard")])
def test_a_torch_name_chibigrad_lacks_says_so_and_where_the_coverage_table_is(module, name):
    torch_name = module.__name__.replace("chibigrad", "torch")
    with pytest.raises(AttributeError, match=rf"chibigrad does not implement {torch_name}\.{name}\. .*README\.md"):
        getattr(module, name)
    assert not hasattr(module, name)
    with pytest.raises(AttributeError, match=r"^module 'chibigrad' has no attribute '__wrapped__'$"):
        torch.__wrapped__
