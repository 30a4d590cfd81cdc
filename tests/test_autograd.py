"""The autograd API: the graph (grad_fn, next_functions, AccumulateGrad,
is_leaf, requires_grad), ``Tensor.backward``, ``autograd.backward`` and
``autograd.grad`` with all their arguments, higher-order gradients, and
PyTorch's error texts.
"""
import math
import warnings

import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import AccumulateGrad

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.")
NOT_SCALAR = "grad can be implicitly created only for scalar outputs"


def no_grad_fn(i=0):
    return f"element {i} of tensors does not require grad and does not have a grad_fn"


def raises(fn, message, kind=RuntimeError):
    with pytest.raises(kind) as err:
        fn()
    assert str(err.value) == message


# ---- the graph --------------------------------------------------------------------
def test_seed_graph_structure():
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    z = x * y
    w = z + x
    out = w ** 2
    assert type(out.grad_fn).__name__ == "PowBackward0"
    ((add, nr),) = out.grad_fn.next_functions
    assert type(add).__name__ == "AddBackward0" and nr == 0 and add is w.grad_fn
    (mul, _), (acc_x, _) = add.next_functions
    assert mul is z.grad_fn and isinstance(acc_x, AccumulateGrad) and acc_x.variable is x
    (ax, _), (ay, _) = mul.next_functions
    assert ax is acc_x and ay.variable is y
    assert type(ax).__name__ == "AccumulateGrad" and ax.next_functions == ()
    assert repr(out.grad_fn).startswith("<PowBackward0 object at 0x")
    assert repr(ax).startswith("<AccumulateGrad object at 0x")


