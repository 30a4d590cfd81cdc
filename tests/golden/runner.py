"""Run one golden program and print what it shows, normalised for comparison.

    python tests/golden/runner.py [--chibigrad] [--json] PROGRAM.py ...

The same runner records PyTorch's output (``scripts/record_goldens.py``, run
with a Python that has torch) and checks chibigrad's (``tests/test_golden.py``,
with ``--chibigrad``, which makes ``import torch`` load chibigrad). Warnings
are printed where they are raised, as ``[warning] Category: text``; an
exception that escapes the program ends it with ``[raises] Type: text``.
Memory addresses become ``0xADDR``. With ``--json`` the outputs of several
programs (each run in a fresh namespace) are printed as one JSON object
``{name: output}``, so one interpreter serves the whole golden suite.
"""
import importlib
import io
import json
import os
import re
import sys
import traceback
import warnings

# torch module name -> chibigrad module name, for ``--chibigrad``. A program that imports a torch
# submodule missing here (``from torch.autograd.function import once_differentiable``) would load a
# second copy of chibigrad's file under the torch name, whose relative imports then go wrong.
ALIASES = {
    "torch": "chibigrad",
    "torch.autograd": "chibigrad.autograd",
    "torch.autograd.forward_ad": "chibigrad.autograd.forward_ad",
    "torch.autograd.function": "chibigrad.autograd.function",
    "torch.autograd.functional": "chibigrad.autograd.functional",
    "torch.autograd.graph": "chibigrad.autograd.graph",
    "torch.distributions": "chibigrad.distributions",
    "torch.distributions.bernoulli": "chibigrad.distributions.bernoulli",
    "torch.distributions.categorical": "chibigrad.distributions.categorical",
    "torch.distributions.constraints": "chibigrad.distributions.constraints",
    "torch.distributions.kl": "chibigrad.distributions.kl",
    "torch.distributions.normal": "chibigrad.distributions.normal",
    "torch.distributions.uniform": "chibigrad.distributions.uniform",
    "torch.func": "chibigrad.func",
    "torch.linalg": "chibigrad.linalg",
    "torch.nn": "chibigrad.nn",
    "torch.nn.functional": "chibigrad.nn.functional",
    "torch.nn.init": "chibigrad.nn.init",
    "torch.nn.utils": "chibigrad.nn.utils",
    "torch.optim": "chibigrad.optim",
    "torch.optim.lr_scheduler": "chibigrad.optim.lr_scheduler",
    "torch.utils": "chibigrad.utils",
    "torch.utils.checkpoint": "chibigrad.utils.checkpoint",
    "torch.utils.data": "chibigrad.utils.data",
    "torch.utils.hooks": "chibigrad.utils.hooks",
}

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def normalise(text):
    """Addresses vary run to run; everything else must match exactly."""
    return _ADDRESS.sub("0xADDR", text)


def alias_chibigrad_as_torch():
    """Point ``torch`` and its submodules at chibigrad's (those that exist)."""
    for torch_name, chibi_name in ALIASES.items():
        try:
            module = importlib.import_module(chibi_name)
        except ImportError:
            continue
        sys.modules[torch_name] = module
        parent, _, child = torch_name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"[warning] {category.__name__}: {message}")


def forget_warnings_once():
    """PyTorch's once-per-process warnings (TORCH_WARN_ONCE) show in every program recorded, since each
    is recorded in its own process; chibigrad's programs share one (``--json``), so its once-only
    state is reset before each."""
    chibigrad = sys.modules.get("chibigrad")
    if chibigrad is not None:
        chibigrad.autograd._create_graph_warned = False
        chibigrad.ops._util._warned_once.clear()


def reset_defaults():
    """A program may change the default dtype (a Gaussian process in float64); the next one, in its own
    process under PyTorch, starts from float32."""
    chibigrad = sys.modules.get("chibigrad")
    if chibigrad is not None:
        chibigrad.set_default_dtype(chibigrad.float32)


def run(path):
    """Execute the program at ``path``; return its normalised output."""
    forget_warnings_once()
    reset_defaults()
    out = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = _show_warning
            with open(path) as f:
                code = compile(f.read(), path, "exec")
            try:
                exec(code, {"__name__": "__main__", "__file__": path})
            except Exception as err:  # the program's own uncaught error is part of its output
                print(f"[raises] {type(err).__name__}: {err}")
    finally:
        sys.stdout = real_stdout
    return normalise(out.getvalue())


def main(argv):
    if "--chibigrad" in argv:
        alias_chibigrad_as_torch()
    paths = [a for a in argv if not a.startswith("--")]
    if "--json" in argv:
        outputs = {os.path.splitext(os.path.basename(p))[0]: run(p) for p in paths}
        sys.stdout.write(json.dumps(outputs))
    else:
        sys.stdout.write("".join(run(p) for p in paths))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception:
        traceback.print_exc()
        sys.exit(2)
