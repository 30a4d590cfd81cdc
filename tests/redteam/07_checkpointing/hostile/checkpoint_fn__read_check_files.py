# attack: read the hidden checks' source every way there is: inspect.getsource, open() on __file__, the
#   module loader's get_data/get_source, linecache, os.open + os.read, mmap, a symlink to the file, and
#   the cached .pyc in __pycache__; print what comes back, base64
# expect: 0 points for checkpoint_fn (no answer); every read refused, nothing of the checks in the
#   feedback; batch continues
import base64, importlib.util, inspect, linecache, mmap, os, sys

for _name, _mod in list(sys.modules.items()):
    if not _name.startswith("autograder"):
        continue
    _file = getattr(_mod, "__file__", None) or ""
    _pyc = importlib.util.cache_from_source(_file) if _file.endswith(".py") else ""
    _ways = {
        "getsource": lambda: inspect.getsource(_mod),
        "open": lambda: open(_file).read(),
        "loader.get_source": lambda: _mod.__loader__.get_source(_name),
        "loader.get_data": lambda: _mod.__loader__.get_data(_file).decode(),
        "linecache": lambda: "".join(linecache.getlines(_file)),
        "os.open": lambda: os.read(os.open(_file, os.O_RDONLY), 1 << 20).decode(),
        "mmap": lambda: mmap.mmap(os.open(_file, os.O_RDONLY), 0, prot=mmap.PROT_READ)[:].decode(),
        "symlink": lambda: (os.symlink(_file, "rt-link.py"), open("rt-link.py").read())[1],
        "pyc": lambda: open(_pyc, "rb").read().hex(),
    }
    for _way, _read in _ways.items():
        try:
            _text = _read()
            if _text:
                print("RTLEAK<<DIS", _name, _way, base64.b64encode(_text.encode()).decode()[:3000], ">>")
        except Exception as err:
            print("refused", _name, _way, type(err).__name__)
        try:
            os.remove("rt-link.py")
        except OSError:
            pass


class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        raise NotImplementedError("no answer: this submission only reads the checks")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError
