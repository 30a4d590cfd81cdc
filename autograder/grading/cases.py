"""Hidden cases as seeded recipes, rebuilt on both sides of the pipe, and the observers that read results.

A recipe is plain data (``{"recipe": "random_graph", "seed": 3}``). The judge turns it into a *program*
(:func:`program`: leaves, then operations on earlier values, all numpy) and runs it on chibigrad to compute
the expected answer; the student process runs the same program on the notebook's own classes and calls the
student's function on it. Inputs may reach the student process this way; expected answers never do.

An *observer* (student side) reads a result as plain data the judge can check: node ids instead of node
objects, a leaf's ``.grad`` as an array, whether an input array was changed in place.

Copied into the student process with the runner: keep it free of chibigrad and of anything that answers an
exercise.
"""
import contextlib
import functools

import numpy as np

SHAPES = ((2, 3), (3,), (1, 3), (2, 1), ())  # broadcast together: every result has one of these shapes
UNARY, BINARY = ("tanh", "sum"), ("add", "sub", "mul")


# ---- programs: the graphs of 01b_engine (and any assignment that builds graphs op by op) -------------------------

def program(recipe):
    """``{"leaves": [(array, requires_grad)], "ops": [(op, a, b, number)]}`` for a recipe; value i is leaf i,
    then op i - len(leaves); an op reads earlier values a (and b, or a Python ``number``)."""
    kind = recipe["recipe"]
    if kind == "random_graph":
        return _random_program(recipe["seed"], recipe.get("n_ops", 25))
    if kind == "chain":  # x * factor * factor ... (n products): n nodes in a row
        return {"leaves": [(np.array(1.0), True)],
                "ops": [("scale", i, -1, recipe.get("factor", 1.00001)) for i in range(recipe["n"])]}
    if kind == "squarings":  # y = x squared k times: k nodes, each with two edges to the one below (2**k paths)
        return {"leaves": [(np.array(recipe.get("value", 1.0)), True)],
                "ops": [("mul", i, i, 0.0) for i in range(recipe["k"])]}
    if kind == "ops":  # written out by the judge: small named cases
        return {"leaves": [(np.asarray(a, dtype=np.float64), bool(r)) for a, r in recipe["leaves"]],
                "ops": [tuple(op) for op in recipe["ops"]]}
    raise ValueError(f"unknown recipe {kind!r}")


def _random_program(seed, n_ops):
    """Values reused often (shared subexpressions), one constant (no gradient), broadcasting shapes; binary
    results go through tanh so values stay near 1. The output always needs a gradient."""
    rng = np.random.default_rng(seed)
    leaves = [(rng.uniform(0.5, 1.5, SHAPES[rng.integers(len(SHAPES))]), True) for _ in range(4)]
    leaves.append((rng.uniform(0.5, 1.5, SHAPES[0]), False))
    ops, count = [], len(leaves)
    for _ in range(n_ops):
        a = count - 1 - min(int(rng.geometric(0.4)) - 1, count - 1)
        kind = rng.random()
        if kind < 0.25:
            ops.append(("tanh", a, -1, 0.0))
        elif kind < 0.32:
            ops.append(("sum", a, -1, 0.0))
        else:
            ops.append((BINARY[rng.integers(3)], a, int(rng.integers(count)), 0.0))
            ops.append(("tanh", count, -1, 0.0))
            count += 1
        count += 1
    if not requires_grad(leaves, ops)[-1]:  # only the constant was used: tie the output to a leaf
        ops.append(("add", count - 1, 0, 0.0))
    return {"leaves": leaves, "ops": ops}


def requires_grad(leaves, ops):
    """Which values need a gradient (have a node): leaves that require it, and ops on any such value."""
    needs = [bool(r) for _, r in leaves]
    for op, a, b, _ in ops:
        needs.append(needs[a] or (b >= 0 and needs[b]))
    return needs


def run(prog, leaf, apply):
    """Every value of ``prog``: ``leaf(array, requires_grad)`` makes a leaf, ``apply(op, x, y, number)`` an op."""
    values = [leaf(array, r) for array, r in prog["leaves"]]
    for op, a, b, number in prog["ops"]:
        values.append(apply(op, values[a], values[b] if b >= 0 else None, number))
    return values


def apply_op(op, x, y, number):
    """One op on any tensor type with PyTorch's method names (the small engine's and chibigrad's)."""
    if op == "tanh":
        return x.tanh()
    if op == "sum":
        return x.sum()
    if op == "scale":
        return x * number
    return {"add": x.__add__, "sub": x.__sub__, "mul": x.__mul__}[op](y)


def node_edges(prog):
    """The small engine's graph of ``prog`` as ids: ``{value id: [child value id or None]}`` for every value
    that has a node (a leaf's node has no edges). Computed from the program alone."""
    needs = requires_grad(prog["leaves"], prog["ops"])
    edges = {i: [] for i, (_, r) in enumerate(prog["leaves"]) if r}
    for k, (op, a, b, _) in enumerate(prog["ops"]):
        i = len(prog["leaves"]) + k
        if needs[i]:
            inputs = [a] if op in UNARY or op == "scale" else [a, b]
            edges[i] = [j if needs[j] else None for j in inputs]
    return edges


def grad_for(shape, seed):
    """The gradient backward starts from, drawn from ``seed`` once the output's shape is known."""
    return np.random.default_rng(seed).standard_normal(shape)


# ---- the student side: building a case and observing the result ------------------------------------------------

class Key:
    """A stand-in for a node where only identity matters (a dict key)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


def build(recipe, namespace):
    """``(args, context)`` for the student's function; ``namespace`` is the notebook's (its classes)."""
    kind = recipe["recipe"]
    if kind == "args":  # inputs the judge wrote out (arrays, numbers)
        return tuple(recipe["args"]), {}
    if kind in ("random_graph", "chain", "squarings", "ops"):
        Tensor = namespace["Tensor"]
        prog = program(recipe)
        values = run(prog, lambda a, r: Tensor(a, requires_grad=r), apply_op)
        out = values[-1]
        ids = {id(v.node): i for i, v in enumerate(values) if v.node is not None}
        leaves = [v for v, (_, r) in zip(values, prog["leaves"]) if r]
        context = {"ids": ids, "values": values, "leaves": leaves, "times": recipe.get("times", 1),
                   "retain_graph": bool(recipe.get("retain_graph"))}
        if recipe.get("pass") == "root":
            return (out.node,), context
        args = (out,)
        if "grad_seed" in recipe:
            args += (grad_for(np.shape(out.data), recipe["grad_seed"]),)
        elif recipe.get("grad_ones"):
            args += (np.ones(np.shape(out.data)),)
        if recipe.get("retain_graph"):
            args += (True,)
        return args, context
    if kind == "accumulate":  # accumulate(buffers, key, grad, shape), once per call of the recipe
        node, other = Key("node"), Key("other")
        first = recipe.get("first")
        buffers = {} if first is None else {node: first.copy(), other: first.copy()}
        shared = recipe["calls"][0][0].copy()  # "shared": one array handed to every call (AddBackward0 does)
        grads = [shared if recipe.get("shared") else g.copy() for g, _, _ in recipe["calls"]]
        context = {"keys": {"node": node, "other": other}, "first": buffers.get(node), "grads": grads,
                   "calls": recipe["calls"], "recipe_first": first}
        return (buffers,), context
    if kind in ("graph_01", "case_02"):  # 01_graphs, 02_backward: the observer builds the case
        return (), {"recipe": recipe}
    if kind == "compile_graph":  # 07b: the graph is built by the observer, the pass gets it
        return (), {"recipe": recipe}
    if kind == "compiled_step":
        return (), {"optimizer": recipe["optimizer"]}
    if kind == "gpu":  # 09_gpu: the observer builds the batch or model on the student's devices
        return (), {"recipe": recipe}
    if kind == "function":  # a custom Function's inputs (06b): tensors of one dtype, tangents, constant arguments
        import chibigrad as torch
        dtype = getattr(torch, recipe.get("dtype", "float64"))
        inputs = [torch.tensor(a, dtype=dtype) for a in recipe["inputs"]]
        tangents = [None if t is None else torch.tensor(t, dtype=dtype) for t in recipe["tangents"]]
        return (), {"inputs": inputs, "tangents": tangents, "extra": list(recipe.get("extra", ()))}
    if kind in VMAP_RECIPES:
        return VMAP_RECIPES[kind](recipe, namespace)
    if kind == "case_08":  # 08_debugging: the observer builds the case
        return (), {"recipe": recipe}
    raise ValueError(f"unknown recipe {kind!r}")


def _forward_mode(cls, context, call, program):
    """Run ``program(cls)`` in forward mode with ``cls.jvp`` counted; what came out, as data."""
    import chibigrad as torch
    from chibigrad.autograd import Function
    if not (isinstance(cls, type) and issubclass(cls, Function)):
        return {"type": "not a Function", "value": None, "primal": None, "float32": False, "jvp_calls": 0,
                "apply_replaced": False}
    replaced = any("apply" in vars(c) for c in cls.__mro__[:cls.__mro__.index(Function)])
    counted, rule = [], cls.__dict__.get("jvp")
    if rule is not None:
        inner = rule.__func__ if isinstance(rule, staticmethod) else rule
        cls.jvp = staticmethod(lambda ctx, *tangents: counted.append(1) or inner(ctx, *tangents))
    try:
        out = call(program, cls)
    finally:
        if rule is not None:
            cls.jvp = rule
    primal = None
    if isinstance(out, tuple):  # (primal, tangent) from unpack_dual, or (value, jvp) from torch.func.jvp
        primal, out = out
    read = lambda t: t.detach().numpy().astype(np.float64) if isinstance(t, torch.Tensor) else None  # noqa: E731
    return {"type": type(out).__name__, "value": read(out), "primal": read(primal),
            "float32": isinstance(out, torch.Tensor) and out.dtype == torch.float32, "jvp_calls": len(counted),
            "apply_replaced": replaced}


def _dual_run(context):
    """``cls -> (primal, tangent)`` of ``cls.apply`` on the context's inputs, tangents attached."""
    import chibigrad.autograd.forward_ad as fwAD

    def program(cls):
        with fwAD.dual_level():
            args = [x if t is None else fwAD.make_dual(x, t) for x, t in zip(context["inputs"], context["tangents"])]
            out = cls.apply(*args, *context["extra"])
            return tuple(fwAD.unpack_dual(out)) if hasattr(out, "shape") else (None, out)
    return program


