"""torch.save and torch.load: tensors, and the dicts, lists and numbers state dicts are made of.

A saved file is a zip archive that anyone can unzip and read:

    data.json        the saved object's structure (see ``_encode``), with each tensor
                     replaced by {"tensor": n, ...}
    tensors/n.npy    tensor n's values, in numpy's .npy format (dtype, shape, data)
    objects/n.pkl    any other object (a whole nn.Module, say), pickled

Why not pickle everything, as PyTorch does? Unpickling runs code that the
file names, so a downloaded checkpoint could do anything. PyTorch now loads
with ``weights_only=True`` by default, which refuses such files; here the
JSON and .npy parts can never run code, and pickled objects are only
unpickled when the caller says ``weights_only=False`` (trusting the file).
"""
import collections
import io
import json
import os
import pickle
import zipfile

import numpy as np

from . import _device, _dtype
from .tensor import Tensor, wrap

_FORMAT = "chibigrad-save-1"


# ---- saving -------------------------------------------------------------------------
def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Write ``obj`` to ``f`` (a path or a binary file object).

    ``obj`` is typically a state dict (``model.state_dict()``,
    ``optimizer.state_dict()``) or a dict of them plus numbers such as the
    epoch. A tensor is saved once even if it appears twice, and loads as one
    object. (``pickle_module`` and the last two arguments are PyTorch's; the
    format here is fixed, so they are accepted and ignored.)
    """
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.path.abspath(f))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    saver = _Saver()
    structure = saver.encode(obj)
    with zipfile.ZipFile(f, "w") as archive:
        archive.writestr("data.json", json.dumps({"format": _FORMAT, "object": structure}, indent=1))
        for n, array in enumerate(saver.arrays):
            with archive.open(f"tensors/{n}.npy", "w") as out:
                np.lib.format.write_array(out, array, allow_pickle=False)
        for n, blob in enumerate(saver.pickles):
            archive.writestr(f"objects/{n}.pkl", blob)


class _Saver:
    """Turns an object into JSON-ready data, collecting tensor arrays and pickled objects on the side."""

    def __init__(self):
        self.arrays, self.pickles = [], []
        self.tensor_ids = {}  # id(tensor) -> its number, so a shared tensor is saved once

    def encode(self, obj):
        """JSON-ready data for ``obj``. JSON has numbers, strings, lists and dicts with string keys,
        so everything else becomes a one-key dict naming what it was: {"tuple": [...]}, ..."""
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, Tensor):
            return self.tensor(obj)
        if type(obj) is list:
            return [self.encode(x) for x in obj]
        if type(obj) is tuple:
            return {"tuple": [self.encode(x) for x in obj]}
        if type(obj) in (dict, collections.OrderedDict):  # keys may be ints (optimizer state) or tuples
            kind = "dict" if type(obj) is dict else "OrderedDict"
            return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, _dtype.Size):
            return {"Size": list(obj)}
        if isinstance(obj, _dtype.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, _device.device):
            return {"device": str(obj)}
        return self.pickled(obj)

    def tensor(self, t):
        """A reference to tensor ``t``'s array, with what the array does not say."""
        if id(t) not in self.tensor_ids:
            self.tensor_ids[id(t)] = len(self.arrays)
            self.arrays.append(_device.to_device(t._array, _device.cpu))
        return {"tensor": self.tensor_ids[id(t)], "requires_grad": t.requires_grad, "device": str(t.device),
                "parameter": type(t).__name__ == "Parameter"}

    def pickled(self, obj):
        """Any other object, pickled; the tensors inside it go to tensors/ like the others."""
        saver = self

        class TensorPickler(pickle.Pickler):
            def persistent_id(self, x):
                return saver.tensor(x) if isinstance(x, Tensor) else None

        buffer = io.BytesIO()
        TensorPickler(buffer, protocol=4).dump(obj)
        self.pickles.append(buffer.getvalue())
        cls = type(obj)
        return {"pickle": len(self.pickles) - 1, "class": f"{cls.__module__}.{cls.__qualname__}"}


