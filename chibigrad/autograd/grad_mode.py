"""Grad modes: whether operations are recorded into the graph.

The flag is thread-local, as in PyTorch, so a data-loading thread running
under ``no_grad`` does not switch recording off for the training thread.
"""
import functools
import threading

class _State(threading.local):
    enabled = True  # record operations?
    inference = False  # inside inference_mode?


_state = _State()


def is_grad_enabled():
    """True when new operations are recorded for backward."""
    return _state.enabled


def is_inference_mode_enabled():
    """True inside ``inference_mode``: new tensors become inference tensors."""
    return _state.inference


def _set_enabled(mode):
    _state.enabled = bool(mode)


class _DecoratorContextManager:
    """A context manager that can also decorate a function (as in PyTorch)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Do not record operations: results have no grad_fn and save nothing."""

    def __enter__(self):
        self.prev, _state.enabled = _state.enabled, False

    def __exit__(self, *exc):
        _state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Record operations again, e.g. inside a ``no_grad`` block."""

    def __enter__(self):
        self.prev, _state.enabled = _state.enabled, True

    def __exit__(self, *exc):
        _state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Switch recording on or off; works as a call and as a context manager."""

    def __init__(self, mode):
        self.prev, self.mode = _state.enabled, bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev

    def __call__(self, func):
        _set_enabled(self.prev)  # as a decorator it only switches while ``func`` runs, as in PyTorch
        return super().__call__(func)

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors made inside can never join a graph later."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (is_grad_enabled(), is_inference_mode_enabled())
        if self.mode:
            _set_enabled(False)
            _state.inference = True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