def _reachable(root):
    """The small engine's nodes reachable from ``root`` (the runner's own walk)."""
    found, todo = ({root}, [root]) if root is not None else (set(), [])
    while todo:
        for child in todo.pop().edges:
            if child is not None and child not in found:
                found.add(child)
                todo.append(child)
    return found


def observe(what, fn, args, context, call):
    """Call the student's ``fn`` as ``what`` needs (``call(fn, *args)`` runs it under the runner's limits)
    and read the result as plain data."""
    if what == "value":
        return call(fn, *args)
    if what == "node_ids":
        order = call(fn, *args)
        if not isinstance(order, list):
            return {"type": type(order).__name__, "ids": []}
        return {"type": "list", "ids": [context["ids"].get(id(n), -1) for n in order]}
    if what == "grads":  # backward, as many times as asked; then every leaf's .grad and what was freed
        saving = [node for node in _reachable(context["values"][-1].node) if node.saved]
        call(fn, *args)
        for _ in range(context.get("times", 1) - 1):
            call(fn, *args)
        grads = [None if leaf.grad is None else np.asarray(leaf.grad, dtype=np.float64) for leaf in context["leaves"]]
        freed = all(node.saved is None for node in saving)
        again = None
        if saving and not context["retain_graph"]:  # a second backward through freed nodes must raise
            try:
                fn(*args)
            except Exception as err:
                again = (type(err).__name__, str(err)[:500])
            else:
                again = ("", "")
        return {"grads": grads, "freed": freed, "had_saved": bool(saving), "again": again}
    if what == "buffers":
        buffers, keys = args[0], context["keys"]
        for grad, (original, target, shape) in zip(context["grads"], context["calls"]):
            call(fn, buffers, keys[target], grad, tuple(shape))
        read = {name: None if key not in buffers else np.asarray(buffers[key], dtype=np.float64)
                for name, key in keys.items()}
        originals = [c[0] for c in context["calls"]]
        return {**read, "grads_unchanged": all(np.array_equal(g, o) for g, o in zip(context["grads"], originals)),
                "first_unchanged": context["first"] is None or np.array_equal(context["first"],
                                                                              context["recipe_first"])}
    if what == "tangent":  # forward mode through the student's Function (06b)
        return _forward_mode(fn, context, call, _dual_run(context))
    if what == "func_jvp":  # torch.func.jvp of a small program using the Function
        from chibigrad import func
        x, v = context["inputs"][0], context["tangents"][0]
        return _forward_mode(fn, context, call, lambda cls: func.jvp(
            lambda t: cls.apply(t * 2, *context["extra"]).sum(), (x,), (v,)))
    if what == "jacfwd":  # torch.func.jacfwd in the first input, the others fixed
        from chibigrad import func
        x, rest = context["inputs"][0], context["inputs"][1:]
        return _forward_mode(fn, context, call, lambda cls: func.jacfwd(
            lambda t: cls.apply(t, *rest, *context["extra"]))(x))
    if what == "graph_pass":  # a compile pass (or dead_nodes) on a fresh graph; the graph after it, as data
        return _graph_pass(fn, context["recipe"], call)
    if what == "compiled_params":  # a real step compiled with the pass, and without it
        return {"with": call(compiled_params, context["optimizer"], [fn]),
                "without": compiled_params(context["optimizer"], [])}
    if what in VMAP_OBSERVERS:
        return VMAP_OBSERVERS[what](fn, args, context, call)
    if what.startswith("gpu_"):
        return gpu_observe(what, fn, context["recipe"], call)
    if what in ("graph_value", "graph_nodes", "graph_leaves", "trace"):
        return observe_01(what, fn, context["recipe"], call)
    if what in ("sum_to", "function", "order", "ordered_backward", "path_sum"):
        return observe_02(what, fn, context["recipe"], call)
    if what.endswith("_08"):
        return observe_08(what, fn, context["recipe"], call)
    raise ValueError(f"unknown observer {what!r}")


# ---- compiled graphs (07b): built on both sides, read back as data -----------------------------------------------

_BINARY_NP, _UNARY_NP = ("add", "multiply", "subtract", "maximum"), ("tanh", "negative", "abs")
_NUMBERS = (1, 1.0, 2, 0.5, True)


def compile_graph(recipe):
    """A ``chibigrad.compile`` Graph for a recipe: ``random`` (placeholders, constants, element-wise calls,
    repeats, writes with ``out=``), ``ints`` (equal numbers of other types), ``chain``, ``kwargs`` (calls that
    differ only in a keyword argument), ``nested`` (Nodes inside a tuple argument), or a traced ``step``."""
    from chibigrad.compile.graph import Graph
    kind = recipe["graph"]
    g = Graph()
    if kind == "random":
        _random_compile_graph(g, recipe["seed"], recipe.get("n_ops", 30), recipe.get("writes", True))
        if recipe.get("check") is not None:  # a data check on a node (Python branched on its value)
            g.check(g.nodes[recipe["check"]], False, "forward")
    if kind == "ints":
        a = g.placeholder("a", np.arange(4))
        outs = [g.call(np.multiply, "np.multiply", (a, k), {}, a.value * k, "forward") for k in (2, 2.0)]
        outs += [g.call(np.equal, "np.equal", (a, k), {}, a.value == k, "forward") for k in (1, True, 1.0)]
        g.output(outs)
    elif kind == "chain":  # x, a dead call beside, then n calls each reading the previous one
        x = g.placeholder("x", np.ones(1))
        g.call(np.negative, "np.negative", (x,), {}, -x.value, "forward")
        prev = x
        for _ in range(recipe["n"]):
            prev = g.call(np.add, "np.add", (prev, 1.0), {}, prev.value + 1.0, "forward")
        g.output([prev])
    elif kind == "kwargs":  # round(x, decimals=1) and round(x, decimals=2): one target, one positional argument
        x = g.placeholder("x", np.array([0.123456, 2.987654]))
        c = g.constant(np.array([0.55555, 1.44444]))
        outs = [g.call(np.round, "np.round", (v,), {"decimals": d}, np.round(v.value, decimals=d), "forward")
                for v in (x, c) for d in (1, 2)]
        g.output(outs)
    elif kind == "nested":  # concatenate((x, c)) reads a placeholder inside a tuple; concatenate((c, d)) only constants
        x = g.placeholder("x", np.array([0.5, -1.0]))
        c, d = g.constant(np.array([2.0, 3.0])), g.constant(np.array([4.0]))
        mixed = g.call(np.concatenate, "np.concatenate", ((x, c),), {}, np.concatenate((x.value, c.value)), "forward")
        both = g.call(np.concatenate, "np.concatenate", ((c, d),), {}, np.concatenate((c.value, d.value)), "forward")
        g.output([g.call(np.tanh, "np.tanh", (mixed,), {}, np.tanh(mixed.value), "forward"), both])
    elif kind == "step":
        return traced_step(recipe["optimizer"])
    return g