# ---- loading ------------------------------------------------------------------------
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read back what ``save`` wrote to ``f``.

    Tensors come back as new leaf tensors with their dtype, shape, values and
    ``requires_grad`` (a saved Parameter as a Parameter), on the device they
    were saved from, or where ``map_location`` says ("cpu", a torch.device, a dict
    or a function: see ``_Loader.placed``).
    Pickled objects need ``weights_only=False``: only do that for files you trust.
    """
    weights_only = True if weights_only is None else weights_only
    if isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise FileNotFoundError(2, "No such file or directory", str(f))
    try:
        archive = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise RuntimeError("Invalid file: chibigrad's torch.load reads files written by chibigrad's torch.save "
                           "(a zip archive)") from None
    with archive:
        names = set(archive.namelist())
        if "data.json" not in names:
            saved_by = "PyTorch's torch.save" if any(n.endswith("data.pkl") for n in names) else "something else"
            raise RuntimeError(f"This file was written by {saved_by}: chibigrad reads only the files its own "
                               "torch.save writes (see chibigrad/serialization.py)")
        data = json.loads(archive.read("data.json"))
        loader = _Loader(archive, map_location, weights_only)
        return loader.decode(data["object"])


_DECODERS = {
    "tuple": lambda loader, items: tuple(loader.decode(x) for x in items),
    "dict": lambda loader, pairs: {loader.decode(k): loader.decode(v) for k, v in pairs},
    "OrderedDict": lambda loader, pairs: collections.OrderedDict((loader.decode(k), loader.decode(v))
                                                                 for k, v in pairs),
    "Size": lambda loader, sizes: _dtype.Size(sizes),
    "dtype": lambda loader, name: _dtype.from_numpy_dtype(np.dtype(name)),  # a name, never an attribute lookup
    "device": lambda loader, name: _device.device(name),
}


class _Loader:
    """The inverse of ``_Saver``: JSON data back to objects, reading arrays from the archive."""

    def __init__(self, archive, map_location, weights_only):
        self.archive, self.map_location, self.weights_only = archive, map_location, weights_only
        self.tensors = {}  # number -> the loaded Tensor, so a shared tensor stays one object

    def decode(self, data):
        if isinstance(data, list):
            return [self.decode(x) for x in data]
        if not isinstance(data, dict):
            return data  # None, a bool, a number or a string
        if "tensor" in data:
            return self.tensor(data)
        if "pickle" in data:
            return self.unpickle(data)
        (kind, payload), = data.items()
        return _DECODERS[kind](self, payload)

    def tensor(self, ref):
        n = ref["tensor"]
        if n not in self.tensors:
            with self.archive.open(f"tensors/{n}.npy") as f:
                array = np.lib.format.read_array(f, allow_pickle=False)
            t = self.placed(array, ref["device"])
            if ref["parameter"]:
                from .nn.parameter import Parameter
                t = Parameter(t, requires_grad=ref["requires_grad"])
            elif ref["requires_grad"]:
                t.requires_grad_(True)
            self.tensors[n] = t
        return self.tensors[n]

    def placed(self, array, saved_device):
        """A tensor of ``array`` on the device ``map_location`` chooses for one saved on ``saved_device``.

        ``map_location`` may be a device (or its name), a dict from saved device names
        to new ones (``{"cuda:0": "cpu"}``), or a function of (data, saved device name),
        as in ``lambda storage, loc: storage``; PyTorch passes it a storage, here a CPU tensor.
        """
        where = self.map_location
        if callable(where) and not isinstance(where, _device.device):
            result = where(wrap(array), saved_device)
            return result if isinstance(result, Tensor) else wrap(array)
        if isinstance(where, dict):
            where = where.get(saved_device, saved_device)
        target = _device.device(where or saved_device)
        if target.type == "cuda" and _device.cuda_backend() is None:
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        return wrap(_device.to_device(array, _device.as_device(target)))

    def unpickle(self, ref):
        if self.weights_only:
            raise pickle.UnpicklingError(_weights_only_message(ref["class"]))
        loader = self

        class TensorUnpickler(pickle.Unpickler):
            def persistent_load(self, pid):
                return loader.tensor(pid)

        with self.archive.open(f"objects/{ref['pickle']}.pkl") as f:
            return TensorUnpickler(f).load()


def _weights_only_message(cls):
    """PyTorch's message for a file that holds an object other than tensors and plain containers."""
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
        "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default "
        "value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
        "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only "
        "if you got the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
        "check the recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: "
        f"GLOBAL {cls} was not an allowed global by default. Please use `torch.serialization.add_safe_globals([{cls}])`"
        f" or the `torch.serialization.safe_globals([{cls}])` context manager to allowlist this global if you trust "
        "this class/function.\n\nCheck the documentation of torch.load to learn more about types accepted by default "
        "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