def test_next_functions_has_none_for_inputs_that_need_no_grad():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.])
    c = torch.tensor([5., 6.], requires_grad=True)

    def edges(t):
        return [(None if n is None else type(n).__name__, i) for n, i in t.grad_fn.next_functions]

    assert edges(a * b) == [("AccumulateGrad", 0), (None, 0)]
    assert edges(b * a) == [(None, 0), ("AccumulateGrad", 0)]
    assert edges(a * c) == [("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    assert edges(a * 2) == edges(a + 1) == edges(2 * a) == [("AccumulateGrad", 0), (None, 0)]
    assert edges(a.exp() * c) == [("ExpBackward0", 0), ("AccumulateGrad", 0)]
    assert edges((a * c).sum()) == [("MulBackward0", 0)]
    assert edges(torch.cat([a, b, c])) == [("AccumulateGrad", 0), (None, 0), ("AccumulateGrad", 0)]
    assert edges(torch.where(a > 1, a, c)) == [("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    y = a * 1
    y.add_(1)
    assert edges(y) == [("MulBackward0", 0), (None, 0)]


def test_next_functions_index_is_the_output_number():
    a = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    parts = (a * 1).split(2)
    s = parts[1] * parts[0]
    (n1, i1), (n0, i0) = s.grad_fn.next_functions
    assert n1 is n0 is parts[0].grad_fn and (i1, i0) == (1, 0)


def test_next_functions_is_a_tuple_of_pairs_built_from_the_nodes_flat_edges():
    a = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    b = torch.tensor([1., 2.])
    parts = (a * 1).split(2)
    for node in ((parts[1] * b).grad_fn, torch.cat([parts[1], b]).grad_fn):  # short and general recording paths
        edges = node.next_functions
        assert type(edges) is tuple and all(type(e) is tuple for e in edges)
        assert edges == ((parts[0].grad_fn, 1), (None, 0)) and edges == node.next_functions
    s = (parts[1] * b).sum()
    s.backward()
    assert a.grad.tolist() == [0., 0., 1., 2.]

    class TwoOutputs(torch.autograd.Function):  # (split's outputs are views, which detach_() refuses)
        @staticmethod
        def forward(ctx, x):
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2

    leaf = TwoOutputs.apply(a)[1].detach_().requires_grad_()  # a leaf now, whatever output it was: edge (acc, 0)
    for node in ((leaf * 2).grad_fn, torch.cat([leaf, b]).grad_fn):
        assert node.next_functions[0][1] == 0 and node.next_functions[0][0].variable is leaf
    (leaf * torch.cat([b, b])).sum().backward()
    assert leaf.grad.tolist() == [1., 2., 1., 2.]


def test_a_leaf_has_one_accumulate_grad_node_while_the_graph_lives():
    a = torch.tensor([1., 2.], requires_grad=True)
    y1, y2 = a * 2, a * 3
    acc = y1.grad_fn.next_functions[0][0]
    assert acc is y2.grad_fn.next_functions[0][0] and acc.variable is a
    assert type(acc).__name__ == "AccumulateGrad"


def test_is_leaf_and_requires_grad_contagion():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.])
    assert a.is_leaf and b.is_leaf and a.grad_fn is None and b.grad_fn is None
    assert not b.requires_grad
    for t in (a * b, b * a, a + 1, (a * b).sum(), a[0], torch.stack([a, b])):
        assert t.requires_grad and not t.is_leaf and t.grad_fn is not None
    for t in (b * 2, b + b, b.sum(), a.detach() * b):
        assert not t.requires_grad and t.is_leaf and t.grad_fn is None


def test_requires_grad_setter_and_requires_grad_():
    t = torch.zeros(3, 3)
    t.requires_grad = True
    assert t.requires_grad and t.is_leaf
    u = torch.ones(2)
    assert u.requires_grad_() is u and u.requires_grad
    assert u.requires_grad_(False) is u and not u.requires_grad
    y = torch.tensor([1., 2.], requires_grad=True) * 2
    assert y.requires_grad_(True) is y
    message = ("you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
               "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
    raises(lambda: y.requires_grad_(False), message)

    def set_false():
        y.requires_grad = False

    raises(set_false, message)


@pytest.mark.parametrize("make, message", [
    (lambda: torch.tensor([1, 2], requires_grad=True), "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: torch.tensor([True], requires_grad=True), "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: torch.ones(2, dtype=torch.int64, requires_grad=True),
     "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: torch.arange(3, requires_grad=True), "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: torch.tensor([1, 2]).requires_grad_(), "only Tensors of floating point dtype can require gradients"),
])
def test_integer_tensors_cannot_require_grad(make, message):
    raises(make, message)


def test_setting_requires_grad_attribute_on_integer_tensor():
    def set_true():
        torch.tensor([1, 2]).requires_grad = True

    raises(set_true, "only Tensors of floating point and complex dtype can require gradients")


# ---- Tensor.backward ------------------------------------------------------------------
def test_seed_backward_values():
    x = torch.tensor(2.0, requires_grad=True)
    y = torch.tensor(3.0, requires_grad=True)
    out = (x * y + x) ** 2
    assert out.item() == 64.0
    out.backward()
    assert x.grad.item() == 64.0 and y.grad.item() == 32.0
    assert repr(x.grad) == "tensor(64.)" and x.grad.grad_fn is None and not x.grad.requires_grad


def test_backward_with_gradient_for_non_scalar():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 2
    raises(y.backward, NOT_SCALAR)
    y.backward(torch.ones_like(y))
    assert x.grad.tolist() == [2., 4., 6.]
    x.grad = None
    (x * 2).backward(gradient=torch.tensor([1., 10., 100.]))
    assert x.grad.tolist() == [2., 20., 200.]


def test_one_element_outputs_need_no_gradient():
    x = torch.tensor([1.], requires_grad=True)
    (x * 2).backward()
    assert x.grad.tolist() == [2.]
    x = torch.ones(1, 1, requires_grad=True)
    (x * 3).backward()
    assert x.grad.tolist() == [[3.]]


def test_backward_on_a_leaf():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.backward(torch.ones(2))
    assert x.grad.tolist() == [1., 1.]
    s = torch.tensor(5., requires_grad=True)
    s.backward()
    assert s.grad.item() == 1.


@pytest.mark.parametrize("gradient, out_shape", [
    (torch.ones(2), (3,)), (torch.ones(3), (2, 3)), (torch.ones(3, 2), (2, 3)), (torch.tensor([1.]), ()),
])
def test_gradient_shape_mismatch(gradient, out_shape):
    x = torch.ones(out_shape, requires_grad=True)
    y = x * 3
    shape = "torch.Size([" + ", ".join(map(str, out_shape)) + "])"
    raises(lambda: y.backward(gradient), f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape!r} and "
                                         f"output[0] has a shape of {shape}.")


def test_gradient_of_another_dtype_is_accepted_and_grad_keeps_the_leaf_dtype():
    x = torch.ones(2, 3, requires_grad=True)
    y = x * 2
    y.backward(torch.ones(2, 3, dtype=torch.float64), retain_graph=True)
    y.backward(torch.ones(2, 3, dtype=torch.int64))
    assert x.grad.dtype is torch.float32 and (x.grad.numpy() == 4.).all()


@pytest.mark.parametrize("make", [
    lambda x: (torch.tensor([1., 2.]) * 2).sum(), lambda x: x.argmax(), lambda x: (x > 1).sum(),
    lambda x: (x.detach() * 2).sum(), lambda x: x.sum().long(),
])
def test_backward_of_tensor_that_does_not_require_grad(make):
    x = torch.tensor([1., 2.], requires_grad=True)
    raises(make(x).backward, no_grad_fn())


def test_backward_retain_graph_and_accumulation():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x ** 2).sum()
    y.backward(retain_graph=True)
    assert x.grad.tolist() == [1., -2., 4.]
    y.backward()
    assert x.grad.tolist() == [2., -4., 8.]
    raises(y.backward, FREED)


def test_backward_inputs_restricts_accumulation():
    x = torch.tensor(1., requires_grad=True)
    z = torch.tensor(2., requires_grad=True)
    y = x * z
    y.backward(inputs=[x])
    assert x.grad.item() == 2. and z.grad is None
    y = x * z * z
    y.backward(inputs=z)
    assert x.grad.item() == 2. and z.grad.item() == 4.


def test_backward_inputs_may_be_a_non_leaf():
    x = torch.tensor(1., requires_grad=True)
    h = x * 3
    (h * h).backward(inputs=[h])
    assert h.grad.item() == 6. and x.grad is None


def test_autograd_backward_with_several_roots():
    w = torch.tensor([1., -1.], requires_grad=True)
    torch.autograd.backward([(w * 2).sum(), (w * 3).sum()])
    assert w.grad.tolist() == [5., 5.]
    torch.autograd.backward(w * 1, grad_tensors=torch.tensor([1., 10.]))
    assert w.grad.tolist() == [6., 15.]
    torch.autograd.backward([w * 1, w * 2], grad_tensors=[torch.tensor([1., 0.]), torch.tensor([0., 1.])])
    assert w.grad.tolist() == [7., 17.]
    raises(lambda: torch.autograd.backward([w.sum(), torch.tensor(1.)]), no_grad_fn(1))
    torch.autograd.backward(w.sum(), inputs=[w])
    assert w.grad.tolist() == [8., 18.]


def test_backward_inside_no_grad_still_works():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x * 2).sum()
    with torch.no_grad():
        y.backward()
    assert x.grad.tolist() == [2., 2.]