def _random_compile_graph(g, seed, n_ops, writes):
    rng = np.random.default_rng(seed)
    values = [g.placeholder(f"x{i}", rng.uniform(-1, 1, 3)) for i in range(2)]
    values += [g.constant(rng.uniform(-1, 1, 3)) for _ in range(2)]
    pure = []
    for _ in range(n_ops):
        r = rng.random()
        if pure and r < 0.25:  # the same call again
            old = pure[rng.integers(len(pure))]
            value = old.target(*[a.value if hasattr(a, "op") else a for a in old.args])
            node = g.call(old.target, old.target_name, old.args, {}, value, "forward")
        elif writes and r < 0.35:  # a write into an earlier value or a constant
            target, other = values[rng.integers(2, len(values))], values[rng.integers(len(values))]
            if target.storage == other.storage or not isinstance(target.value, np.ndarray):
                continue
            np.add(target.value, other.value, out=target.value)
            g.call(np.add, "np.add", (target, other), {"out": (target,)}, target.value, "forward", mutates=target)
            continue
        elif r < 0.55:
            fn = getattr(np, _UNARY_NP[rng.integers(len(_UNARY_NP))])
            a = values[rng.integers(len(values))]
            node = g.call(fn, f"np.{fn.__name__}", (a,), {}, fn(a.value), "forward")
        else:
            fn = getattr(np, _BINARY_NP[rng.integers(len(_BINARY_NP))])
            a = values[rng.integers(len(values))]
            b = values[rng.integers(len(values))] if rng.random() < 0.7 else _NUMBERS[rng.integers(len(_NUMBERS))]
            node = g.call(fn, f"np.{fn.__name__}", (a, b), {}, fn(a.value, b.value if hasattr(b, "op") else b),
                          "forward")
        values.append(node)
        pure.append(node)
    outputs = [values[i] for i in rng.choice(np.arange(4, len(values)), size=min(4, len(values) - 4), replace=False)]
    g.output(outputs)
    return g


