"""Hooks: Tensor.register_hook (may replace the gradient, handle.remove()),
register_post_accumulate_grad_hook, hooks on nodes, and retain_grad /
retains_grad with PyTorch's warning for .grad of a non-leaf."""
import warnings

import pytest

import chibigrad as torch

NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


# ---- register_hook ---------------------------------------------------------------------
def test_leaf_hook_replaces_the_gradient_and_remove_undoes_it():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    handle = x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [20., 20., 20.]
    handle.remove()
    handle.remove()  # removing twice is harmless
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2., 2., 2.]


def test_hook_returning_none_keeps_the_gradient_and_sees_it():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    (y * y).sum().backward()
    assert [s.tolist() for s in seen] == [[4., 8., 12.]]
    assert x.grad.tolist() == [8., 16., 24.]


def test_non_leaf_hook_changes_what_flows_further():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g + 1)
    (y * y).sum().backward()
    assert x.grad.tolist() == [10., 18., 26.]


def test_hooks_run_in_registration_order_each_seeing_the_previous_result():
    x = torch.tensor(1., requires_grad=True)
    y = x * 3
    calls = []
    y.register_hook(lambda g: calls.append(("first", g.item())) or g * 2)
    y.register_hook(lambda g: calls.append(("second", g.item())) or g + 1)
    y.backward()
    assert calls == [("first", 1.), ("second", 2.)]
    assert x.grad.item() == 9.


def test_hook_sees_the_sum_of_all_paths_once():
    x = torch.tensor(2., requires_grad=True)
    h = x * 1
    seen = []
    h.register_hook(lambda g: seen.append(g.item()))
    (h * 3 + h * h + h).backward()
    assert seen == [3. + 4. + 1.]


def test_hook_on_tensor_that_does_not_require_grad_raises():
    with pytest.raises(RuntimeError) as err:
        torch.tensor([1., 2.]).register_hook(lambda g: g)
    assert str(err.value) == "cannot register a hook on a tensor that doesn't require gradient"


def test_hooks_with_retain_grad_see_pytorchs_order():
    x = torch.tensor(2., requires_grad=True)
    y = x ** 2
    seen = []
    y.register_hook(lambda g: seen.append(g.item()))
    y.retain_grad()
    y.register_hook(lambda g: g * 0)
    y.backward()
    assert seen == [1.] and x.grad.item() == 0. and y.grad.item() == 0.


def test_hook_removed_inside_a_with_block():
    x = torch.tensor(1., requires_grad=True)
    with x.register_hook(lambda g: g * 5):
        (x * 1).backward()
    (x * 1).backward()
    assert x.grad.item() == 6.


def test_hooks_work_under_autograd_grad():
    x = torch.tensor(3., requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 2)
    (g,) = torch.autograd.grad(y, x)
    assert g.item() == 12.


# ---- post-accumulate-grad hooks ----------------------------------------------------------
def test_post_accumulate_grad_hook_sees_the_updated_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    calls = []
    handle = x.register_post_accumulate_grad_hook(lambda t: calls.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert calls == [(True, [3., 3.]), (True, [6., 6.])]
    handle.remove()
    (x * 3).sum().backward()
    assert len(calls) == 2 and x.grad.tolist() == [9., 9.]


def test_post_accumulate_grad_hook_can_step_the_parameter():
    w = torch.tensor([1., 2.], requires_grad=True)

    def sgd(p):
        with torch.no_grad():
            p -= 0.5 * p.grad
        p.grad = None

    w.register_post_accumulate_grad_hook(sgd)
    (w * w).sum().backward()
    assert w.tolist() == [0., 0.] and w.grad is None


def test_post_accumulate_grad_hook_runs_after_tensor_hooks():
    x = torch.tensor(1., requires_grad=True)
    calls = []
    x.register_hook(lambda g: calls.append("hook") or g * 2)
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("post", t.grad.item())))
    (x * 3).backward()
    assert calls == ["hook", ("post", 6.)]


def test_post_accumulate_grad_hook_on_a_non_leaf_raises():
    y = torch.tensor([1.], requires_grad=True) * 2
    with pytest.raises(RuntimeError) as err:
        y.register_post_accumulate_grad_hook(lambda t: None)
    assert str(err.value) == "post accumulate grad hooks cannot be registered on non-leaf tensors"


