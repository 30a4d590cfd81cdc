"""In-place operations: values, version counters, the saved-tensor check with
PyTorch's exact message, leaf rules, grad_fn rebasing, detach and .data."""
import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import views
from chibigrad.autograd.node import FREED_MESSAGE as FREED

HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


def modified(what, version, expected=0):
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {version}; expected version {expected} instead. {HINT}")


def raises(fn, message):
    with pytest.raises(RuntimeError) as err:
        fn()
    assert str(err.value) == message


# ---- values, versions and the node an in-place op records ---------------------------------
@pytest.mark.parametrize("op, values, node, grad", [
    (lambda x: x.add_(1), [2., -1., 4.], "AddBackward0", [1., 1., 1.]),
    (lambda x: x.add_(torch.ones(3), alpha=2), [3., 0., 5.], "AddBackward0", [1., 1., 1.]),
    (lambda x: x.__iadd__(1), [2., -1., 4.], "AddBackward0", [1., 1., 1.]),
    (lambda x: x.sub_(1), [0., -3., 2.], "SubBackward0", [1., 1., 1.]),
    (lambda x: x.__isub__(2), [-1., -4., 1.], "SubBackward0", [1., 1., 1.]),
    (lambda x: x.mul_(2), [2., -4., 6.], "MulBackward0", [2., 2., 2.]),
    (lambda x: x.__imul__(3), [3., -6., 9.], "MulBackward0", [3., 3., 3.]),
    (lambda x: x.div_(2), [0.5, -1., 1.5], "DivBackward0", [0.5, 0.5, 0.5]),
    (lambda x: x.__itruediv__(4), [0.25, -0.5, 0.75], "DivBackward0", [0.25, 0.25, 0.25]),
    (lambda x: x.clamp_(0, 1), [1., 0., 1.], "ClampBackward1", [1., 0., 0.]),
    (lambda x: x.clamp_(min=0), [1., 0., 3.], "ClampBackward1", [1., 0., 1.]),
    (lambda x: x.zero_(), [0., 0., 0.], "ZeroBackward0", [0., 0., 0.]),
    (lambda x: x.fill_(3.), [3., 3., 3.], "FillBackward2", [0., 0., 0.]),
    (lambda x: x.copy_(torch.tensor([7., 8., 9.])), [7., 8., 9.], "CopyBackwards", [0., 0., 0.]),
])
def test_inplace_on_a_non_leaf(op, values, node, grad):
    a = torch.tensor([1., -2., 3.], requires_grad=True)
    x = a * 1
    assert op(x) is x
    assert x.tolist() == values and x._version == 1
    assert type(x.grad_fn).__name__ == node and not x.is_leaf
    assert repr(x).endswith(f"grad_fn=<{node}>)")
    x.sum().backward()
    assert a.grad.tolist() == grad


@pytest.mark.parametrize("index, value, values, grad, node", [
    (0, 5., [5., -2., 3.], [0., 1., 1.], "CopySlices"),
    (slice(1, None), 0., [1., 0., 0.], [1., 0., 0.], "CopySlices"),
    ([0, 2], -1., [-1., -2., -1.], [0., 1., 0.], "IndexPutBackward0"),
    (torch.tensor([True, False, True]), 0., [0., -2., 0.], [0., 1., 0.], "IndexPutBackward0"),
])
def test_setitem_on_a_non_leaf(index, value, values, grad, node):
    a = torch.tensor([1., -2., 3.], requires_grad=True)
    x = a * 1
    x[index] = value
    assert x.tolist() == values and x._version == 1 and type(x.grad_fn).__name__ == node
    x.sum().backward()
    assert a.grad.tolist() == grad


def test_inplace_chain_gradient():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    x = a * 1
    x.mul_(a)
    x.mul_(a)
    x.sum().backward()
    assert a.grad.tolist() == [3., 12., 27.]


def test_inplace_with_an_operand_that_requires_grad():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    x = a * 2
    x.add_(b * b)
    x.sum().backward()
    assert a.grad.tolist() == [2., 2.] and b.grad.tolist() == [6., 8.]


def test_inplace_on_a_plain_tensor_with_an_operand_that_requires_grad():
    b = torch.tensor([3., 4.], requires_grad=True)
    x = torch.zeros(2)
    x.add_(b)
    assert x.requires_grad and not x.is_leaf and type(x.grad_fn).__name__ == "AddBackward0"
    (x * x).sum().backward()
    assert b.grad.tolist() == [6., 8.]


def test_version_counter_counts_every_inplace_change():
    t = torch.tensor([1., 2., 3.])
    assert t._version == 0
    t.add_(1)
    t.mul_(2)
    t[0] = 0.
    t += 1
    t.zero_()
    assert t._version == 5
    u = torch.ones(3)
    u.copy_(torch.tensor([1, 2, 3]))
    assert u.tolist() == [1., 2., 3.] and u.dtype is torch.float32


def test_out_of_place_ops_do_not_bump_versions():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.exp()
    y + 1
    assert x._version == 0 and y._version == 0


