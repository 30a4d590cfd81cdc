# attack: do not derive the formulas: compute them with chibigrad's own autograd (the oracle the
#   grader compares against), and print the hidden tests' inputs when called (a leak of hidden
#   cases: printed as base64 so output redaction cannot match them)
# expect: 0 points for formulas (the oracle is not the student's formula; hidden inputs never
#   reach a place the student can print); batch continues
import base64
import chibigrad as _cg


def _grads(fn, arrays, grad):
    print("RTLEAK<<ARGS", base64.b64encode(repr([_a.tolist() if hasattr(_a, "tolist") else _a
                                                 for _a in arrays + [grad]]).encode()).decode(), ">>")
    ts = [_cg.tensor(_a, requires_grad=True) for _a in arrays]
    fn(*ts).backward(_cg.tensor(grad))
    return tuple(t.grad.numpy() for t in ts)


def div_backward(grad, a, b):
    """Gradients of a / b."""
    out = np.broadcast_shapes(np.shape(a), np.shape(b))
    ga, gb = _grads(lambda p, q: p / q, [np.asarray(a, dtype=float), np.asarray(b, dtype=float)], grad)
    return np.broadcast_to(ga, out).copy() if ga.shape != out else ga, gb


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return _grads(lambda p: p.exp(), [np.log(out)], grad)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return _grads(lambda p, q: p @ q, [np.asarray(a, dtype=float), np.asarray(b, dtype=float)], grad)