def _model_step(optimizer, seed):
    """A small model, its optimizer and ``step(x, y)`` (two linear layers, SiLU written out: 1 + exp repeats)."""
    import chibigrad as torch
    import chibigrad.nn.functional as F
    from chibigrad import nn, optim
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 4))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "SGD" else \
        optim.Adam(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        z = model[0](x)
        loss = F.cross_entropy(model[2](z * torch.sigmoid(z)), y)
        loss.backward()
        opt.step()
        return loss
    return model, step, (torch.tensor(np.random.default_rng(seed).standard_normal((6, 5)), dtype=torch.float32),
                         torch.tensor([0, 1, 2, 3, 0, 1]))


def traced_step(optimizer):
    """The traced graph of a steady training step (the optimizer's state exists)."""
    from chibigrad.compile import trace
    _, step, (x, y) = _model_step(optimizer, 2)
    step(x, y)
    return trace(step, x, y)


def compiled_params(optimizer, passes):
    """A step compiled with ``passes`` (None: eager) run 4 times: the parameters, the graph's call count and
    whether the graph's ``python_code`` was replaced on the instance."""
    import chibigrad as torch
    model, step, (x, y) = _model_step(optimizer, 1)
    run = step if passes is None else torch.compile(step, options={"passes": passes})
    for _ in range(4):
        run(x, y)
    graph = getattr(run, "graph", None)
    return {"params": [p.detach().numpy().astype(np.float64) for p in model.parameters()],
            "calls": -1 if graph is None else sum(n.op == "call" for n in graph.nodes),
            "code_replaced": graph is not None and "python_code" in vars(graph)}


def _refs(obj, ids):
    """Arguments as data: a Node becomes ``("@node", id)``; numbers, strings, arrays, tuples, lists, dicts stay."""
    if hasattr(obj, "op") and hasattr(obj, "target_name"):
        return ("@node", ids.setdefault(id(obj), len(ids)))
    if type(obj) in (tuple, list):
        return type(obj)(_refs(x, ids) for x in obj)
    if type(obj) is dict:
        return {str(k): _refs(v, ids) for k, v in obj.items()}
    if isinstance(obj, (bool, int, float, str, np.ndarray, np.generic)) or obj is None:
        return obj
    return ("@other", type(obj).__name__)


def graph_data(graph, ids):
    """``graph.nodes`` as data the judge can read and run: each node's id (``ids``: id(node) -> number, the
    original nodes' given before a pass), op, target's name, arguments, the node it writes, its storage (as a
    number), and a new constant's value."""
    storages, nodes = {}, []
    for node in graph.nodes:
        number = ids.setdefault(id(node), len(ids))
        value = node.value if node.op == "constant" and isinstance(node.value, (np.ndarray, np.generic, int, float)) \
            else None
        nodes.append({"id": number, "op": str(node.op), "target": str(node.target_name),
                      "args": _refs(tuple(node.args), ids), "kwargs": _refs(dict(node.kwargs), ids),
                      "mutates": None if node.mutates is None else _refs(node.mutates, ids)[1],
                      "storage": None if node.storage is None else storages.setdefault(node.storage, len(storages)),
                      "value": value})
    return nodes


def _graph_pass(fn, recipe, call):
    graph = compile_graph(recipe)
    ids = {id(n): i for i, n in enumerate(graph.nodes)}
    before = list(graph.nodes)
    result = call(fn, graph)
    if recipe.get("pass") == "list":  # dead_nodes: a list of the graph's nodes, the graph left alone
        return {"type": type(result).__name__,
                "ids": [ids.get(id(n), -1) for n in result] if isinstance(result, list) else [],
                "unchanged": [id(n) for n in graph.nodes] == [id(n) for n in before]}
    count = result if isinstance(result, (int, np.integer)) and not isinstance(result, bool) else None
    again = call(fn, graph) if recipe.get("twice") else None
    return {"count": None if count is None else int(count), "returned": type(result).__name__,
            "again": None if again is None else int(again) if isinstance(again, (int, np.integer)) else -1,
            "nodes": graph_data(graph, ids)}


# ---- 06c_vmap: batching rules called PyTorch's way, vmap with the student's rule, per-sample gradients ----------

def _vmap_tensors(items):
    """The judge's arrays as tensors (their dtypes kept: float64, float32, int64); anything else as it is."""
    import chibigrad as torch
    return tuple(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in items)


def _vmap_rule_case(recipe, namespace):
    """A rule's arguments: tensors (batched ones with the batch at their bdim), bdims, dims."""
    return _vmap_tensors(recipe["args"]), {}


def _vmap_engine_case(recipe, namespace):
    """vmap of a small program with the student's rule installed by the release's ``your_rule``."""
    return _vmap_tensors(recipe["args"]), {"your_rule": namespace["your_rule"], "op": recipe["op"],
                                           "program": recipe["program"], "in_dims": recipe["in_dims"],
                                           "dim": recipe.get("dim"), "keepdim": recipe.get("keepdim", False)}


def vmap_big_args(specs, seed):
    """A large batch's arguments, drawn from ``seed`` in the student process (a few bytes cross, not the batch)
    and again by the judge to check the rows it asks for: ``{"uniform": shape}``, ``{"integers": high,
    "shape": shape}`` or a plain value (a bdim, a dim)."""
    rng = np.random.default_rng(seed)
    draw = {"uniform": lambda s: rng.uniform(-1.0, 1.0, tuple(s["uniform"])),
            "integers": lambda s: rng.integers(0, s["integers"], tuple(s["shape"]))}
    return [draw[next(iter(s))](s) if isinstance(s, dict) else s for s in specs]


def _vmap_big_case(recipe, namespace):
    """A rule's arguments for a batch too large for a loop over its samples to finish in the judge's time."""
    return _vmap_tensors(vmap_big_args(recipe["specs"], recipe["seed"])), {"rows": recipe["rows"]}


def _vmap_params_case(recipe, namespace):
    """``(params, xs, ys)`` for per_sample_grads."""
    W, b, xs, ys = _vmap_tensors(recipe["args"])
    return ((W, b), xs, ys), {}


def _vmap_params_big_case(recipe, namespace):
    """``(params, xs, ys)`` for per_sample_grads on a large batch drawn from the recipe's seed."""
    W, b, xs, ys = _vmap_tensors(vmap_big_args(recipe["specs"], recipe["seed"]))
    return ((W, b), xs, ys), {"rows": recipe["rows"]}


def _counting(module, name, fn, *args):
    """``(fn(*args), how many times module.name was called meanwhile)``."""
    real, count = getattr(module, name), [0]

    def counted(*a, **k):
        count[0] += 1
        return real(*a, **k)
    setattr(module, name, counted)
    try:
        return fn(*args), count[0]
    finally:
        setattr(module, name, real)


def _read_tensor(t):
    import chibigrad as torch
    if not isinstance(t, torch.Tensor):
        return None
    return t.detach().numpy().astype(np.float64)


def _observe_rule(fn, args, context, call):
    """The rule's result with its batch dim moved first, the bdim it gave, and how many ops it ran."""
    import chibigrad as torch
    from chibigrad.autograd import function
    result, ops = _counting(function, "_apply", call, fn, *args)
    if not (isinstance(result, tuple) and len(result) == 2):
        return {"type": type(result).__name__, "value": None, "bdim": None, "dtype": None, "ops": ops}
    out, bdim = result
    ok = isinstance(out, torch.Tensor) and isinstance(bdim, int) and not isinstance(bdim, bool) \
        and -out.ndim <= bdim < out.ndim
    return {"type": "tuple", "value": _read_tensor(out.movedim(bdim, 0)) if ok else None,
            "bdim": bdim if isinstance(bdim, int) else repr(bdim)[:100], "out": type(out).__name__,
            "dtype": str(out.dtype) if isinstance(out, torch.Tensor) else None, "ops": ops}


def _observe_rule_rows(fn, args, context, call):
    """``batch_rule`` on a large batch: the result's shape and only the rows the judge asks for."""
    got = _observe_rule(fn, args, context, call)
    if got["value"] is not None:
        got["shape"], got["value"] = list(got["value"].shape), got["value"][context["rows"]]
    return got


def _vmap_program(context):
    """What the judge vmaps: the op alone (or, for sum, inside grad too) on the case's arguments."""
    import chibigrad as torch
    from chibigrad.func import grad
    dim, keepdim, program = context["dim"], context["keepdim"], context["program"]
    if program == "sum":
        return lambda s: (s.sum() if dim is None else s.sum(dim, keepdim)) * 2
    if program == "grad_sum":  # d/ds of sum(sum(s, dim) ** 2): the rule runs for both sums
        return grad(lambda s: (s.sum(dim) ** 2).sum())
    if program == "mm":
        return torch.mm
    if program == "index_select":
        return lambda s, i: torch.index_select(s, dim, i)
    raise ValueError(f"unknown program {program!r}")


def _observe_vmap(fn, args, context, call):
    """``vmap(program, in_dims)(*args)`` with the student's rule for the op; the result as an array."""
    from chibigrad.func import vmap

    def run(rule):
        with context["your_rule"](context["op"], rule):
            return vmap(_vmap_program(context), in_dims=tuple(context["in_dims"]))(*args)
    return {"value": _read_tensor(call(run, fn))}


def _observe_per_sample(fn, args, context, call):
    """The student's per-sample gradients as arrays, and how many backward passes computed them."""
    from chibigrad.autograd import engine
    result, passes = _counting(engine, "execute", call, fn, *args)
    grads = [_read_tensor(g) for g in result] if isinstance(result, (tuple, list)) else None
    return {"type": type(result).__name__, "grads": grads, "passes": passes}


def _observe_per_sample_rows(fn, args, context, call):
    """``per_sample`` on a large batch: each gradient's shape and only the rows the judge asks for."""
    got = _observe_per_sample(fn, args, context, call)
    if got["grads"] is not None:
        got["shapes"] = [None if g is None else list(g.shape) for g in got["grads"]]
        got["grads"] = [None if g is None or g.ndim == 0 else g[[r for r in context["rows"] if r < len(g)]]
                        for g in got["grads"]]
    return got


VMAP_RECIPES = {"vmap_rule": _vmap_rule_case, "vmap_engine": _vmap_engine_case, "vmap_params": _vmap_params_case,
                "vmap_big": _vmap_big_case, "vmap_params_big": _vmap_params_big_case}
VMAP_OBSERVERS = {"batch_rule": _observe_rule, "vmap_with_rule": _observe_vmap, "per_sample": _observe_per_sample,
                  "batch_rule_rows": _observe_rule_rows, "per_sample_rows": _observe_per_sample_rows}


# ---- 09_gpu: batches, models and timings on two devices ------------------------------------------------------------
# A batch travels as a spec (plain data): {"tensor": array, "dtype", "on", "grad"}, {"list": [...]},
# {"tuple": [...]}, {"point": [x, y, label]}, {"dict": [[key, spec], ...]}, {"array": array} (a numpy array the
# student must return as it is) or {"py": value}. Models travel as their weights.

def gpu_make(spec, torch, Point):
    """The batch a spec describes, built with ``torch`` (the student edition there, the full one in the judge)."""
    if "tensor" in spec:
        t = torch.tensor(spec["tensor"], dtype=getattr(torch, spec["dtype"]), requires_grad=spec.get("grad", False))
        return t if spec["on"] == "cpu" else t.to(spec["on"])
    if "dict" in spec:
        return {key: gpu_make(value, torch, Point) for key, value in spec["dict"]}
    if "point" in spec:
        return Point(*(gpu_make(s, torch, Point) for s in spec["point"]))
    for kind in ("list", "tuple"):
        if kind in spec:
            return {"list": list, "tuple": tuple}[kind](gpu_make(s, torch, Point) for s in spec[kind])
    return spec["array"] if "array" in spec else spec["py"]


def gpu_net(torch, nn, weights, device):
    """Linear(4, 6), Tanh, Linear(6, 3) in float64 with the judge's weights, on ``device``."""
    net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).double()
    with torch.no_grad():
        for p, w in zip(net.parameters(), weights):
            p.copy_(torch.tensor(w, dtype=torch.float64))
    return net.to(device)


def gpu_optimizer(torch, name, params):
    return {"sgd": lambda: torch.optim.SGD(params, lr=0.1),
            "momentum": lambda: torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=0.01),
            "adam": lambda: torch.optim.Adam(params, lr=0.01)}[name]()


def gpu_targets(torch, array):
    return torch.tensor(array, dtype=torch.int64 if array.dtype.kind in "iu" else torch.float64)


def _gpu_device(torch, recipe):
    return torch.device(recipe["device"]) if recipe.get("as_device") else recipe["device"]


def _gpu_leaves(obj, path="batch"):
    """``(path, value)`` of every non-container inside ``obj``."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _gpu_leaves(value, f"{path}[{key!r}]")
    elif isinstance(obj, (list, tuple)):
        for k, value in enumerate(obj):
            yield from _gpu_leaves(value, f"{path}[{k}]")
    else:
        yield path, obj


def _host64(torch, t):
    """A copy of ``t``'s values (a later step changes the parameters in place)."""
    try:
        return np.array(t.detach().cpu().numpy(), dtype=np.float64)
    except Exception:
        return None


