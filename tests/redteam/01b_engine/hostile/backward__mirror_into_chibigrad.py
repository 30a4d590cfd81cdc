# attack: redefine the setup cell's make() and Tensor.__init__ (the grader builds its graphs with the
#   notebook's own classes) so every operation is mirrored into chibigrad; backward() then runs
#   chibigrad's engine on the mirror and copies the leaves' gradients back: no engine written
# expect: 0 points for backward (the grader must build its graphs with its own code, or forbid this);
#   batch continues
import chibigrad as _cg

_OPS = {"AddBackward0": lambda a, b: a + b, "SubBackward0": lambda a, b: a - b,
        "MulBackward0": lambda a, b: a * b, "DivBackward0": lambda a, b: a / b,
        "MmBackward0": lambda a, b: a @ b, "ExpBackward0": lambda a: a.exp(),
        "TanhBackward0": lambda a: a.tanh(), "SumBackward0": lambda a: a.sum()}
_LEAVES = []
_orig_init = Tensor.__init__


def _init(self, data, requires_grad=False):
    _orig_init(self, data, requires_grad)
    self._mirror = _cg.tensor(self.data, requires_grad=requires_grad)
    if requires_grad:
        _LEAVES.append(self)


Tensor.__init__ = _init
_orig_make = make


def make(name, value, inputs, formula, saved=()):
    result = _orig_make(name, value, inputs, formula, saved)
    try:
        result._mirror = _OPS[name](*[getattr(t, "_mirror", _cg.tensor(t.data)) for t in inputs])
    except Exception:
        pass
    return result


def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    stack, seen = [tensor.node], set()
    while stack:  # a freed graph raises as Node.apply would
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if node.saved is None:
            node.apply(None)
        stack.extend(node.edges)
    leaves = [t for t in _LEAVES if t.node in seen]
    for t in leaves:
        t._mirror.grad = None
    g = _cg.tensor(np.ones(tensor.shape) if gradient is None else np.asarray(gradient, dtype=np.float64))
    tensor._mirror.backward(g, retain_graph=True)
    for t in leaves:
        if t._mirror.grad is not None:
            add = t._mirror.grad.numpy().copy()
            t.grad = add if t.grad is None else t.grad + add
    if not retain_graph:
        for node in seen:
            if node.saved:
                node.saved = None
