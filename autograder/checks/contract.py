"""What every ``Function`` an exercise writes owes the engine, checked the same way in each assignment.

- ``backward`` returns one gradient per argument of ``forward`` (``None`` for one that needs none), each of
  its input's shape: ``raw_backward`` reads what it returned, before the engine counts and sums it.
- The tensors ``backward`` needs are kept with ``ctx.save_for_backward``, so that backward frees them
  (``expect_freed``: a second backward raises the engine's error) and the engine notices an input changed
  in place after forward (``expect_version_checked``: backward raises instead of using the new values).
  Attributes of ``ctx`` get neither.

The messages stay each exercise's own: they tell the student what to change in that exercise's terms.
"""
import chibigrad as torch
from chibigrad.autograd.node import FREED_MESSAGE

from . import call, expect

INPLACE_MESSAGE = "modified by an inplace operation"  # part of the engine's error for a saved tensor changed in place


def raw_backward(what, out, grad=None):
    """What ``out``'s backward returned for ``grad`` (ones by default), as a tuple: a single gradient is a
    tuple of one, as the engine reads it. ``what`` names the call in a failure."""
    grad = torch.ones_like(out) if grad is None else grad
    raw = call(what, out.grad_fn.apply, grad)
    return raw if isinstance(raw, tuple) else (raw,)


def expect_freed(what, backward, worked, raised=None):
    """``backward()`` goes through a graph a first backward freed: it must raise the engine's 'Trying to backward
    through the graph a second time' error. ``worked``: the message if it ran (the Function kept what backward
    needs where the engine cannot free it); ``raised(err)``: the message if it raised another error (by default
    ``what``, the error and the one expected)."""
    raised = raised or (lambda err: f"{what}: a second backward raised {err!r}, expected the engine's 'Trying to "
                                    "backward through the graph a second time' error")
    _expect_error(backward, lambda err: str(err) == FREED_MESSAGE, worked, raised)


def expect_version_checked(what, backward, worked, raised=None):
    """``backward()`` runs after a tensor the graph saved was changed in place: it must raise the engine's
    'modified by an inplace operation' error. ``worked``: the message if it ran (on the changed values);
    ``raised(err)``: the message if it raised another error (by default ``what``, the error and the one
    expected)."""
    raised = raised or (lambda err: f"{what}: backward after an in-place change of an input raised {err!r}, "
                                    f"expected the '{INPLACE_MESSAGE}' error")
    _expect_error(backward, lambda err: INPLACE_MESSAGE in str(err), worked, raised)


def _expect_error(backward, matches, worked, raised):
    try:
        backward()
    except RuntimeError as err:
        expect(matches(err), raised(err))
    else:
        raise AssertionError(worked)
