"""What ``torch.<name>`` says when chibigrad does not have it.

A program written for PyTorch that reaches a name chibigrad lacks gets an AttributeError
that says so and where to look, not Python's bare "has no attribute". Each torch-like
module sets ``__getattr__ = _missing.module_getattr(__name__, "torch.nn")``; Python calls
it only for names the module does not define.
"""
import sys

# Names this mechanism adds to a module; dir() leaves them out, as torch's modules have none.
_MACHINERY = {"__getattr__", "__dir__", "_missing"}


def module_getattr(module_name, torch_name):
    """The module's ``__getattr__``; also gives the module a ``__dir__`` without the machinery."""
    module = sys.modules[module_name]
    module.__dir__ = lambda: sorted(name for name in vars(module) if name not in _MACHINERY)

    def __getattr__(name):
        message = f"module {module_name!r} has no attribute {name!r}"
        if not name.startswith("__"):
            message += (f": chibigrad does not implement {torch_name}.{name}. What it covers is listed in the "
                        "table 'What chibigrad covers' in README.md")
        raise AttributeError(message)
    return __getattr__