def gpu_describe(got, want, torch):
    """What ``got`` (the student's result) is, read along ``want`` (the batch passed in), as data."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return {"kind": type(got).__name__}
        return {"kind": "tensor", "device": got.device.type, "dtype": str(got.dtype).split(".")[-1],
                "shape": list(got.shape), "values": _host64(torch, got)}
    if isinstance(want, (dict, list, tuple)):
        out = {"kind": type(got).__name__, "same_type": type(got) is type(want)}
        if isinstance(want, dict) and isinstance(got, dict):
            out["keys"] = [k if isinstance(k, str) else repr(k) for k in got]
            out["items"] = [gpu_describe(got[k], want[k], torch) for k in want if k in got]
        elif isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
            out["len"] = len(got)
            out["items"] = [gpu_describe(g, w, torch) for g, w in zip(got, want)]
        return out
    return {"kind": "same" if got is want else "other", "repr": repr(got)[:80]}


def _gpu_devices(tensors):
    return [t.device.type for t in tensors]


def _gpu_train(fn, recipe, call, torch):
    nn, F = torch.nn, torch.nn.functional
    model = gpu_net(torch, nn, recipe["weights"], recipe["model_on"])
    optimizer = gpu_optimizer(torch, recipe["opt"], model.parameters())
    loss_fn = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy}[recipe["loss"]]
    params, steps = list(model.parameters()), []
    for x, y in recipe["batches"]:
        inputs, targets = torch.tensor(x).to(recipe["batch_on"]), gpu_targets(torch, y).to(recipe["batch_on"])
        loss = call(fn, model, optimizer, loss_fn, inputs, targets)
        now = list(model.parameters())
        steps.append({"loss": loss if isinstance(loss, float) else None, "loss_type": type(loss).__name__,
                      "batch_devices": _gpu_devices([inputs, targets]),
                      "same_params": len(now) == len(params) and all(a is b for a, b in zip(now, params)),
                      "devices": _gpu_devices(now),
                      "grad_devices": [None if p.grad is None else p.grad.device.type for p in now],
                      "values": [_host64(torch, p) for p in now]})
    return steps


def _gpu_evaluate(fn, recipe, call, torch):
    model = gpu_net(torch, torch.nn, recipe["weights"], recipe["model_on"])
    F = torch.nn.functional
    batches = [(torch.tensor(x), gpu_targets(torch, y)) for x, y in recipe["batches"]]
    modes, graphs = [], []
    handle = model.register_forward_hook(lambda m, a, o: modes.append(torch.is_grad_enabled()))

    def loss_fn(output, target):  # the recipe's loss, noting whether the output carries a graph
        graphs.append(bool(output.requires_grad))
        return {"mse": F.mse_loss, "cross_entropy": F.cross_entropy}[recipe["loss"]](output, target)
    try:
        result = call(fn, model, batches, loss_fn)
    finally:
        handle.remove()
    pair = isinstance(result, tuple) and len(result) == 2
    mean, predictions = result if pair else (None, None)
    numeric = type(predictions) is np.ndarray and predictions.dtype.kind in "biuf"
    return {"pair": pair, "result": repr(result)[:80], "mean_type": type(mean).__name__,
            "mean": mean if isinstance(mean, float) else None, "predictions_type": type(predictions).__name__,
            "predictions": predictions if numeric else None, "grad_modes": modes, "graphs": graphs,
            "devices": _gpu_devices(model.parameters()),
            "batch_devices": _gpu_devices([t for inputs_targets in batches for t in inputs_targets])}


def _gpu_sleeps(fn, recipe, call, torch):
    """``time_per_call`` on host sleeps of known lengths: how many calls, what it returned."""
    import time
    pauses, calls = recipe["pauses"], []

    def sleeper():
        time.sleep(pauses[min(len(calls), len(pauses) - 1)])
        calls.append(1)
    got = call(fn, sleeper, _gpu_device(torch, recipe), recipe["warmup"], recipe["repeats"])
    return {"calls": len(calls), "value": got if isinstance(got, float) else None, "type": type(got).__name__}


def _gpu_busy(fn, recipe, call, torch):
    """``time_per_call`` on matmuls queued on the GPU (far longer to run than to queue)."""
    torch.manual_seed(0)
    x = torch.randn(recipe["n"], recipe["n"], device="cuda") / float(np.sqrt(recipe["n"]))

    def work():
        with torch.no_grad():
            y = x
            for _ in range(recipe["k"]):
                y = y @ x
        return y
    got = call(fn, work, "cuda", 2, recipe["repeats"])
    return {"value": got if isinstance(got, float) else None, "type": type(got).__name__}


def gpu_observe(what, fn, recipe, call):
    """The 09_gpu observers: call the student's function on the recipe's case, read what it did as data."""
    from collections import namedtuple

    import chibigrad as torch
    if what == "gpu_moved":
        Point = namedtuple("Point", "x y label")
        batch = gpu_make(recipe["batch"], torch, Point)
        before = [(p, v, v.device.type if isinstance(v, torch.Tensor) else None) for p, v in _gpu_leaves(batch)]
        got = call(fn, batch, _gpu_device(torch, recipe))
        after = list(_gpu_leaves(batch))
        changed = [p for (p, v, d), (_, w) in zip(before, after) if v is not w or (d and v.device.type != d)]
        grad = None
        if recipe.get("grad") and isinstance(got, dict) and isinstance(got.get("w"), torch.Tensor):
            moved = got["w"]
            try:
                grad = _host64(torch, torch.autograd.grad((moved * moved).sum(), [batch["w"]])[0])
            except Exception as err:
                grad = f"{type(err).__name__}: {err}"[:300]
        return {"tree": gpu_describe(got, batch, torch), "changed": changed if len(after) == len(before) else
                ["the batch's structure"], "grad": grad}
    return {"gpu_train": _gpu_train, "gpu_evaluate": _gpu_evaluate, "gpu_sleeps": _gpu_sleeps,
            "gpu_busy": _gpu_busy}[what](fn, recipe, call, torch)


# ---- 01_graphs: chibigrad graphs, named by recipe; nodes cross as numbers -----------------------------------------

GRAPHS_01 = 19  # graph_01(0) ... graph_01(18): the graphs every walking exercise of 01_graphs is checked on
DEEP_01 = 50_000  # additions in the deep chain: far past Python's recursion limit
WALK_YOURSELF = ("this exercise is about walking the graph yourself: do not call the engine's topological_order or "
                 "_count_dependencies (or chibigrad.viz's walk); follow next_functions with your own stack")
TRACE_YOURSELF = ("trace_backward: record the order with your own hooks; chibigrad.viz.backward_frames is the "
                  "course's finished version of it")


@functools.lru_cache(maxsize=None)
def graph_01(index):
    """``(description, output tensor)``: graph ``index`` of 01_graphs, built with chibigrad (either side), once
    per process: a student's function that changes it changes only what its own later answers see."""
    import chibigrad as torch
    leaf = lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True)  # noqa: E731
    x = leaf(2.0)
    if index == 0:
        return "a leaf that requires grad (it has no grad_fn)", x
    if index == 1:
        return "a result that needs no gradient (no grad_fn)", torch.tensor(2.0) * 3
    if index == 2:
        return "y = x * x (one node with two edges to the same leaf)", x * x
    if index == 3:
        a = x.sin()
        return "a diamond: a = x.sin(); y = a * a.cos() + a (a is shared)", a * a.cos() + a
    if index == 4:
        return "y = (x * c + 3).tanh() with a constant c (None edges)", (x * torch.tensor(1.5) + 3).tanh()
    if index == 5:
        x1, x2 = leaf(1.0), leaf(1.0)
        return "y = x1 * x2 + x1 with two different leaves that hold equal values", x1 * x2 + x1
    if index == 6:
        first, second = torch.tensor([1.0, 2.0], requires_grad=True).unbind()
        return "y = first * second from first, second = v.unbind() (one node, two outputs)", first * second
    if index == 7:
        y = leaf(0.3)
        for _ in range(12):
            y = y.sin() * y.cos() + y * 0.5
        return "12 diamonds in a row (4096 paths, 61 nodes)", y
    if index < 16:
        return f"random graph (seed {index - 8})", random_graph_01(index - 8, 40)[0]
    if index == 16:
        out = random_graph_01(100, 20)[0]
        out.backward()
        return "a random graph after backward() freed it (next_functions are still there)", out
    if index == 17:
        y, c = x, torch.tensor(1.0, dtype=torch.float64)
        for _ in range(DEEP_01):
            y = y + c
        return f"a chain of {DEEP_01} additions (deeper than Python's recursion limit)", y
    if index == 18:
        return "y = x + x * 2 + x.sin() (three edges to one leaf)", x + x * 2 + x.sin()
    raise ValueError(f"no graph {index} in 01_graphs")