# ---- hooks on nodes -----------------------------------------------------------------------
def test_node_prehook_and_hook():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 3
    seen = {}

    def pre(grad_outputs):
        seen["pre"] = [g.tolist() for g in grad_outputs]
        return (grad_outputs[0] * 2,)

    def post(grad_inputs, grad_outputs):
        seen["post"] = ([g.tolist() for g in grad_inputs if g is not None], [g.tolist() for g in grad_outputs])

    y.grad_fn.register_prehook(pre)
    handle = y.grad_fn.register_hook(post)
    y.sum().backward()
    assert seen == {"pre": [[1., 1.]], "post": ([[6., 6.]], [[2., 2.]])}
    assert x.grad.tolist() == [6., 6.]
    handle.remove()


# ---- retain_grad -----------------------------------------------------------------------
def test_non_leaf_grad_warns_and_is_none():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning) as record:
        assert y.grad is None
    assert [str(w.message) for w in record] == [NON_LEAF_GRAD]


def test_leaf_grad_and_plain_tensor_grad_do_not_warn():
    x = torch.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None and torch.tensor([1.]).grad is None
        (x * 2).sum().backward()
        assert x.grad.tolist() == [2., 2.]


def test_retain_grad_fills_non_leaf_grad():
    w = torch.tensor([1.0], requires_grad=True)
    x = w * 2.0
    x.retain_grad()
    x.retain_grad()  # twice is the same as once
    y = x + 1
    assert not y.retains_grad
    y.backward()
    assert w.grad.tolist() == [2.] and x.grad.tolist() == [1.]
    assert x.retains_grad and not x.is_leaf and not w.retains_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.grad


def test_retained_grad_accumulates_over_backward_passes():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 3
    y.retain_grad()
    s = (y * y).sum()
    s.backward(retain_graph=True)
    s.backward()
    assert y.grad.tolist() == [12., 24.] and x.grad.tolist() == [36., 72.]


def test_retain_grad_on_a_leaf_is_a_no_op():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2., 2.]


def test_retain_grad_without_requires_grad_raises():
    with pytest.raises(RuntimeError) as err:
        torch.tensor([1., 2.]).retain_grad()
    assert str(err.value) == "can't retain_grad on Tensor that has requires_grad=False"


def test_retained_grad_of_a_tensor_used_twice_in_one_op():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y * y
    z.sum().backward()
    assert y.grad.tolist() == [4., 8.]


def test_leaf_grad_assignment_checks():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.grad = torch.tensor([5., 5.])
    (x * 1).sum().backward()
    assert x.grad.tolist() == [6., 6.]
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError) as err:
        x.grad = torch.ones(3)
    assert str(err.value) == ("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please "
                              "ensure that the gradient and the tensor are the same size")


def test_register_hooks_on_one_saved_tensor_packs_now_and_unpacks_in_backward():
    calls = []
    a, b = torch.ones(3, requires_grad=True), torch.full((3,), 2.0, requires_grad=True)
    y = a * b
    y.grad_fn._raw_saved_other.register_hooks(lambda t: calls.append("pack") or t * 10,
                                              lambda t: calls.append("unpack") or t)
    assert calls == ["pack"]
    y.sum().backward()
    assert calls == ["pack", "unpack"] and a.grad.tolist() == [20.0, 20.0, 20.0]
    with pytest.raises(RuntimeError, match="after it has been freed"):
        y.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)


def test_multi_grad_hook_all_waits_for_every_gradient_reached_and_any_takes_the_first():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    c = a * b
    seen = []
    handle = torch.autograd.graph.register_multi_grad_hook((a, b, c), lambda grads: seen.append(
        [g is not None for g in grads]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert seen == [[True, True, True], [True, False, True]]
    handle.remove()
    c.sum().backward(retain_graph=True)
    assert len(seen) == 2
    firsts = []
    torch.autograd.graph.register_multi_grad_hook((a, b), firsts.append, mode="any")
    (a * b).sum().backward()
    assert len(firsts) == 1


def test_allow_mutation_on_saved_tensors_lets_backward_use_the_saved_values():
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        a = torch.tensor([0.5, 1.0], requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.mul_(3)
        out.backward()
    assert a.grad.tolist() == [1.0, 2.0]
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        out = (a ** 2).sum()
    with pytest.raises(AssertionError, match="Trying to backward outside"):
        out.backward()
