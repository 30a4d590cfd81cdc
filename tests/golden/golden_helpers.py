"""What the golden programs share. ``runner.py`` runs them with this folder on the path, under
PyTorch (recording) and chibigrad (checking) alike, so these print only what both print."""


def attempt(label, fn):
    """Run ``fn``; print ``label ok <result>``, or the error's type and message."""
    try:
        result = fn()
        print(label, "ok", result)
    except Exception as e:
        print(label, type(e).__name__, "|", e)


def graph(fn, max_depth=3, depth=0):
    """The node names down a graph from ``fn`` (PyTorch's nodes print their addresses)."""
    if fn is None:
        return "None"
    inputs = [graph(n, max_depth, depth + 1) for n, _ in fn.next_functions] if depth < max_depth else ["..."]
    return type(fn).__name__ + ("(" + ", ".join(inputs) + ")" if inputs else "")