_UNARY_01 = (lambda a: a.tanh(), lambda a: a.sin(), lambda a: a * 0.5, lambda a: a ** 2, lambda a: -a)
_BINARY_01 = (lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b)


def random_graph_01(seed, n_ops, n_leaves=4, shapes=((),), reductions=False):
    """``(output, leaves)``, a random define-by-run graph: operands mostly the latest values (long paths), sometimes older ones
    (shared subgraphs, leaves used many times), one constant (``None`` edges); ``reductions`` adds keepdim
    sums; values stay near 1."""
    import chibigrad as torch
    rng = np.random.default_rng(seed)
    leaves = [torch.tensor(rng.uniform(0.5, 1.5, shapes[rng.integers(len(shapes))]), dtype=torch.float64,
                           requires_grad=True) for _ in range(n_leaves)]
    values = leaves + [torch.tensor(rng.uniform(0.5, 1.5, shapes[0]), dtype=torch.float64)]
    for _ in range(n_ops):
        pick = lambda: values[-1 - min(int(rng.geometric(0.4)) - 1, len(values) - 1)]  # noqa: E731
        if reductions and values[-1].ndim > 0 and rng.random() < 0.1:
            values.append(values[-1].sum(int(rng.integers(values[-1].ndim)), keepdim=True))
        elif rng.random() < 0.4:
            values.append(_UNARY_01[rng.integers(len(_UNARY_01))](pick()))
        else:
            a, other = pick(), values[rng.integers(len(values))]
            values.append(_BINARY_01[rng.integers(len(_BINARY_01))](a, other).tanh())
    out = values[-1]
    return (out if out.grad_fn is not None else out + leaves[0]), leaves


def node_ids(t):
    """``{id(node): number}`` for every node reachable from ``t.grad_fn`` (or from a list of root nodes), numbered
    in the order an explicit stack first meets them along ``next_functions`` (the first root 0): the same
    numbers on both sides."""
    return {id(node): i for i, node in enumerate(nodes_by_id(t))}


def nodes_by_id(t):
    """The nodes of ``t``'s graph (``t`` a tensor or a list of root nodes) in the order of :func:`node_ids`."""
    roots = t if isinstance(t, list) else [t.grad_fn] if t.grad_fn is not None else []
    order, seen, stack = [], set(), list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        stack.extend(n for n, _ in reversed(node.next_functions) if n is not None and id(n) not in seen)
    return order


def trace_case_01(kind):
    """``(description, loss, ordering name, nodes that never run)`` for trace_backward's cases."""
    import chibigrad as torch
    from chibigrad.autograd.function import Function

    class NoGradient(Function):  # identity whose backward sends no gradient: nodes below it never run
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, grad):
            return None

    x = torch.tensor(1.5 if kind == "simple" else 0.7, dtype=torch.float64, requires_grad=True)
    if kind == "simple":
        return "y = (x * x).sin() + x", (x * x).sin() + x, "default", []
    if kind == "skip":
        hidden = x.sin()
        return ("a graph whose branch x.sin() receives no gradient (its node never runs)",
                NoGradient.apply(hidden) + x.cos(), "default", [hidden.grad_fn])
    if kind == "freed":
        y = (x * x).sum()
        y.backward()  # frees the saved tensors: a second backward raises
        return "a graph already freed by backward()", y, "default", []
    seed = int(kind)
    return f"a random graph (seed {seed}) under another valid ordering", random_graph_01(seed, 30)[0], "fifo", []


def fifo_order(roots):
    """A valid order that differs from the engine's: Kahn's algorithm, first come first served."""
    import collections
    from chibigrad.autograd import engine
    deps = engine._count_dependencies(roots)
    ready, order = collections.deque(n for n in dict.fromkeys(roots) if not deps.get(n)), []
    while ready:
        node = ready.popleft()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)
    return order


@contextlib.contextmanager
def _blocked(functions, message):
    """While the block runs, ``functions`` raise ``AssertionError(message)`` (their code objects are swapped,
    so a name imported earlier is caught too). Inside the student's process: a hint for an honest student,
    not a defence (the judge's checks do not rely on it)."""
    namespace = {}
    exec(f"def blocked(*args, **kwargs):\n    raise AssertionError({message!r})", namespace)
    saved = [(f, f.__code__) for f in functions]
    for f, _ in saved:
        f.__code__ = namespace["blocked"].__code__
    try:
        yield
    finally:
        for f, code in saved:
            f.__code__ = code


def _walk_yourself():
    from chibigrad import viz
    from chibigrad.autograd import engine
    return _blocked((engine.topological_order, engine._count_dependencies, viz._walk), WALK_YOURSELF)


def _as_ids(got, ids, belongs):
    """A returned list as data: each item's number in ``ids`` (-1 when not one of them), and the type names of
    items that are not what ``belongs`` accepts."""
    if type(got) is not list:  # not isinstance: a patched isinstance would pass a tuple off as a list
        return {"type": type(got).__name__, "ids": [], "foreign": []}
    return {"type": "list", "ids": [ids.get(id(item), -1) for item in got],
            "foreign": sorted({type(item).__name__ for item in got if not belongs(item)})}


def observe_01(what, fn, recipe, call):
    """01_graphs' observers: the student's function on graph ``recipe["graph"]`` (or a trace case)."""
    if what == "graph_value":
        _, t = graph_01(recipe["graph"])
        with _walk_yourself():
            return call(fn, t)
    if what == "graph_nodes":
        _, t = graph_01(recipe["graph"])
        with _walk_yourself():
            got = call(fn, t)
        return _as_ids(got, node_ids(t), lambda n: hasattr(n, "next_functions"))
    if what == "graph_leaves":
        import chibigrad as torch
        _, t = graph_01(recipe["graph"])
        leaves = {}
        for node in nodes_by_id(t):
            if hasattr(node, "variable"):
                leaves.setdefault(id(node.variable), len(leaves))
        with _walk_yourself():
            got = call(fn, t)
        return _as_ids(got, leaves, lambda v: isinstance(v, torch.Tensor))
    if what == "trace":
        return _trace_01(fn, recipe["trace"], call)
    raise ValueError(f"unknown observer {what!r}")


def _trace_01(fn, kind, call):
    from chibigrad import viz
    from chibigrad.autograd import engine
    _, loss, ordering, _ = trace_case_01(kind)
    nodes = nodes_by_id(loss)
    hooks = [len(n._pre_hooks) for n in nodes]
    leaves = [n.variable for n in nodes if hasattr(n, "variable")]
    error, frames = "", (viz.backward_frames,)
    with _blocked(frames, TRACE_YOURSELF), engine.use_ordering(fifo_order if ordering == "fifo" else engine.topological_order):
        try:
            got = call(fn, loss)
        except Exception as err:
            if kind != "freed":
                raise
            got, error = None, type(err.__cause__ or err).__name__
    return {**_as_ids(got, node_ids(loss), lambda n: hasattr(n, "next_functions")), "error": error,
            "hooks_kept": [len(n._pre_hooks) for n in nodes] != hooks,
            "grads": all(leaf.grad is not None for leaf in leaves)}


# ---- 02_backward: Functions on written-out inputs, orderings and path sums on numbered graphs ----------------------

ORDER_YOURSELF = ("write the depth-first ordering yourself: do not call the engine's topological_order or "
                  "_count_dependencies (they count dependencies; this exercise is the other way)")
NO_ENGINE = ("compute the gradient by the path-sum rule yourself: do not call backward or autograd.grad "
             "(call_node for the local derivatives is fine)")
SUM_TO_YOURSELF = "write sum_to yourself: do not call Tensor.sum_to_size"
ORDERS_02, PATH_SUMS_02 = 13, 15  # order_case_02(0 ... 12), path_sum_case_02(0 ... 14)


def _diamonds(k, x):
    y = x
    for _ in range(k):
        y = y.sin() * y.cos() + y * 0.5
    return y


def _leaf(value):
    import chibigrad as torch
    return torch.tensor(value, dtype=torch.float64, requires_grad=True)