# ---- autograd.grad --------------------------------------------------------------------
def test_grad_returns_a_tuple_and_leaves_dot_grad_alone():
    a = torch.tensor([1., 2.], requires_grad=True)
    (g,) = torch.autograd.grad((a * a).sum(), a)
    assert g.tolist() == [2., 4.] and a.grad is None and not g.requires_grad
    assert isinstance(torch.autograd.grad((a * 2).sum(), [a]), tuple)


def test_grad_of_several_outputs_and_inputs():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    (g,) = torch.autograd.grad([(a * 2).sum(), (a * a).sum()], [a])
    assert g.tolist() == [4., 6.]
    ga, gb = torch.autograd.grad(a * b, [a, b], grad_outputs=torch.tensor([1., -1.]))
    assert ga.tolist() == [3., -4.] and gb.tolist() == [1., -2.]
    ga, gb = torch.autograd.grad([a.sum(), b.sum()], (a, b), grad_outputs=[torch.tensor(2.), None])
    assert ga.tolist() == [2., 2.] and gb.tolist() == [1., 1.]


def test_grad_retain_graph():
    a = torch.tensor(2., requires_grad=True)
    y = a ** 3
    assert torch.autograd.grad(y, a, retain_graph=True)[0].item() == 12.
    assert torch.autograd.grad(y, a)[0].item() == 12.
    raises(lambda: torch.autograd.grad(y, a), FREED)


def test_grad_with_respect_to_a_non_leaf():
    x = torch.tensor(2., requires_grad=True)
    h = x * 3
    (g,) = torch.autograd.grad(h * h, h)
    assert g.item() == 12.


def test_grad_unused_inputs():
    x = torch.tensor(1., requires_grad=True)
    z = torch.tensor(2., requires_grad=True)
    raises(lambda: torch.autograd.grad(x * 2, [x, z]), "The differentiated Tensor at index 1 appears to not have been "
                                                     "used in the graph. Set allow_unused=True if this is the "
                                                     "desired behavior.")
    raises(lambda: torch.autograd.grad(x * 2, [z, x]), "The differentiated Tensor at index 0 appears to not have been "
                                                     "used in the graph. Set allow_unused=True if this is the "
                                                     "desired behavior.")
    gx, gz = torch.autograd.grad(x * 2, [x, z], allow_unused=True)
    assert gx.item() == 2. and gz is None
    gx, gz = torch.autograd.grad(x * 2, [x, z], allow_unused=True, materialize_grads=True)
    assert gz.item() == 0. and gz.shape == ()


