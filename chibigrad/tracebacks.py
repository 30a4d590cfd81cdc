"""Tracebacks in Jupyter as a PyTorch user sees them: your own frames and the error.

PyTorch's internals are C++, so a traceback ends at the line of yours that called it.
chibigrad's internals are Python, and IPython would show every frame inside the package,
with the full path of the machine that ran it. ``install()`` (call it once, in a notebook's
first cell) makes IPython show what PyTorch would: frames inside chibigrad are dropped,
notebook cells are named ``Cell In[n]``, other paths are shortened, and the forward stack that
anomaly mode prints keeps only the notebook's frames. Nothing changes outside IPython.
"""
import os
import re
import sys
import types
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_PACKAGE_DIR) + os.sep  # the folder that holds chibigrad/
# Frames of the machinery that runs a notebook cell (not the reader's code).
_MACHINERY = re.compile(r"^<frozen |[\\/](IPython|ipykernel|tornado|asyncio|traitlets|jupyter_client|"
                        r"zmq|nbclient|jupyter_core)[\\/]|[\\/](ipykernel_launcher|runpy|threading)\.py$")


def is_internal(filename):
    """True for a file inside chibigrad (PyTorch's equivalent is C++, invisible in a traceback)."""
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def filter_traceback(tb):
    """The same traceback without chibigrad's frames (a new chain; ``tb`` is left as it was)."""
    frames = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    new = None
    for old in reversed(frames):
        new = types.TracebackType(new, old.tb_frame, old.tb_lasti, old.tb_lineno)
    return new


def _filter_chain(value, seen):
    """Filter the traceback of an exception and of those it was raised from or during."""
    if value is None or id(value) in seen:
        return
    seen.add(id(value))
    value.__traceback__ = filter_traceback(value.__traceback__)
    _filter_chain(value.__cause__, seen)
    _filter_chain(value.__context__, seen)


def shorten_paths(text):
    """Replace the build machine's folders in ``text``: cells become ``Cell In[n]``, the rest
    is cut to the path inside its package (``chibigrad/...``, ``numpy/...``) or to its name."""
    shell = _shell()
    if shell is not None:  # a cell's temporary file -> the name IPython gives it
        names = getattr(shell.compile, "_filename_map", {})
        for filename, count in names.items():
            text = text.replace(filename, f"Cell In[{count}]")
    text = text.replace(_ROOT, "")
    for prefix in sorted({p for p in sys.path if p and os.path.isabs(p)}, key=len, reverse=True):
        text = text.replace(prefix.rstrip(os.sep) + os.sep, "")
    return text


def keep_user_frames(lines):
    """From formatted stack entries (``traceback.format_list``), keep the reader's own."""
    return [line for line in lines
            if not _MACHINERY.search(line.split('"')[1] if line.count('"') >= 2 else "")]


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _show(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: the traceback without chibigrad's frames."""
    if isinstance(value, BaseException):
        _filter_chain(value, set())
        tb = value.__traceback__
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    shell._showtraceback(etype, value, [shorten_paths(s) for s in stb])


def _user_frame():
    """The innermost frame of the caller's own code (outside chibigrad and warnings)."""
    frame = sys._getframe(1)
    while frame is not None and (is_internal(frame.f_code.co_filename)
                                 or frame.f_code.co_filename == warnings.__file__):
        frame = frame.f_back
    return frame


def _format_warning(message, category, filename, lineno, line=None):
    """A warning's location and text without the build machine's paths: a warning raised
    inside chibigrad points at the reader's line that led to it; anomaly mode's forward
    stack keeps only the reader's frames."""
    if is_internal(filename):
        frame = _user_frame()
        if frame is not None:
            filename, lineno, line = frame.f_code.co_filename, frame.f_lineno, None
    text = str(message)
    marker = "Traceback of forward call that caused the error:\n"
    if marker in text:
        head, rest = text.split(marker, 1)
        stack, sep, tail = rest.partition(" (Triggered internally")
        entries = re.split(r"(?m)^(?=  File )", stack)
        text = head + marker + "".join(keep_user_frames([e for e in entries if e])) + sep + tail
    return shorten_paths(warnings.formatwarning(text, category, filename, lineno, line))


_installed = {}


def install(shell=None):
    """Show tracebacks and warnings in this IPython session as PyTorch users see them.

    Returns True if installed, False outside IPython. Calling it again changes nothing."""
    shell = shell or _shell()
    if shell is None:
        return False
    shell.set_custom_exc((Exception,), _show)
    if "showwarning" not in _installed:
        _installed["showwarning"] = warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            out = file if file is not None else sys.stderr
            try:
                out.write(_format_warning(message, category, filename, lineno, line))
            except OSError:
                pass
        warnings.showwarning = showwarning
    return True