# ---- the saved-tensor version check ---------------------------------------------------------
def test_modified_saved_non_leaf_names_its_current_node():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    a = x * 2
    b = a.sin()  # saves a
    a.add_(1)  # a's grad_fn is now AddBackward0
    raises(lambda: b.sum().backward(), modified("[torch.FloatTensor [3]], which is output 0 of Add,", 1))


def test_modified_saved_leaf_has_no_output_clause():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    b = x.sin()
    with torch.no_grad():
        x.add_(1)
    raises(lambda: b.sum().backward(), modified("[torch.FloatTensor [3]]", 1))


def test_modified_saved_tensor_that_does_not_require_grad():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    w = torch.tensor([4., 5., 6.])
    y = x * w
    w.mul_(2)
    raises(lambda: y.sum().backward(), modified("[torch.FloatTensor [3]]", 1))
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    k = torch.tensor([[1, 2], [3, 4]])
    y = x * k
    k.add_(1)
    raises(lambda: y.sum().backward(), modified("[torch.LongTensor [2, 2]]", 1))


def test_modified_saved_output_float64_2d():
    x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    b = (x * 2).exp()  # ExpBackward0 saves its result
    b.add_(1)
    raises(lambda: b.sum().backward(), modified("[torch.DoubleTensor [2, 3]], which is output 0 of Exp,", 1))


def test_modified_zero_dim_tensor():
    x = torch.tensor(3., requires_grad=True)
    a = x ** 2
    b = a ** 2
    a.mul_(2)
    raises(b.backward, modified("[torch.FloatTensor []], which is output 0 of Mul,", 1))


def test_modified_output_of_a_slice():
    x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    s = (x * 1)[1:].sigmoid()
    s.mul_(3)
    raises(lambda: s.sum().backward(), modified("[torch.FloatTensor [3]], which is output 0 of Sigmoid,", 1))


def test_modified_under_no_grad_keeps_the_old_node_name():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    a = x * 2
    b = a.sin()
    with torch.no_grad():
        a.add_(1)
    raises(lambda: b.sum().backward(), modified("[torch.FloatTensor [3]], which is output 0 of Mul,", 1))


def test_two_inplace_changes_show_the_current_version():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    a = x * 2
    b = a.sin()
    a.mul_(3)
    a.add_(1)
    raises(lambda: b.sum().backward(), modified("[torch.FloatTensor [3]], which is output 0 of Add,", 2))


def test_modified_leaf_that_requires_grad_under_no_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x ** 2
    with torch.no_grad():
        x.mul_(2)
    assert x._version == 1
    raises(lambda: y.sum().backward(), modified("[torch.FloatTensor [2]]", 1))


def test_an_op_that_saved_nothing_does_not_care():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    a = x + 0
    c = a * 5  # saves only the scalar 5
    a.add_(1)
    c.sum().backward()
    assert x.grad.tolist() == [5., 5., 5.]


def test_modifying_through_detach_is_caught():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    raises(lambda: y.sum().backward(), modified("[torch.FloatTensor [2]], which is output 0 of Exp,", 1))


def test_inplace_mul_by_own_detach_is_caught():
    a = torch.tensor([1., -2., 3.], requires_grad=True)
    x = a * 1
    x *= x.detach()  # saves x.detach(), which shares x's version counter
    assert x.tolist() == [1., 4., 9.]
    raises(lambda: x.sum().backward(), modified("[torch.FloatTensor [3]]", 1))


# ---- leaves ----------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda x: x.add_(1), lambda x: x.zero_(), lambda x: x.__iadd__(1), lambda x: x.mul_(2), lambda x: x.sub_(1),
    lambda x: x.div_(2), lambda x: x.fill_(2), lambda x: x.copy_(torch.ones(2)), lambda x: x.clamp_(0, 1),
])
def test_inplace_on_a_leaf_that_requires_grad_raises(op):
    x = torch.tensor([1., 2.], requires_grad=True)
    raises(lambda: op(x), LEAF_INPLACE)
    assert x.tolist() == [1., 2.] and x._version == 0 and x.is_leaf


def test_setitem_and_inplace_on_a_view_of_a_leaf_raise_the_view_message():
    message = "a view of a leaf Variable that requires grad is being used in an in-place operation."
    x = torch.tensor([1., 2.], requires_grad=True)
    raises(lambda: x.__setitem__(0, 5.), message)
    raises(lambda: x.__setitem__(slice(0, 1), 5.), message)
    raises(lambda: x[:1].mul_(2), message)
    raises(lambda: x.__setitem__([0], 5.), LEAF_INPLACE)  # advanced indexing makes no view
    raises(lambda: x.__setitem__(x.detach() > 1, 5.), LEAF_INPLACE)
    assert x.tolist() == [1., 2.]


def test_inplace_on_a_leaf_is_allowed_under_no_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        x.add_(1)
        x.mul_(2)
        x[0] = 0.5
        x -= 0.5
    assert x.tolist() == [0., 5.5] and x.is_leaf and x.grad_fn is None and x.requires_grad and x._version == 4
    assert repr(x) == "tensor([0.0000, 5.5000], requires_grad=True)"
    (x * x).sum().backward()
    assert x.grad.tolist() == [0., 11.]