def test_grad_errors():
    x = torch.tensor(1., requires_grad=True)
    w = torch.tensor(3.)
    raises(lambda: torch.autograd.grad(x * w, [x, w]), "One of the differentiated Tensors does not require grad")
    raises(lambda: torch.autograd.grad(torch.tensor(2.), [x]), no_grad_fn())
    v = torch.tensor([1., 2.], requires_grad=True)
    raises(lambda: torch.autograd.grad(v * 2, v), NOT_SCALAR)


# ---- higher order ---------------------------------------------------------------------
def test_second_and_third_derivatives():
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 3
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert g.item() == 27. and g.requires_grad and type(g.grad_fn).__name__ == "MulBackward0"
    (g2,) = torch.autograd.grad(g, x, create_graph=True)
    assert g2.item() == 18. and g2.requires_grad
    (g3,) = torch.autograd.grad(g2, x)
    assert g3.item() == 6. and not g3.requires_grad


def test_higher_order_of_a_composite_function():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x.sin() * x.exp()).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = torch.autograd.grad(h.sum(), x)
    xs = np.array([0.5, 1.0])
    e, s, c = np.exp(xs), np.sin(xs), np.cos(xs)
    np.testing.assert_allclose(g.detach().numpy(), e * (s + c))
    np.testing.assert_allclose(h.detach().numpy(), 2 * e * c)
    np.testing.assert_allclose(t.numpy(), 2 * e * (c - s))


def test_mixed_second_derivatives():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    ga, gb = torch.autograd.grad((a * a * b).sum(), (a, b), create_graph=True)
    assert ga.tolist() == [6., 16.] and gb.tolist() == [1., 4.]
    (ga * gb).sum().backward()
    assert a.grad.tolist() == [18., 96.] and b.grad.tolist() == [2., 16.]


def test_backward_create_graph_makes_grad_differentiable_and_warns():
    x = torch.tensor(2., requires_grad=True)
    y = x.tanh() * x
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        y.backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    gx = x.grad
    x.grad = None
    gx.backward()
    t = math.tanh(2.)
    assert x.grad.item() == pytest.approx(2 * (1 - t * t) * (1 - 2 * t), rel=1e-5)


def test_hessian_vector_product_through_grad_outputs():
    x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    v = torch.tensor([1., 0., -1.], dtype=torch.float64)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v)
    assert hv.tolist() == [6., 0., -18.]


# ---- seeds: leaf / non-leaf and detach patterns -----------------------------------------
def test_seed_leaf_used_on_two_paths():
    x = torch.tensor([2.0], requires_grad=True)
    y = 2 * x + 5.0
    L = y + x
    L.backward()
    assert x.grad.tolist() == [3.]


def test_seed_straight_through_and_stop_gradient():
    y_soft = torch.tensor([0.2, 0.7, 0.55], requires_grad=True)
    y_hard = y_soft.detach() + (y_soft.round() - y_soft).detach()
    assert y_hard.tolist() == [0., 1., 1.] and not y_hard.requires_grad
    y_st = y_soft + (y_soft.round() - y_soft).detach()
    y_st.sum().backward()
    assert y_soft.grad.tolist() == [1., 1., 1.]
    x = torch.randn(5, requires_grad=True)
    w = (x * 2).sum().detach() + 1
    raises(w.backward, no_grad_fn())


def test_seed_ten_minus_d_graph():
    a, w1, w2, w3, w4 = (torch.randn((3, 3), requires_grad=True) for _ in range(5))
    d = w3 * (w1 * a) + w4 * (w2 * a)
    L = 10 - d
    assert a.grad_fn is None and type(d.grad_fn).__name__ == "AddBackward0"
    assert type(L.grad_fn).__name__ == "RsubBackward1"
    raises(L.backward, NOT_SCALAR)
    (10 - d).sum().backward()
    expected = -(w3 * w1 + w4 * w2).detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(w1.grad.numpy(), -(w3 * a).detach().numpy(), rtol=1e-6)


# ---- torch.autograd.functional: the products agree with each other and with central differences --------------

def _central_jacobian(f, x, eps=1e-6):
    """d f / d x by central differences, shaped f(x).shape + x.shape (float64)."""
    base = x.detach().numpy()
    columns = []
    for k in range(base.size):
        step = np.zeros(base.size)
        step[k] = eps
        step = step.reshape(base.shape)
        plus = f(torch.tensor(base + step)).detach().numpy()
        minus = f(torch.tensor(base - step)).detach().numpy()
        columns.append((plus - minus) / (2 * eps))
    out_shape = columns[0].shape
    return np.stack(columns, axis=-1).reshape(out_shape + base.shape)


