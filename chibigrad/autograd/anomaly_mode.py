"""Anomaly detection: name the forward operation behind a failing backward.

When enabled, every node remembers the stack where its forward ran. If the
node's backward raises, a warning shows that stack; if it returns NaN, the
error names the node, as ``torch.autograd.detect_anomaly`` does.
"""
import os
import threading
import traceback
import warnings

import numpy as np

class _State(threading.local):
    enabled = False
    check_nan = True


_state = _State()


def is_anomaly_enabled():
    return _state.enabled


class set_detect_anomaly:
    """Switch anomaly detection on or off; a call or a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (is_anomaly_enabled(), _state.check_nan)
        _state.enabled, _state.check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev


class detect_anomaly:
    """Context manager (and decorator) that enables anomaly detection."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (is_anomaly_enabled(), _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev

    def __call__(self, func):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def record_forward_stack(node):
    """Called when a node is created: keep the stack up to the user's line (chibigrad's frames dropped)."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    node.metadata["traceback_"] = traceback.format_list(frames)


def report_failure(node, err):
    """Backward of ``node`` raised: show where its forward was called."""
    stack = node.metadata.get("traceback_")
    if stack:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      + "".join(stack) + " (Triggered internally at "
                      "/__w/pytorch/pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)", stacklevel=2)


def check_nan(node, grads):
    """Raise if ``node`` returned NaN, naming it and where it was created."""
    if not _state.check_nan:
        return
    for i, g in enumerate(grads):
        if g is not None and np.isnan(g._array).any():
            report_failure(node, None)
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