@functools.lru_cache(maxsize=None)
def order_case_02(index):
    """``(description, root nodes)``: dfs_order's case ``index`` (graph ``17`` of 01_graphs is the deep one)."""
    if index == 0:
        return "x * 2", [(_leaf(0.5) * 2).grad_fn]
    if index == 1:
        return "a leaf's own node (x.backward() on a leaf)", [_leaf(0.5)._accumulator()]
    if index == 2:
        a = _leaf(0.3).sin()
        return "a = x.sin(); y = a * a.cos() + a", [(a * a.cos() + a).grad_fn]
    if index == 3:
        return "8 diamonds in a row", [_diamonds(8, _leaf(0.3)).grad_fn]
    if index in (4, 5):
        x = _leaf(0.4)
        shared = x.tanh() * x
        y1, y2 = shared.sin(), (shared * 3).cos()
        return ("two roots sharing a subgraph", [y1.grad_fn, y2.grad_fn]) if index == 4 else \
            ("the same root twice", [y1.grad_fn, y1.grad_fn])
    if index < 12:
        return f"random graph (seed {index - 6})", [random_graph_01(index - 6, 40)[0].grad_fn]
    if index == 12:
        return f"a chain of {DEEP_01} additions", [graph_01(17)[1].grad_fn]
    raise ValueError(f"no ordering case {index} in 02_backward")


def ordered_graphs_02(seed):
    """``(outputs, leaves, grads)``: two random graphs of broadcasting shapes with keepdim sums."""
    import chibigrad as torch
    outs = [random_graph_01(seed * 10 + k, 30, shapes=SHAPES, reductions=True)[0] for k in range(2)]
    leaves = list({id(n.variable): n.variable for n in nodes_by_id([o.grad_fn for o in outs])
                   if hasattr(n, "variable")}.values())
    grads = [torch.tensor(np.random.default_rng(seed).standard_normal(tuple(o.shape))) for o in outs]
    return outs, leaves, grads


def _five_neurons(seed):
    import chibigrad as torch
    rng = np.random.default_rng(seed)
    a, w1, w2, w3, w4 = [torch.tensor(rng.standard_normal((3, 3)), requires_grad=True) for _ in range(5)]
    return 10 - (w3 * (w1 * a) + w4 * (w2 * a)), [a, w1, w2, w3, w4]


@functools.lru_cache(maxsize=None)
def path_sum_case_02(index):
    """``(description, output, leaves)``: path_sum_grad's case ``index``."""
    if index < 3:
        return (f"the five-neuron network (seed {index})", *_five_neurons(index))
    x = _leaf(1.5)
    if index == 3:
        return "y = x * x (two edges from one node to x)", x * x, [x]
    if index == 4:
        return "y = x * x * x", x * x * x, [x]
    if index == 5:
        x2 = _leaf(1.5)  # a leaf is matched by identity (is), not by value
        return "y = x1 * x2 + x1 with two different leaves that hold equal values", x * x2 + x, [x, x2]
    x = _leaf(0.3)
    if index == 6:
        return "8 diamonds in a row (256 paths)", _diamonds(8, x), [x]
    if index == 7:
        return "a leaf the output does not depend on (expect zeros)", x.sin() * 2, [_leaf(2.0)]
    if index < 14:
        return (f"random graph of (2, 2) tensors (seed {index - 8})",
                *random_graph_01(index - 8, 25, shapes=((2, 2),)))
    if index == 14:
        y = graph_01(17)[1]
        return f"a chain of {DEEP_01} additions", y, [nodes_by_id(y)[-1].variable]
    raise ValueError(f"no path-sum case {index} in 02_backward")


def _array(t):
    """A tensor's values as float64 (None for anything else)."""
    import chibigrad as torch
    return t.detach().numpy().astype(np.float64) if isinstance(t, torch.Tensor) else None


def observe_02(what, fn, recipe, call):
    """02_backward's observers."""
    import chibigrad as torch
    from chibigrad.autograd import engine
    if what == "sum_to":
        g = torch.tensor(recipe["grad"], dtype=getattr(torch, recipe.get("dtype", "float64")),
                         requires_grad=recipe.get("weight") is not None)
        with _blocked((torch.Tensor.sum_to_size,), SUM_TO_YOURSELF):
            out = call(fn, g, tuple(recipe["shape"]))
        got = {"type": type(out).__name__, "value": _array(out), "dtype": str(getattr(out, "dtype", "")),
               "grad_fn": getattr(out, "grad_fn", None) is not None, "grad": None}
        if got["grad_fn"] and recipe.get("weight") is not None:
            (out * torch.tensor(recipe["weight"], dtype=g.dtype)).sum().backward()
            got["grad"] = _array(g.grad)
        return got
    if what == "function":
        return _function_02(fn, recipe, call)
    if what == "order":
        _, roots = order_case_02(recipe["case"])
        with _blocked((engine.topological_order, engine._count_dependencies), ORDER_YOURSELF):
            got = call(fn, list(roots))
        return _as_ids(got, node_ids(list(roots)), lambda n: hasattr(n, "next_functions"))
    if what == "ordered_backward":
        outs, leaves, grads = ordered_graphs_02(recipe["seed"])
        with engine.use_ordering(lambda roots: call(fn, roots)):
            call(torch.autograd.backward, outs, grads)
        grads = [_array(t.grad) for t in leaves]
        for t in leaves:
            t.grad = None
        return grads
    if what == "path_sum":
        _, out, leaves = path_sum_case_02(recipe["case"])
        with _blocked((engine.execute,), NO_ENGINE):
            got = call(fn, out, leaves[recipe["leaf"]])
        return {"type": type(got).__name__, "value": _array(got)}
    raise ValueError(f"unknown observer {what!r}")


def _function_02(cls, recipe, call):
    """``cls.apply`` on the recipe's inputs: the output, its grad_fn, what backward returned (before the engine
    sums it), the gradients through the engine, and what a second backward through the freed graph raised."""
    import chibigrad as torch
    dtype = getattr(torch, recipe.get("dtype", "float64"))
    inputs = [torch.tensor(a, dtype=dtype, requires_grad=r) if r is not None else a
              for a, r in zip(recipe["inputs"], recipe["requires_grad"])]
    out = call(cls.apply, *inputs)
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__name__}
    got = {"type": "Tensor", "value": _array(out), "dtype": str(out.dtype),
           "grad_fn": None if out.grad_fn is None else out.grad_fn.name(), "raw": None, "grads": None, "again": None}
    if out.grad_fn is None:
        return got
    g = torch.tensor(recipe["grad"], dtype=dtype)
    raw = call(out.grad_fn.apply, g)
    raw = raw if isinstance(raw, tuple) else (raw,)
    got["raw"] = [None if r is None else _array(r) if isinstance(r, torch.Tensor) else ("@other", type(r).__name__)
                  for r in raw]
    wanted = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
    got["grads"] = [_array(x) for x in call(lambda: torch.autograd.grad(out, wanted, g, allow_unused=True))]
    try:
        out.backward(g)
    except Exception as err:
        got["again"] = f"{type(err).__name__}: {err}"[:500]
    return got


# ---- 03_graph_lifetime -------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)



# ---- 04_stop_gradient --------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)



# ---- 05_accumulation ---------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)



# ---- 06_custom_functions -----------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)



# ---- 07_checkpointing --------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)



# ---- 08_debugging ------------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)

def model_08(seed, width=16):
    """08's small regression network (4 inputs, 1 output, float64), initialised from ``seed``."""
    import chibigrad as torch
    from chibigrad import nn
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 1)).double()


def data_08(n, seed):
    """Inputs (n, 4) and targets cos(row sum) (n, 1), float64 tensors."""
    import chibigrad as torch
    inputs = np.random.default_rng(seed).standard_normal((n, 4))
    return torch.tensor(inputs), torch.tensor(np.cos(inputs.sum(1, keepdims=True)))


def td_case_08(recipe):
    """``(q_net, states, rewards, next_states)`` of a td_loss case."""
    states, _ = data_08(recipe["n"], recipe["seed"])
    next_states, rewards = data_08(recipe["n"], recipe["seed"] + 100)
    return model_08(recipe["seed"], recipe["width"]), states, rewards, next_states


LOGGER_STEPS_08 = (("a", True), ("b", True), ("a", True), ("a", False), ("b", False))  # (head, zero_grad first)