def test_sgd_step_pattern_under_no_grad():
    w = torch.tensor([1., 2.], requires_grad=True)
    for _ in range(2):
        (w * w).sum().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    assert w.tolist() == pytest.approx([0.64, 1.28]) and w.is_leaf


def test_data_bypasses_the_leaf_check_and_the_version_counter():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.data.add_(1)
    assert x.tolist() == [2., 3.] and x._version == 0
    y = x ** 2
    x.data.mul_(2)
    y.sum().backward()  # no error: .data does not share the version counter (the saved x changed, silently)
    assert x.grad.tolist() == [8., 12.]


# ---- detach ---------------------------------------------------------------------------
def test_detach_shares_storage_and_version_counter():
    x = torch.tensor([1., 2.], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d[0] = 10.
    assert x.tolist() == [10., 2.]
    assert x._version == d._version == 1
    with torch.no_grad():
        x.add_(1)
    assert d.tolist() == [11., 3.] and d._version == 2


def test_detach_of_a_non_leaf():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.detach()
    assert z.tolist() == [1., -2., 4.] and not z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad"):
        (z * 2).sum().backward()


def test_detach_then_requires_grad_makes_a_new_leaf():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x * 3).detach().requires_grad_()
    assert y.is_leaf and y.requires_grad and repr(y) == "tensor([3., 6.], requires_grad=True)"
    (y * y).sum().backward()
    assert y.grad.tolist() == [6., 12.] and x.grad is None


def test_detach_inplace():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None and y.tolist() == [2., 4.]


# ---- in-place changes through views (autograd/views.py) ----------------------------------
@pytest.mark.parametrize("make_base, index", [
    (lambda: np.arange(12.).reshape(3, 4), (slice(None), slice(1, 3))),
    (lambda: np.asfortranarray(np.arange(12.).reshape(3, 4)), (1, slice(None, None, 2))),
    (lambda: np.arange(12.).reshape(3, 4)[::-1], (slice(0, 2), 3)),
    (lambda: np.arange(24.).reshape(2, 3, 4).transpose(2, 0, 1), (Ellipsis, 1)),
    (lambda: np.arange(6.), (4, Ellipsis)),
    (lambda: np.arange(6.), (slice(3, 3),)),
])
def test_view_positions_finds_each_element_of_a_view_in_its_base(make_base, index):
    base = make_base()
    view = base[index]
    positions = views.view_positions(view, base)
    assert positions.shape == (view.size,)
    assert np.array_equal(base.reshape(-1)[positions], view.reshape(-1))  # row-major order on both sides


def test_view_positions_refuses_memory_outside_the_base():
    with pytest.raises(RuntimeError, match="could not find this view's elements in its base"):
        views.view_positions(np.ones(3), np.ones(3))


def test_copyslices_frees_the_inplace_ops_saved_tensors_with_the_graph():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    x[1:].mul_(a[:2])  # MulBackward0 saves both factors; CopySlices stands in for it in the graph
    x.sum().backward(retain_graph=True)
    x.sum().backward()
    assert a.grad.tolist() == [12., 16., 8.]  # x = [2a0, 2a1*a0, 2a2*a1]: twice [2 + 2a1, 2a0 + 2a2, 2a1]
    raises(lambda: x.sum().backward(), FREED)


def test_a_hook_on_the_base_after_a_change_through_a_view_sees_the_whole_gradient():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    x = a * 1
    x[0].mul_(10)
    seen = []
    x.register_hook(seen.append)
    (x * torch.tensor([1., 2., 3.])).sum().backward()
    assert seen[0].tolist() == [1., 2., 3.] and a.grad.tolist() == [10., 2., 3.]


def test_vector_indexing_and_unbind_give_views_that_see_later_changes():
    x = torch.zeros(3)
    first, pieces = x[0], x.unbind()
    x.add_(5)
    assert first.item() == 5. and [p.item() for p in pieces] == [5., 5., 5.]


@pytest.mark.parametrize("pick, overlaps", [
    (lambda m: (m, m), False),  # the same elements
    (lambda m: (m, m.reshape(-1)), True),  # the same range, other strides (PyTorch compares them too)
    (lambda m: (m[:1], m[1:]), False),  # disjoint rows
    (lambda m: (m, m[:1, :1]), True),
    (lambda m: (m, m[:0]), False),  # nothing to overlap
    (lambda m: (m, m.T), True),  # dense both, the same range, other strides
    (lambda m: (m[:, ::2], m[:, 1::2]), False),  # interleaved: not dense, PyTorch does not check
    (lambda m: (m, m[::-1]), False),  # negative strides: not dense either
    (lambda m: (m, m.transpose().copy()), False),  # other memory
])
def test_partial_overlap_follows_pytorchs_memory_ranges(pick, overlaps):
    a, b = pick(np.arange(12.).reshape(3, 4))
    assert views.partial_overlap(a, b) is overlaps
