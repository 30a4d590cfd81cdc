"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode,
is_grad_enabled -- as context managers, decorators and calls, thread-local."""
import threading

import pytest

import chibigrad as torch


@pytest.fixture(autouse=True)
def grad_mode_restored():
    yield
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()


def test_no_grad_records_nothing():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert y.tolist() == [2., 4.]
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        y.sum().backward()


def test_nested_modes():
    assert torch.is_grad_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            x = torch.ones(1, requires_grad=True) * 2
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled() and x.requires_grad


def test_set_grad_enabled_as_call_and_as_context():
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    with torch.no_grad():
        with torch.set_grad_enabled(True):
            assert torch.is_grad_enabled()
        assert not torch.is_grad_enabled()


def test_modes_are_restored_after_an_exception():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    with pytest.raises(ValueError):
        with torch.inference_mode():
            raise ValueError


def test_decorators():
    x = torch.ones(2, requires_grad=True)

    @torch.no_grad()
    def double(t):
        """Docstring kept."""
        return t * 2

    @torch.enable_grad()
    def triple(t):
        return t * 3

    @torch.set_grad_enabled(False)
    def quadruple(t):
        return t * 4

    assert torch.is_grad_enabled()  # set_grad_enabled(False) used as a decorator switches nothing off yet
    assert not double(x).requires_grad and double.__name__ == "double" and double.__doc__ == "Docstring kept."
    with torch.no_grad():
        assert triple(x).requires_grad
    assert not quadruple(x).requires_grad and torch.is_grad_enabled()


def test_decorator_applied_several_times_and_reentrant():
    @torch.no_grad()
    def inner(t):
        return t * 2

    @torch.no_grad()
    def outer(t):
        return inner(t) + inner(t)

    x = torch.ones(1, requires_grad=True)
    assert not outer(x).requires_grad and not inner(x).requires_grad
    assert (x * 2).requires_grad


def test_inference_mode():
    w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        t = torch.ones(2)
        u = w @ torch.ones(2)
    assert not torch.is_inference_mode_enabled()
    assert t.is_inference() and not t.requires_grad
    assert u.is_inference() and not u.requires_grad and u.grad_fn is None and u.tolist() == [-1., 3.5]
    assert not w.is_inference() and not torch.ones(1).is_inference()
    with torch.inference_mode(False):
        assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()


def test_inference_mode_decorator():
    @torch.inference_mode()
    def predict(t):
        return t * 2

    y = predict(torch.ones(2, requires_grad=True))
    assert y.is_inference() and not y.requires_grad


def test_inference_tensors_outside_inference_mode():
    with torch.inference_mode():
        t = torch.ones(2)
    w = torch.ones(2, requires_grad=True)
    (t + w).sum().backward()  # Add saves nothing: allowed
    assert w.grad.tolist() == [1., 1.]
    (t.clone() * w).sum().backward()
    assert w.grad.tolist() == [2., 2.]
    with pytest.raises(RuntimeError) as err:
        t.add_(1)
    assert str(err.value) == ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                              "a clone to get a normal tensor before doing inplace update.See "
                              "https://github.com/pytorch/rfcs/pull/17 for more details.")


def test_inference_tensor_cannot_be_saved_for_backward():
    with torch.inference_mode():
        t = torch.ones(2)
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        t * w
    assert str(err.value) == (
        "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
        "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and "
        "use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def test_no_grad_in_one_thread_does_not_affect_another():
    started, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with torch.no_grad():
            seen["worker"] = torch.is_grad_enabled()
            started.set()
            release.wait(5)
            seen["worker_after"] = torch.is_grad_enabled()

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(5)
    try:
        assert torch.is_grad_enabled()
        x = torch.ones(2, requires_grad=True)
        assert (x * 2).requires_grad
    finally:
        release.set()
        thread.join()
    assert seen == {"worker": False, "worker_after": False}


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with torch.no_grad():
        thread = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


def test_backward_in_a_thread_while_main_thread_is_in_no_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x * x).sum()
    with torch.no_grad():
        thread = threading.Thread(target=y.backward)
        thread.start()
        thread.join()
        assert not torch.is_grad_enabled()
    assert x.grad.tolist() == [2., 4.]


def test_no_grad_repr_names_pytorchs_class():
    assert repr(torch.no_grad()).startswith("<") and "no_grad object at 0x" in repr(torch.no_grad())