def logger_inputs_08():
    """The inputs of the logger's scenario: one batch per step, then the tied and the equal models' batches."""
    rng = np.random.default_rng(51)
    return [rng.standard_normal((5, 4)) for _ in LOGGER_STEPS_08], rng.standard_normal((3, 4)), \
        rng.standard_normal((4, 3))


def two_heads_08():
    """A shared body and two heads; ``forward(x, head)`` uses one, so the other gets no gradient. ``b.bias``
    needs no gradient (the logger must leave it out)."""
    import chibigrad as torch
    from chibigrad import nn

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 8)
            self.a = nn.Linear(8, 1)
            self.b = nn.Linear(8, 1)

        def forward(self, x, head):
            return getattr(self, head)(self.body(x).tanh())

    torch.manual_seed(50)
    model = TwoHeads().double()
    model.b.bias.requires_grad_(False)
    return model


def tied_08():
    """One weight ``w`` used twice in a forward."""
    import chibigrad as torch
    from chibigrad import nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.tensor(np.linspace(-1, 1, 16).reshape(4, 4)))

        def forward(self, x):
            return (x @ self.w).tanh() @ self.w

    return Tied()


def equal_layers_08():
    """Two layers holding equal values (zero biases, the same weights): still four different parameters."""
    import chibigrad as torch
    from chibigrad import nn
    torch.manual_seed(52)
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)).double()
    with torch.no_grad():
        model[0].bias.zero_()
        model[1].bias.zero_()
        model[1].weight.copy_(model[0].weight)
    return model


def observe_08(what, fn, recipe, call):
    """08_debugging's observers: the student's function on the recipe's case, the result and gradients as data."""
    if what == "train_08":
        return _train_08(fn, recipe, call)
    if what == "attention_08":
        return _attention_08(fn, recipe, call)
    if what == "td_loss_08":
        return _td_loss_08(fn, recipe, call)
    if what == "two_layer_08":
        return _two_layer_08(fn, recipe, call)
    if what == "grad_norm_logger_08":
        return _logger_08(fn, call)
    raise ValueError(f"unknown observer {what!r}")


def _raised(err):
    """What a call raised, as one line (the runner wraps the student's error: its cause)."""
    cause = err.__cause__ or err
    return f"{type(cause).__name__}: {cause}"[:2000]


def _train_08(train, recipe, call):
    """``train`` on a fresh model: the history as data, the saved bytes left and at the peak, the parameters.
    The counters are read through the engine's own reference to the memory module (a notebook that rebinds
    ``chibigrad.memory`` does not change what is measured)."""
    import gc
    from chibigrad.autograd import node
    memory = node.memory
    model, (inputs, targets) = model_08(recipe["seed"], recipe["width"]), data_08(recipe["n"], recipe["seed"])
    gc.collect()  # garbage from earlier calls is not this call's doing
    memory.reset_peak()
    start = memory.saved()
    history = call(lambda: train(model, inputs, targets, recipe["steps"], lr=recipe["lr"]))
    peak, left = memory.max_saved() - start, memory.saved() - start
    listed = history[:1000] if isinstance(history, list) else []
    return {"type": type(history).__name__, "length": len(history) if isinstance(history, list) else -1,
            "history": [v if type(v) is float else None for v in listed],
            "types": sorted({type(v).__name__ for v in listed}), "left": left, "peak": peak,
            "params": [_array(p) for p in model.parameters()]}


def _backward_08(out, upstream, call):
    """``(out * upstream).sum().backward()``; what it raised, or None."""
    import chibigrad as torch
    try:
        call(lambda: (out * torch.tensor(upstream)).sum().backward())
    except Exception as err:
        return _raised(err)
    return None


def _attention_08(attention_weights, recipe, call):
    import chibigrad as torch
    q = torch.tensor(recipe["q"], requires_grad=True)
    k = torch.tensor(recipe["k"], requires_grad=recipe["k_grad"])
    w = call(attention_weights, q, k)
    got = {"type": type(w).__name__, "value": _array(w), "backward": None, "q": None, "k": None}
    if isinstance(w, torch.Tensor):
        got["backward"] = _backward_08(w, recipe["upstream"], call)
        got.update(q=_array(q.grad), k=_array(k.grad))
    return got


def _td_loss_08(td_loss, recipe, call):
    import chibigrad as torch
    q_net, states, rewards, next_states = td_case_08(recipe)
    loss = call(lambda: td_loss(q_net, states, rewards, next_states, gamma=recipe["gamma"]))
    needs = isinstance(loss, torch.Tensor) and loss.requires_grad
    got = {"type": type(loss).__name__, "requires_grad": needs, "value": _array(loss), "grads": None}
    if needs:
        grads = call(lambda: torch.autograd.grad(loss, list(q_net.parameters()), allow_unused=True))
        got["grads"] = [_array(g) for g in grads]
    return got


def _two_layer_08(two_layer, recipe, call):
    import chibigrad as torch
    x = torch.tensor(recipe["x"], requires_grad=recipe["x_grad"])
    w1, b1, w2 = [torch.tensor(recipe[name], requires_grad=True) for name in ("w1", "b1", "w2")]
    out = call(two_layer, x, w1, b1, w2)
    got = {"type": type(out).__name__, "value": _array(out), "backward": None, "grads": {}}
    if isinstance(out, torch.Tensor):
        got["backward"] = _backward_08(out, recipe["upstream"], call)
        got["grads"] = {name: _array(t.grad) for name, t in (("w2", w2), ("b1", b1), ("w1", w1), ("x", x))}
    return got


def _norms_08(logger):
    """``logger.norms`` as data: its type and, for each entry, its name, its type, the values that are Python
    floats (None for any other) and the type names of the others."""
    norms = getattr(logger, "norms", None)
    if not isinstance(norms, dict):
        return {"type": type(norms).__name__, "items": []}
    items = []
    for name, values in norms.items():
        listed = list(values)[:1000] if isinstance(values, list) else []
        items.append([name if isinstance(name, str) else repr(name), type(values).__name__,
                      [v if type(v) is float else None for v in listed],
                      sorted({type(v).__name__ for v in listed} - {"float"})])
    return {"type": "dict", "items": items}


def _logger_08(GradNormLogger, call):
    """The logger's scenario (two loggers on a two-headed model, steps with and without zero_grad, remove(),
    a weight used twice, layers holding equal values): what each logger logged and the gradients at each step.
    An error ends the scenario: ``error`` says where."""
    import chibigrad as torch
    batches, tied_x, equal_x = logger_inputs_08()
    got, doing = {"error": None, "steps": []}, ["GradNormLogger(model)"]

    def run(what, fn, *args):
        doing[0] = what
        return call(fn, *args)

    try:
        model = two_heads_08()
        logger = run("GradNormLogger(model)", GradNormLogger, model)
        got["new"] = _norms_08(logger)
        second = run("a second GradNormLogger on the same model", GradNormLogger, model)
        for step, (head, clear) in enumerate(LOGGER_STEPS_08):
            if clear:
                model.zero_grad()
            x = torch.tensor(batches[step])
            run(f"backward at step {step}", lambda: model(x, head).pow(2).mean().backward())
            got["steps"].append({"grads": {n: _array(p.grad) for n, p in model.named_parameters()},
                                 "norms": _norms_08(logger)})
        got["second"] = _norms_08(second)
        run("logger.remove()", logger.remove)
        run("backward after remove()", lambda: model(torch.ones(2, 4, dtype=torch.float64), "a").sum().backward())
        got["removed"], got["second_after"] = _norms_08(logger), _norms_08(second)
        run("second.remove()", second.remove)
        got["hooks_left"] = [n for n, p in model.named_parameters() if p._post_accumulate_hooks or p._backward_hooks]
        for key, model, x, loss in (("tied", tied_08(), tied_x, lambda y: y.sum()),
                                    ("equal", equal_layers_08(), equal_x, lambda y: y.pow(2).sum())):
            logger = run(f"GradNormLogger on the {key} model", GradNormLogger, model)
            run(f"backward with a logger on the {key} model", lambda: loss(model(torch.tensor(x))).backward())
            got[key] = _norms_08(logger)
            run(f"logger.remove() on the {key} model", logger.remove)
    except Exception as err:
        got["error"] = [doing[0], _raised(err)]
    return got