def _mixed(x):
    return (x.tanh() * x.sum() + x.exp()).reshape(3, 2)[:, 0] ** 2


def test_functional_jacobian_matches_central_differences():
    x = torch.tensor(np.random.default_rng(0).normal(size=(2, 3)))
    jac = torch.autograd.functional.jacobian(_mixed, x)
    assert jac.shape == (3, 2, 3)
    np.testing.assert_allclose(jac.numpy(), _central_jacobian(_mixed, x), rtol=1e-6, atol=1e-8)


def test_functional_products_are_the_jacobian_and_hessian_applied():
    from chibigrad.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.normal(size=(2, 3)))
    v_in, v_out = torch.tensor(rng.normal(size=(2, 3))), torch.tensor(rng.normal(size=3))
    jac = jacobian(_mixed, x).numpy().reshape(3, 6)
    np.testing.assert_allclose(vjp(_mixed, x, v_out)[1].numpy().ravel(), v_out.numpy() @ jac, rtol=1e-10)
    np.testing.assert_allclose(jvp(_mixed, x, v_in)[1].numpy(), jac @ v_in.numpy().ravel(), rtol=1e-10)

    def scalar(x):
        return _mixed(x).sum()
    h = hessian(scalar, x).numpy().reshape(6, 6)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, _central_jacobian(lambda t: jacobian(scalar, t), x).reshape(6, 6), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(hvp(scalar, x, v_in)[1].numpy().ravel(), h @ v_in.numpy().ravel(), rtol=1e-10)
    np.testing.assert_allclose(vhp(scalar, x, v_in)[1].numpy().ravel(), v_in.numpy().ravel() @ h, rtol=1e-10)


def test_functional_leaves_the_callers_tensors_alone():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    out, grad = torch.autograd.functional.vjp(lambda t: (t * w).sum(), x)
    assert x.grad is None and w.grad is None and not out.requires_grad and not grad.requires_grad
    assert grad.tolist() == [3.0, 4.0]
    (g,) = torch.autograd.grad(torch.autograd.functional.jacobian(lambda t: t * t, x, create_graph=True).sum(), x)
    assert g.tolist() == [2.0, 2.0]


def test_profiler_times_ops_nodes_and_named_blocks_and_restores_apply():
    from chibigrad.autograd.profiler import profile, record_function
    plain_apply = torch.autograd.Function.__dict__["apply"]
    w = torch.randn(3, 4, requires_grad=True)

    @record_function("loss")
    def loss_of(x):
        return (x @ w).tanh().sum()

    with profile() as prof:
        with record_function("step"):
            loss_of(torch.randn(2, 3)).backward()
    averages = {e.name: e for e in prof.key_averages()}
    assert {"step", "loss", "Mm", "Tanh", "SumAll", "MmBackward0", "TanhBackward0", "SumBackward0"} <= set(averages)
    # Mm twice: the forward and MmBackward0's product for w (PyTorch's aten::mm count is 2 as well)
    assert averages["Mm"].count == 2 and averages["step"].count == 1
    assert all(0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9 for e in averages.values())
    step = averages["step"]
    assert step.cpu_time_total >= averages["loss"].cpu_time_total + averages["MmBackward0"].cpu_time_total
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    assert table.splitlines()[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU",
                                             "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert len(table.splitlines()) == 3 + 3 + 2 and "Self CPU time total:" in table
    assert torch.autograd.Function.__dict__["apply"] is plain_apply
    with pytest.raises(ZeroDivisionError):
        with profile():
            1 / 0
    assert torch.autograd.Function.__dict__["apply"] is plain_apply
    with pytest.raises(AttributeError, match="sorts by one of"):
        prof.key_averages().table(sort_by="self_cuda_time_total")


def test_torch_func_agrees_with_autograd_functional_and_composes():
    from chibigrad import func
    x = torch.tensor(np.random.default_rng(3).normal(size=4))

    def f(t):
        return (t.tanh() * t.exp()).sum() + t.prod()

    h_func, h_functional = func.hessian(f)(x), torch.autograd.functional.hessian(f, x)
    np.testing.assert_allclose(h_func.numpy(), h_functional.numpy(), rtol=1e-12)
    np.testing.assert_allclose(func.jacrev(func.grad(f))(x).numpy(), h_functional.numpy(), rtol=1e-12)
    third = func.grad(lambda t: func.grad(lambda u: func.grad(lambda v: (v ** 4).sum())(u).sum())(t).sum())(x)
    np.testing.assert_allclose(third.numpy(), 24 * x.numpy(), rtol=1e-12)
    assert not third.requires_grad and x.grad is None
