"""autograd.Function: the mechanism custom operations (and chibigrad's own ops) use.

Expected values and messages were checked against PyTorch 2.13.
"""
import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import Function, gradcheck
from chibigrad.autograd.function import once_differentiable
from chibigrad.autograd.node import FREED_MESSAGE


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class ExpSavingOutput(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class MySiLU(Function):
    """The seeds' SiLU (Swish): x * sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        sigmoid_x = torch.sigmoid(x)
        ctx.save_for_backward(x, sigmoid_x)
        return x * sigmoid_x

    @staticmethod
    def backward(ctx, grad_output):
        x, sigmoid_x = ctx.saved_tensors
        return grad_output * (sigmoid_x * (1 + x * (1 - sigmoid_x)))


def modified_message(what):
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version 1; expected version 0 instead. Hint: enable anomaly detection to find the "
            "operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
            "check_nan=False).")


# ---- save_for_backward / saved_tensors -----------------------------------------------------------

def test_saved_tensors_give_back_what_forward_saved():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = Square.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved is x
    y.sum().backward()
    assert x.grad.tolist() == [2., 4., 6.]


def test_saved_tensors_are_freed_after_backward():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError) as err:
        y.grad_fn.saved_tensors
    assert str(err.value) == FREED_MESSAGE
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    assert str(err.value) == FREED_MESSAGE


def test_saved_tensors_are_kept_with_retain_graph():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = Square.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [4., 8., 12.]


def test_saved_tensor_release_is_visible_in_saved_tensors_info():
    x = torch.ones(4, dtype=torch.float64, requires_grad=True)
    y = Square.apply(x)
    assert y.grad_fn.saved_tensors_info == [((4,), torch.float64, 32, False)]
    y.sum().backward()
    assert [info[3] for info in y.grad_fn.saved_tensors_info] == [True]


def test_saved_leaf_modified_in_place_is_detected():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = Square.apply(x)
    with torch.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    assert str(err.value) == modified_message("[torch.FloatTensor [3]]")


def test_saved_non_leaf_modified_in_place_is_detected():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    a = x * 1
    y = Square.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    assert str(err.value) == modified_message("[torch.FloatTensor [3]], which is output 0 of Add,")


def test_saved_output_modified_in_place_names_the_function():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = ExpSavingOutput.apply(x)
    with torch.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    assert str(err.value) == modified_message("[torch.FloatTensor [3]], which is output 0 of ExpSavingOutput,")


def test_saved_output_comes_back_with_its_grad_fn():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = ExpSavingOutput.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved.grad_fn is y.grad_fn and saved.requires_grad
    assert saved is not y  # PyTorch also unpacks a new tensor object
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.exp([1., 2., 3.]))


def test_saving_none_gives_none_back():
    class SavesNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            nothing, x = ctx.saved_tensors
            assert nothing is None
            return grad * 2

    x = torch.ones(2, requires_grad=True)
    SavesNone.apply(x).sum().backward()
    assert x.grad.tolist() == [2., 2.]


# ---- ctx flags --------------------------------------------------------------------------------

def test_needs_input_grad_has_one_flag_per_argument():
    class Probe(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.seen_in_forward = ctx.needs_input_grad
            return a * k + b

        @staticmethod
        def backward(ctx, grad):
            return grad * 3, None, grad

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2)
    y = Probe.apply(a, 3, b)
    assert y.grad_fn.seen_in_forward == (True, False, False)
    assert y.grad_fn.needs_input_grad == (True, False, False)
    y.sum().backward()
    assert a.grad.tolist() == [3., 3.] and b.grad is None


class SortWithIndices(Function):
    """Two outputs; the indices are marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        order = np.argsort(x.detach().numpy(), kind="stable")
        indices = torch.from_numpy(order)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return x[indices], indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        ctx.grad_indices_seen = grad_indices
        (indices,) = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad[indices] = grad_values
        return grad


def test_mark_non_differentiable_output_needs_no_grad():
    x = torch.tensor([3., 1., 2.], requires_grad=True)
    values, indices = SortWithIndices.apply(x)
    assert values.tolist() == [1., 2., 3.] and indices.tolist() == [1, 2, 0]
    assert values.grad_fn.name() == "SortWithIndicesBackward"
    assert not indices.requires_grad and indices.grad_fn is None
    (values * torch.tensor([1., 10., 100.])).sum().backward()
    assert x.grad.tolist() == [100., 1., 10.]
    # the non-differentiable output's gradient is materialized as zeros of its dtype
    assert values.grad_fn.grad_indices_seen.tolist() == [0, 0, 0]
    assert values.grad_fn.grad_indices_seen.dtype == torch.int64


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_mark_dirty_rebases_the_modified_input():
    a = torch.tensor([1., 2.], requires_grad=True)
    x = a * 1
    y = AddOneInPlace.apply(x)
    assert y is x
    assert x.grad_fn.name() == "AddOneInPlaceBackward"
    assert x._version == 2  # one bump from add_ in forward, one from mark_dirty, as in PyTorch
    assert x.tolist() == [2., 3.]
    (y * 2).sum().backward()
    assert a.grad.tolist() == [2., 2.]


class DoubleSecondInPlace(Function):
    @staticmethod
    def forward(ctx, s, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return None, grad * 2


def test_a_custom_function_that_changes_a_view_rewrites_the_base_history():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    x = a * 2
    v = x[1:]
    assert AddOneInPlace.apply(v) is v
    assert (type(x.grad_fn).__name__, type(v.grad_fn).__name__) == ("CopySlices", "AsStridedBackward0")
    (x * x).sum().backward()
    assert a.grad.tolist() == [8., 20., 28.]  # torch 2.13 gives the same


def test_a_custom_function_that_changes_a_view_given_second_is_refused():
    # PyTorch reads the Function's first input as the view and gets a0's gradient wrong (0, not 2)
    x = torch.tensor([1., 2., 3.], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only when the view is the Function's first argument"):
        DoubleSecondInPlace.apply(torch.ones(1), x[1:])


def test_mark_dirty_on_a_leaf_that_requires_grad_raises():
    a = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad (has been|is being) used in an "
                                           "in-place operation.$"):
        AddOneInPlace.apply(a)  # PyTorch says "has been used" here, "is being used" for x.add_(1)


def test_mark_dirty_without_grad_still_counts_as_modified():
    a = torch.tensor([1., 2.])
    y = AddOneInPlace.apply(a)
    assert y.tolist() == [2., 3.] and a._version == 2 and y.grad_fn is None


class TwoOutputs(Function):
    materialize = True

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(TwoOutputs.materialize)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        ctx.received = (grad_a, grad_b)
        total = 0
        if grad_a is not None:
            total = total + grad_a * 2
        if grad_b is not None:
            total = total + grad_b * 3
        return total


def test_several_outputs_share_one_node():
    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    assert a.grad_fn is b.grad_fn
    assert type(a.grad_fn).__name__ == "TwoOutputsBackward"
    assert (a.output_nr, b.output_nr) == (0, 1)
    (a.sum() + b.sum()).backward()
    assert x.grad.tolist() == [5., 5.]


def test_unused_output_gets_zeros_by_default():
    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    b.sum().backward()
    grad_a, grad_b = a.grad_fn.received
    assert grad_a.tolist() == [0., 0.] and grad_b.tolist() == [1., 1.]
    assert x.grad.tolist() == [3., 3.]


def test_set_materialize_grads_false_gives_none(monkeypatch):
    monkeypatch.setattr(TwoOutputs, "materialize", False)
    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = TwoOutputs.apply(x)
    a.sum().backward()
    grad_a, grad_b = a.grad_fn.received
    assert grad_a.tolist() == [1., 1.] and grad_b is None
    assert x.grad.tolist() == [2., 2.]


def test_attributes_on_ctx_reach_backward():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = torch.tensor([1., 2.], requires_grad=True)
    y = Scale.apply(x, 5.0)
    assert y.grad_fn.k == 5.0
    y.sum().backward()
    assert x.grad.tolist() == [5., 5.]


def test_non_tensor_arguments_get_none_and_no_edge():
    class Mixed(Function):
        @staticmethod
        def forward(ctx, x, n, name, items):
            return x * n

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, None, None, None

    x = torch.tensor([1., 2.], requires_grad=True)
    y = Mixed.apply(x, 2, "name", [1])
    assert y.grad_fn.needs_input_grad == (True, False, False, False)
    assert len(y.grad_fn.next_functions) == 1  # an edge per tensor argument only, as in PyTorch
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert x.grad.tolist() == [2., 2.]


def test_gradient_for_non_tensor_argument_raises():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    a = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        Wrong.apply(a, 3.0).sum().backward()
    assert str(err.value) == ("function WrongBackward returned a gradient different than None at position 2, but "
                              "the corresponding forward input was not a Variable")


# ---- what backward returns --------------------------------------------------------------------

class MulTwoArgs(Function):
    grads = None

    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad):
        return MulTwoArgs.grads(grad)


@pytest.mark.parametrize("grads, expected, got", [
    (lambda g: g, 2, 1),
    (lambda g: (g, g, g), 2, 3),
])
def test_wrong_number_of_gradients(monkeypatch, grads, expected, got):
    monkeypatch.setattr(MulTwoArgs, "grads", staticmethod(grads))
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        MulTwoArgs.apply(a, b).sum().backward()
    assert str(err.value) == (f"function MulTwoArgsBackward returned an incorrect number of gradients "
                              f"(expected {expected}, got {got})")


def test_extra_trailing_nones_are_allowed(monkeypatch):
    monkeypatch.setattr(MulTwoArgs, "grads", staticmethod(lambda g: (g * 2, g * 3, None, None)))
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    MulTwoArgs.apply(a, b).sum().backward()
    assert a.grad.tolist() == [2., 2.] and b.grad.tolist() == [3., 3.]


def test_gradient_of_wrong_shape_raises():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return torch.ones(5)

    a = torch.tensor([1., 2., 3.], requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        WrongShape.apply(a).sum().backward()
    assert str(err.value) == ("Function WrongShapeBackward returned an invalid gradient at index 0 - got [5] but "
                              "expected shape compatible with [3]")


def test_gradient_of_wrong_dtype_is_cast():
    class WrongDtype(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return (grad * 2).double()

    a = torch.tensor([1., 2.], requires_grad=True)
    WrongDtype.apply(a).sum().backward()
    assert a.grad.dtype == torch.float32 and a.grad.tolist() == [2., 2.]


# ---- the graph it builds ----------------------------------------------------------------------

def test_grad_fn_is_named_after_the_class():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = MySiLU.apply(x)
    assert type(y.grad_fn).__name__ == "MySiLUBackward"
    assert y.grad_fn.name() == "MySiLUBackward"
    assert repr(y) == "tensor([0.7311, 1.7616], grad_fn=<MySiLUBackward>)"
    ((node, nr),) = y.grad_fn.next_functions
    assert type(node).__name__ == "AccumulateGrad" and node.variable is x and nr == 0


def test_forward_runs_without_recording_and_backward_without_create_graph():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward"] = torch.is_grad_enabled()
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = torch.is_grad_enabled()
            return grad

    x = torch.tensor([1., 2.], requires_grad=True)
    Probe.apply(x).sum().backward()
    assert seen == {"forward": False, "backward": False}


def test_nothing_is_recorded_without_inputs_that_require_grad_or_under_no_grad():
    y = Square.apply(torch.tensor([1., 2.]))
    assert not y.requires_grad and y.grad_fn is None
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        y = Square.apply(x)
    assert not y.requires_grad and y.grad_fn is None


def test_forward_runs_without_grad_even_when_no_input_requires_grad():
    w = torch.ones(2, requires_grad=True)  # used inside forward, but not an input

    class UsesW(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.grad_enabled = torch.is_grad_enabled()
            return x * w

        @staticmethod
        def backward(ctx, grad):
            return grad

    y = UsesW.apply(torch.ones(2))
    assert not y.requires_grad and y.grad_fn is None  # PyTorch: forward never records


def test_function_returning_its_input_leaves_the_input_alone():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = torch.tensor([1., 2.], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [2., 2.]


def test_builtin_ops_are_functions_too():
    from chibigrad.ops import pointwise
    assert issubclass(pointwise.Mul, Function)
    x = torch.tensor([1., 2.], requires_grad=True)
    assert type((x * x).grad_fn) is pointwise.Mul._backward_cls


# ---- higher order -----------------------------------------------------------------------------

class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad  # differentiable ops: double backward works


def test_double_backward_through_a_function_with_differentiable_backward():
    x = torch.tensor([1., 2.], requires_grad=True)
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.tolist() == [3., 12.] and g.requires_grad
    (g2,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    assert g2.tolist() == [6., 12.]
    (g3,) = torch.autograd.grad(g2.sum(), x)
    assert g3.tolist() == [6., 6.]


def test_double_backward_through_backward_via_backward_create_graph():
    x = torch.tensor([2.], requires_grad=True)
    Cube.apply(x).sum().backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.sum().backward()
    assert x.grad.tolist() == [12.]


class OnceCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


def test_once_differentiable_runs_backward_without_a_graph():
    x = torch.tensor([1., 2.], requires_grad=True)
    (g,) = torch.autograd.grad(OnceCube.apply(x).sum(), x)
    assert g.tolist() == [3., 12.]
    (g,) = torch.autograd.grad(OnceCube.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad and g.grad_fn is None  # PyTorch 2.13 behaves the same
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        g.sum().backward()


# ---- the seeds' MySiLU ------------------------------------------------------------------------

def test_seed_mysilu_matches_the_builtin_formula_and_passes_gradcheck():
    torch.manual_seed(0)
    x = torch.randn(5, requires_grad=True)
    MySiLU.apply(x).sum().backward()
    s = torch.sigmoid(x.detach())
    assert torch.allclose(x.grad, s * (1 + x.detach() * (1 - s)))
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert gradcheck(MySiLU.apply, (x,), eps=1e-6)
    assert gradcheck(MySiLU.apply, (x,), eps=1e-6, atol=1e-4)


def test_gradcheck_catches_a_function_with_a_wrong_backward():
    class WrongSiLU(MySiLU):
        @staticmethod
        def backward(ctx, grad_output):
            x, sigmoid_x = ctx.saved_tensors
            return grad_output * sigmoid_x  # forgets the product rule

    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert gradcheck(WrongSiLU.apply, (x,), raise_exception=False) is False


# The usual case (one float tensor out, every argument a tensor that needs a gradient, nothing
# marked) with its corner cases: an input returned as is, the same input twice.

class SaveInputReturnIt(Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        ctx.unpacked = (x, w)
        return grad * w, grad * x


def test_short_path_input_returned_as_is_is_saved_as_the_input():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    y = SaveInputReturnIt.apply(x, w)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "SaveInputReturnItBackward"
    assert [n.variable for n, _ in y.grad_fn.next_functions] == [x, w]
    y.sum().backward()
    assert y.grad_fn.unpacked[0] is x and y.grad_fn.unpacked[1] is w
    assert x.grad.tolist() == [3., 4.] and w.grad.tolist() == [1., 2.]


def test_short_path_same_input_twice():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = SaveInputReturnIt.apply(x, x)
    assert y is not x and y.grad_fn.next_functions[0] == y.grad_fn.next_functions[1]
    y.sum().backward()
    assert x.grad.tolist() == [2., 4.]


class ExpSavingOutput(Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        ctx.unpacked_grad_fn = out.grad_fn
        return grad * out


def test_short_path_saved_output_unpacks_with_the_node_as_grad_fn():
    x = torch.tensor([0., 1.], requires_grad=True)
    y = ExpSavingOutput.apply(x)
    assert y.grad_fn._saved[0]._tensor is None  # kept as its array: no cycle y -> grad_fn -> y
    y.sum().backward(retain_graph=True)
    assert y.grad_fn.unpacked_grad_fn is y.grad_fn
    assert np.allclose(x.grad.numpy(), np.exp([0., 1.]))


def test_integer_output_of_inputs_that_need_grad_is_not_recorded():
    class ArgMax(Function):
        @staticmethod
        def forward(ctx, x):
            return torch.tensor(int(np.argmax(x.detach().numpy())))

        @staticmethod
        def backward(ctx, grad):
            return None

    x = torch.tensor([1., 3., 2.], requires_grad=True)
    i = ArgMax.apply(x)
    assert i.item() == 1 and not i.requires_grad and i.grad_fn is None


def test_custom_function_node_repr_matches_pytorch():
    """PyTorch: <torch.autograd.function.MySiLUBackward object at 0x...>; built-in nodes keep
    their bare name (<MulBackward0 object at 0x...>)."""
    import chibigrad as torch

    class MySiLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(2, requires_grad=True)
    y = MySiLU.apply(x)
    assert repr(y.grad_fn).startswith("<torch.autograd.function.MySiLUBackward object at 0x")
    assert y.grad_fn.name() == "MySiLUBackward" and "grad_fn=<MySiLUBackward>" in repr(y)
    assert repr((x * x).grad_fn).startswith("<MulBackward0 object at 0x")


def test_once_differentiable_errors_only_when_the_grad_output_has_a_graph():
    """As in PyTorch 2.13: through an Error node when the grad_output requires grad;
    otherwise the term is silently constant (no error, missing from the second derivative)."""
    import pytest

    import chibigrad as torch
    from chibigrad.autograd import once_differentiable

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(Cube.apply(x).sum() + (x ** 3).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]  # the Cube term is missing, as in PyTorch
    (g,) = torch.autograd.grad((Cube.apply(x) ** 2).sum(), x, create_graph=True)
    assert repr(g.grad_fn).startswith("<Error object at 0x")
    with pytest.raises(RuntimeError, match="^trying to differentiate twice a function that was marked "
                                           "with @once_differentiable$"):
        g.sum().backward()
