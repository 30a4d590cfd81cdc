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
    if kind in ("graph_01", "case_02", "case_03", "case_04", "case_05", "case_06", "case_07", "case_08", "compile_graph",
                "gpu"):  # 01-09 but 01b, 06b, 06c: the observer builds the case (07b: the graph, then the pass gets it)
        return (), {"recipe": recipe}
    if kind == "compiled_step":
        return (), {"optimizer": recipe["optimizer"]}
    if kind == "function":  # a custom Function's inputs (06b): tensors of one dtype, tangents, constant arguments
        import chibigrad as torch
        dtype = getattr(torch, recipe.get("dtype", "float64"))
        inputs = [torch.tensor(a, dtype=dtype) for a in recipe["inputs"]]
        tangents = [None if t is None else torch.tensor(t, dtype=dtype) for t in recipe["tangents"]]
        return (), {"inputs": inputs, "tangents": tangents, "extra": list(recipe.get("extra", ()))}
    if kind in VMAP_RECIPES:
        return VMAP_RECIPES[kind](recipe, namespace)
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
    if what in ("sum_to", "function", "order", "ordered_backward", "path_sums"):
        return observe_02(what, fn, context["recipe"], call)
    if what in OBSERVERS_03:
        return OBSERVERS_03[what](fn, context["recipe"], call)
    if what in OBSERVERS_04:
        return OBSERVERS_04[what](fn, context["recipe"], call)
    if what in OBSERVERS_05:
        return OBSERVERS_05[what](fn, context["recipe"], call)
    if what in ("function_06", "saved_06", "check_grad_06"):
        return observe_06(what, fn, context["recipe"], call)
    if what.endswith("_07"):
        return observe_07(what, fn, context["recipe"], call)
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
DEEP_01 = 25_000  # additions in the deep chain: far past Python's recursion limit
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
    if what == "path_sums":  # one call a graph: fn for each of its leaves
        _, out, leaves = path_sum_case_02(recipe["case"])
        got = []
        with _blocked((engine.execute,), NO_ENGINE):
            for leaf in leaves:
                result = call(fn, out, leaf)
                got.append({"type": type(result).__name__, "value": _array(result)})
        return got
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

# Nodes, saved bytes and gradients of the student's LeakyReLU, per_loss_grads, hvp and count_alive_graphs, read in
# the student process; the cases are numbered or written out, the expected answers stay with the judge.

HVP_YOURSELF_03 = ("write hvp with torch.autograd.grad yourself: do not call torch.autograd.functional or "
                   "torch.func, which compute Hessian products for you")
PER_LOSS_CASES_03, HVP_CASES_03 = 9, 14  # per_loss_case_03(0 ... 8), hvp_case_03(0 ... 13)


@contextlib.contextmanager
def _no_cycle_collection_03():
    """Memory is measured in here: no automatic cycle collection frees older garbage meanwhile, and objects that
    exist already are left out of explicit collections (``gc.freeze``), which then take milliseconds."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def _bytes_03():
    """``(saved, allocated)`` bytes, read from chibigrad.memory's counters themselves (counting from the first
    read), not through ``memory.saved()``, which a notebook may have replaced."""
    from chibigrad import memory
    stats = memory._counters()[0]
    return stats["saved"], stats["allocated"]


def _saved_info(node):
    """``[(dtype name, nbytes, released)]`` of what ``node`` saved for backward."""
    return [(str(dtype), int(nbytes), bool(released)) for _, dtype, nbytes, released in node.saved_tensors_info]


def _raw_03(values):
    """What a backward returned, as data: arrays, None, or ``("@other", type name)``."""
    import chibigrad as torch
    values = values if isinstance(values, tuple) else (values,)
    return [None if v is None else _array(v) if isinstance(v, torch.Tensor) else ("@other", type(v).__name__)
            for v in values]


def _error_03(fn):
    """``"Type: message"`` of what ``fn()`` raised, or None when it worked."""
    try:
        fn()
    except Exception as err:
        return f"{type(err).__name__}: {err}"[:500]
    return None


def _leaky_03(cls, recipe, call):
    """``cls.apply(x, slope)``: the result, its node, the bytes it saved, backward's own return value, and the
    saved bytes left once the result is deleted."""
    import chibigrad as torch
    dtype = getattr(torch, recipe["dtype"])
    x = torch.tensor(recipe["x"], dtype=dtype, requires_grad=True)
    g = torch.tensor(recipe["grad"], dtype=dtype)
    with _no_cycle_collection_03():
        before = _bytes_03()[0]
        y = call(lambda: cls.apply(x, recipe["slope"]))
        if not isinstance(y, torch.Tensor):
            return {"type": type(y).__name__}
        got = {"type": "Tensor", "dtype": str(y.dtype).replace("torch.", ""), "value": _array(y),
               "grad_fn": None if y.grad_fn is None else y.grad_fn.name(), "kept": _bytes_03()[0] - before,
               "node_saved": [], "raw": None}
        if y.grad_fn is not None:
            got["node_saved"] = _saved_info(y.grad_fn)
            got["raw"] = _raw_03(call(y.grad_fn.apply, g))
        del y
        got["left"] = _bytes_03()[0] - before
    return got


def _leaky_grad_03(cls, recipe, call):
    """x.grad after ``cls.apply(x, slope).backward(grad)`` (float64)."""
    import chibigrad as torch
    x = torch.tensor(recipe["x"], dtype=torch.float64, requires_grad=True)
    call(lambda: cls.apply(x, recipe["slope"]).backward(torch.tensor(recipe["grad"], dtype=torch.float64)))
    return _array(x.grad)


def _leaky_lifetime_03(cls, recipe, call):
    """Backward through ``cls.apply(x, 0.1)``: what stays alive after it, a second backward, retain_graph, and
    create_graph (``x`` and ``grad``: 1000 elements)."""
    import chibigrad as torch
    x = torch.tensor(recipe["x"], requires_grad=True)
    g = torch.tensor(recipe["grad"])
    with _no_cycle_collection_03():
        saved, allocated = _bytes_03()
        y = call(lambda: cls.apply(x, 0.1))
        if not isinstance(y, torch.Tensor):
            return {"type": type(y).__name__}
        call(lambda: y.backward(g))
        now = _bytes_03()
        got = {"type": "Tensor", "saved_after": now[0] - saved, "again": _error_03(lambda: y.backward(g)),
               "extra_after": now[1] - allocated - y._array.nbytes - (0 if x.grad is None else x.grad._array.nbytes)}
    x.grad = None
    y = call(lambda: cls.apply(x, 0.1))
    call(lambda: y.backward(g, retain_graph=True))
    got["first"] = _array(x.grad)
    call(lambda: y.backward(g))
    got["second"] = _array(x.grad)
    got["third"] = _error_03(lambda: y.backward(g))
    x3 = torch.tensor(recipe["x"][:3], requires_grad=True)
    up = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    dx, = call(lambda: torch.autograd.grad(cls.apply(x3, 0.1), x3, up, create_graph=True))
    got["create_graph"] = bool(dx.requires_grad)
    return got


def _leaky_deep_03(cls, recipe, call):
    """``y = -cls.apply(y, -1.0)`` ``depth`` times: the result, bytes saved by LeakyReLUBackward nodes, x.grad,
    and the saved bytes left after backward."""
    import chibigrad as torch
    x = torch.tensor(recipe["x"], requires_grad=True)
    before = _bytes_03()[0]

    def chain():
        y = x
        for _ in range(recipe["depth"]):
            y = -cls.apply(y, -1.0)
        return y
    y = call(chain)
    if not isinstance(y, torch.Tensor):
        return {"type": type(y).__name__}
    masks = sum(info[1] for node in nodes_by_id(y) if node.name() == "LeakyReLUBackward"
                for info in _saved_info(node))
    value = _array(y)
    call(lambda: y.backward(torch.ones_like(y)))
    return {"type": "Tensor", "value": value, "masks": masks, "grad": _array(x.grad),
            "left": _bytes_03()[0] - before}


def _mlp_params_03(rng, sizes):
    import chibigrad as torch
    return [torch.tensor(rng.standard_normal(s) * 0.5, requires_grad=True) for s in sizes]


def _shared_encoder_03(seed, heads=2):
    """``(losses, params)``: ``heads`` linear heads on a shared tanh encoder, each a mean-squared loss."""
    import chibigrad as torch
    import chibigrad.nn.functional as F
    rng = np.random.default_rng(seed)
    w, b, *head_ws = _mlp_params_03(rng, [(3, 4), (3,)] + [(k + 1, 3) for k in range(heads)])
    features = F.linear(torch.tensor(rng.standard_normal((5, 4))), w, b).tanh()
    return [F.linear(features, hw).pow(2).mean() for hw in head_ws], [w, b, *head_ws]


def per_loss_case_03(index):
    """``(description, losses, params)``: per_loss_grads' case ``index``, built fresh (backward frees it)."""
    if index == 0:
        return ("two heads on a shared encoder", *_shared_encoder_03(70))
    if index == 1:
        return ("three heads on a shared encoder", *_shared_encoder_03(71, heads=3))
    if index == 2:
        losses, params = _shared_encoder_03(72)
        return "a single loss", losses[:1], params
    if index == 3:
        losses, params = _shared_encoder_03(73)
        return "the same loss twice", [losses[0], losses[0]], params
    if index == 4:
        losses, params = _shared_encoder_03(74)
        return "only the encoder's parameters (autograd.grad does not run the heads' weight nodes)", losses, params[:2]
    if index < 8:
        import chibigrad as torch
        seed = index - 5
        out, leaves = random_graph_01(seed, 30, shapes=((3,),))
        other = torch.tensor(np.random.default_rng(75 + seed).uniform(0.5, 1.5, 3), requires_grad=True)
        losses = [(out * other).sum(), out.sin().sum() * 2, (leaves[0] * other).tanh().sum()]
        return f"three losses on a random graph (seed {seed})", losses, leaves + [other]
    if index == 8:
        x = _leaf(0.1)
        trunk = x
        for _ in range(1500):
            trunk = (trunk * 0.999).sin()
        return ("two losses on a trunk of 3000 nodes (deeper than Python's recursion limit)",
                [trunk * trunk, trunk.cos()], [x])
    raise ValueError(f"no per_loss_grads case {index} in 03_graph_lifetime")


def _per_loss_03(fn, recipe, call):
    """``fn(losses, params)`` with every ``.grad`` set to 7: the gradients as data, whether each ``.grad`` was left
    alone, and the nodes of the losses' graphs that still hold saved tensors."""
    import chibigrad as torch
    _, losses, params = per_loss_case_03(recipe["case"])
    for p in params:
        p.grad = torch.full_like(p, 7.0)
    before = [p.grad for p in params]
    got = call(fn, losses, params)
    kept = [p.grad is b and bool(np.all(b._array == 7.0)) for p, b in zip(params, before)]
    held = [n.name() for n in nodes_by_id([t.grad_fn for t in losses if t.grad_fn is not None])
            if any(not released for *_, released in _saved_info(n))]
    if not isinstance(got, (list, tuple)):
        return {"type": type(got).__name__, "losses": [], "kept": kept, "held": held}
    items = [{"type": type(g).__name__, "grads": _raw_03(tuple(g)) if isinstance(g, (list, tuple)) else [],
              "grad_fn": [getattr(t, "grad_fn", None) is not None for t in g] if isinstance(g, (list, tuple)) else []}
             for g in got]
    return {"type": "list", "losses": items, "kept": kept, "held": held}


def _random_function_03(seed, n_ops=25):
    """A smooth random function of 3 parameters of shape (3,), replayed from a seed."""
    rng = np.random.default_rng(seed)
    plan = []
    for k in range(n_ops):
        if rng.random() < 0.4:
            plan.append((_UNARY_01[rng.integers(len(_UNARY_01))], int(rng.integers(k + 3)), None))
        else:
            plan.append((_BINARY_01[rng.integers(len(_BINARY_01))], int(rng.integers(k + 3)),
                         int(rng.integers(k + 3))))

    def f(*params):
        values = list(params)
        for op, a, b in plan:
            values.append(op(values[a]) if b is None else op(values[a], values[b]).tanh())
        return values[-1].sum() + sum((v * v).sum() for v in values[-3:])
    return f


def _mlp_loss_03():
    import chibigrad as torch
    import chibigrad.nn.functional as F
    rng = np.random.default_rng(11)
    inputs, targets = torch.tensor(rng.standard_normal((6, 4))), torch.tensor(rng.standard_normal((6, 2)))
    return lambda w1, b1, w2: (F.linear(F.linear(inputs, w1, b1).tanh(), w2) - targets).pow(2).mean()


def _deep_03(x, y):
    for _ in range(200):
        x = (x * y).sin() + x * 0.5
    return x.sum()


def hvp_case_03(index):
    """``(description, f, params, vectors)``: hvp's case ``index`` (params and vectors as arrays; case 13 is
    float32)."""
    import chibigrad as torch
    if index == 13:
        return "hvp of (x ** 4).sum() at [0.5, -1] along [1, 1] (float32)", lambda x: (x ** 4).sum(), \
            [np.array([0.5, -1.0], dtype=np.float32)], [np.ones(2, dtype=np.float32)]
    a = np.random.default_rng(11).standard_normal((4, 4))
    a = torch.tensor(a + a.T)
    two = torch.tensor(2.0, dtype=torch.float64)
    cases = [
        ("a quadratic form 0.5 x^T A x (H = A)", lambda x: 0.5 * (x * (a @ x)).sum(), [(4,)]),
        ("(x ** 3).sum() * y", lambda x, y: (x ** 3).sum() * y, [(3,), ()]),
        ("f(x, y) = (x * y).sin().sum() on a (2, 3) x and a (3,) y (broadcasting)", lambda x, y: (x * y).sin().sum(),
         [(2, 3), (3,)]),
        ("f linear in y: (x ** 2).sum() + (3 * y).sum()", lambda x, y: (x ** 2).sum() + (3 * y).sum(), [(2,), (2,)]),
        ("f does not use z: (x * y).tanh().sum()", lambda x, y, z: (x * y).tanh().sum(), [(3,), (3,), (2,)]),
        ("f linear in everything: (2 * x).sum() + y", lambda x, y: (2 * x).sum() + y, [(3,), ()]),
        ("(x * c).sum() with a constant tensor c (linear)", lambda x: (x * two).sum(), [(2,)]),
        *[(f"a random smooth function (seed {seed})", _random_function_03(seed), [(3,), (3,), (3,)])
          for seed in range(4)],
        ("the loss of a small MLP", _mlp_loss_03(), [(5, 4), (5,), (2, 5)]),
        ("a chain of 200 steps x = (x * y).sin() + x * 0.5", _deep_03, [(2,), (2,)]),
    ]
    what, f, shapes = cases[index]
    rng = np.random.default_rng(120 + index)
    return what, f, [rng.uniform(-1, 1, s) for s in shapes], [rng.standard_normal(s) for s in shapes]


def _hessian_helpers_03():
    """chibigrad's functions that compute a Hessian-vector product, or a Hessian, for the caller."""
    from chibigrad import func
    from chibigrad.autograd import functional
    return [functional.hvp, functional.vhp, functional.hessian, functional.jacobian, functional.jvp, functional.vjp,
            func.grad, func.grad_and_value, func.vjp, func.jvp, func.jacrev, func.jacfwd, func.hessian]


def _hvp_03(fn, recipe, call):
    """``fn(f, params, vectors)`` with chibigrad's Hessian helpers blocked: the results as data, their grad_fn and
    dtype, and whether a parameter got a ``.grad``."""
    import chibigrad as torch
    _, f, params, vectors = hvp_case_03(recipe["case"])
    params = [torch.tensor(p, requires_grad=True) for p in params]
    vectors = [torch.tensor(v) for v in vectors]
    with _blocked(_hessian_helpers_03(), HVP_YOURSELF_03):
        got = call(fn, f, params, vectors)
    if not isinstance(got, (list, tuple)):
        return {"type": type(got).__name__}
    return {"type": type(got).__name__, "values": _raw_03(tuple(got)),
            "grad_fn": [getattr(h, "grad_fn", None) is not None for h in got],
            "dtype": [str(getattr(h, "dtype", "")).replace("torch.", "") for h in got],
            "param_grads": [p.grad is not None for p in params]}


ALIVE_KINDS_03 = ("retain_graph=True, nothing kept", "nothing kept", "total = total + loss",
                  "retain_graph=True and total = total + loss", "a list of the losses", "a list of loss.detach()",
                  "a list of loss.item()", "the last loss, kept for printing", "every other loss",
                  "loss.grad_fn kept in a list", "hook that reads its own loss (a reference cycle)")


def _loop_03(kind):
    """A step function of a small training loop that keeps graphs alive in one of several ways."""
    import chibigrad as torch
    import chibigrad.nn.functional as F
    rng = np.random.default_rng(len(kind))
    w = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    inputs = torch.tensor(rng.standard_normal((5, 4)))
    box = {"total": 0.0, "kept": [], "count": 0}

    def step():
        loss = F.linear(inputs, w).tanh().pow(2).mean()
        if kind == "hook that reads its own loss (a reference cycle)":
            loss.register_hook(lambda grad: box["kept"].append(loss.item()) or None)
        loss.backward(retain_graph=kind.startswith("retain_graph"))
        box["count"] += 1
        if kind.endswith("total = total + loss"):
            box["total"] = box["total"] + loss
        elif kind == "a list of the losses":
            box["kept"].append(loss)
        elif kind == "a list of loss.detach()":
            box["kept"].append(loss.detach())
        elif kind == "a list of loss.item()":
            box["kept"].append(loss.item())
        elif kind == "the last loss, kept for printing":
            box["last"] = loss
        elif kind == "every other loss":
            if box["count"] % 2:
                box["kept"].append(loss)
        elif kind == "loss.grad_fn kept in a list":
            box["kept"].append(loss.grad_fn)
        w.grad = None
        return loss
    return step, box


def _alive_03(fn, recipe, call):
    """``fn(step, steps)`` on loop ``kind`` with automatic cycle collection off (as between two collections):
    the int it returned (None for anything else) and how many times it called step()."""
    step, box = _loop_03(ALIVE_KINDS_03[recipe["kind"]])
    with _no_cycle_collection_03():
        got = call(fn, step, recipe["steps"])
    is_int = isinstance(got, (int, np.integer)) and not isinstance(got, bool)
    return {"value": int(got) if is_int else None, "type": type(got).__name__, "count": box["count"]}


OBSERVERS_03 = {"leaky": _leaky_03, "leaky_grad": _leaky_grad_03, "leaky_lifetime": _leaky_lifetime_03,
                "leaky_deep": _leaky_deep_03, "per_loss": _per_loss_03, "hvp": _hvp_03, "alive": _alive_03}



# ---- 04_stop_gradient --------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)

@contextlib.contextmanager
def _collection_paused_04():
    """Memory is measured in here: no automatic cycle collection frees older garbage meanwhile."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _named_state_04(module):
    """``[(name, tensor)]``: every parameter, then every buffer of ``module``."""
    return [*module.named_parameters(), *module.named_buffers()]


def _fill_04(module, rng):
    """Every parameter and buffer of ``module`` set from ``rng``: the same values on both sides, whatever the
    notebook did to chibigrad's random state (running variances positive, counters whole numbers)."""
    import chibigrad as torch
    with torch.no_grad():
        for name, t in _named_state_04(module):
            shape = tuple(t.shape)
            values = rng.integers(0, 50, shape) if name.endswith("num_batches_tracked") else \
                rng.uniform(0.5, 2.0, shape) if name.endswith("running_var") else rng.standard_normal(shape)
            t.copy_(torch.tensor(values, dtype=t.dtype))


def ema_pair_04(spec):
    """``(target, online)`` for ema_update_: ``depth`` blocks of Linear(4, 4), BatchNorm1d (if ``batchnorm``)
    and Tanh, then Linear(4, 2); the target a deepcopy with its own values, all drawn from ``seed``."""
    import copy
    import chibigrad as torch
    from chibigrad import nn
    layers = []
    for _ in range(spec["depth"]):
        layers += [nn.Linear(4, 4)] + ([nn.BatchNorm1d(4)] if spec["batchnorm"] else []) + [nn.Tanh()]
    online = nn.Sequential(*layers, nn.Linear(4, 2)).to(getattr(torch, spec["dtype"]))
    target = copy.deepcopy(online).requires_grad_(spec["requires_grad"])
    rng = np.random.default_rng(spec["seed"])
    _fill_04(target, rng)
    _fill_04(online, rng)
    return target, online


def _ema_update_04(fn, target, online, decay, call):
    """One ``fn(target, online, decay)``: the bytes of saved tensors it left, each target parameter and buffer
    after it (the same tensor and array? a leaf? its version?), and which of online's tensors changed."""
    from chibigrad import memory
    params, buffers = dict(target.named_parameters()), dict(target.named_buffers())
    arrays = {n: t._array for n, t in [*params.items(), *buffers.items()]}
    versions, flags = {n: p._version for n, p in params.items()}, {n: p.requires_grad for n, p in params.items()}
    online_before = {n: t._array.copy() for n, t in _named_state_04(online)}
    with _collection_paused_04():
        saved = memory.saved()
        call(fn, target, online, decay)
        grown = memory.saved() - saved

    def read():
        now, online_buffers = dict(_named_state_04(target)), dict(online.named_buffers())
        got = {"saved": grown, "params": {}, "buffers": {}}
        for n, p in params.items():
            t = now.get(n)
            got["params"][n] = {"same": t is p, "same_array": t._array is arrays[n], "leaf": t.grad_fn is None,
                                "requires_grad_kept": t.requires_grad == flags[n], "value": _array(t),
                                "version_grew": t._version > versions[n]}
        for n, b in buffers.items():
            t = now.get(n)
            got["buffers"][n] = {"same": t is b, "same_array": t._array is arrays[n], "value": _array(t),
                                 "shares_online": bool(np.shares_memory(t._array, online_buffers[n]._array))}
        got["online_changed"] = [n for n, t in _named_state_04(online)
                                 if not np.array_equal(t._array, online_before[n])]
        got["online_grads"] = [n for n, t in online.named_parameters() if t.grad is not None]
        return got
    return call(read)


def _observe_ema_04(fn, recipe, call):
    """``ema_update_`` on a fresh pair once per decay (one after the other); with ``graph``, a graph that saved
    the target's weights waits for backward meanwhile, and what its backward raised afterwards."""
    import chibigrad as torch
    target, online = ema_pair_04(recipe["pair"])
    out = None
    if recipe.get("graph"):
        x = torch.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
        out = target(x.to(getattr(torch, recipe["pair"]["dtype"]))).sum()
    got = {"updates": [_ema_update_04(fn, target, online, decay, call) for decay in recipe["decays"]],
           "backward": None}
    if out is not None:
        try:
            out.backward()
            got["backward"] = ""
        except Exception as err:
            got["backward"] = f"{type(err).__name__}: {err}"[:500]
    return got


def fine_tune_model_04(kind):
    """fine_tune's models: ``"sequential12"`` (Linear, BatchNorm1d six times: modules "0" ... "11") or ``"net"``
    (nested names: encoder.layers.0 ... encoder.layers.11, encoder.norm, head_bn, head)."""
    from chibigrad import nn
    if kind == "sequential12":
        return nn.Sequential(*[nn.Linear(4, 4) if k % 2 == 0 else nn.BatchNorm1d(4) for k in range(12)])

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Module()
            self.encoder.layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(12)])
            self.encoder.norm = nn.BatchNorm1d(4)
            self.head_bn = nn.BatchNorm1d(4)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            for layer in self.encoder.layers:
                x = layer(x).tanh()
            return self.head(self.head_bn(self.encoder.norm(x)))
    return Net()


def _observe_fine_tune_04(fn, recipe, call):
    """``fine_tune`` on a fresh model in training mode: what requires grad, what the optimizer holds (by name)
    and its settings, each BatchNorm's mode, the bytes a forward pass saved, and after one step which tensors
    changed and which parameters got a ``.grad``."""
    import chibigrad as torch
    from chibigrad import memory, nn, optim
    model = fine_tune_model_04(recipe["model"]).train()
    inputs = torch.tensor(np.random.default_rng(8).standard_normal((10, 4)), dtype=torch.float32)
    opt = call(fn, model, list(recipe["trainable"]), recipe["lr"])
    names = {id(p): n for n, p in model.named_parameters()}
    got = {"type": type(opt).__name__, "sgd": isinstance(opt, optim.SGD),
           "trainable": [n for n, p in model.named_parameters() if p.requires_grad],
           "training": {n: m.training for n, m in model.named_modules() if isinstance(m, nn.BatchNorm1d)}}
    if not got["sgd"]:
        return got
    got["held"] = [names.get(id(p), "(not a parameter of the model)") for g in opt.param_groups for p in g["params"]]
    got["settings"] = [{"momentum": g.get("momentum"), "lr": g.get("lr")} for g in opt.param_groups]
    before = {n: t._array.copy() for n, t in _named_state_04(model)}
    with _collection_paused_04():
        saved = memory.saved()
        loss = call(lambda: model(inputs).pow(2).mean())
        got["saved"] = memory.saved() - saved
    call(lambda: (loss.backward(), opt.step()))
    got["changed"] = [n for n, t in _named_state_04(model) if not np.array_equal(t._array, before[n])]
    got["grads"] = [n for n, p in model.named_parameters() if p.grad is not None]
    return got


def critic_04(weights, dtype):
    """gradient_penalty's critic with the given weights: ``[w, b]`` one linear layer; ``[w1, b1, w2, b2]``
    Linear, tanh, Linear on each sample flattened."""
    import chibigrad as torch
    from chibigrad import nn

    class Critic(nn.Module):
        def __init__(self, size, width):
            super().__init__()
            self.hidden, self.out = nn.Linear(size, width), nn.Linear(width, 1)

        def forward(self, x):
            return self.out(self.hidden(x.reshape(x.shape[0], -1)).tanh())
    w = weights[0]
    critic = nn.Linear(w.shape[1], w.shape[0]) if len(weights) == 2 else Critic(w.shape[1], w.shape[0])
    critic = critic.to(getattr(torch, dtype))
    with torch.no_grad():
        for p, value in zip(critic.parameters(), weights):
            p.copy_(torch.tensor(value, dtype=p.dtype))
    return critic


def _observe_penalty_04(fn, recipe, call):
    """``gradient_penalty(D, real, fake, alpha)`` with ``fake = G(noise)`` (or ``real`` itself without a
    generator): the penalty, whether the inputs or D's ``.grad`` changed, and after ``penalty.backward()``
    whether G got a gradient and D's first weight's gradient."""
    import chibigrad as torch
    dtype = getattr(torch, recipe.get("dtype", "float64"))
    D = critic_04(recipe["critic"], recipe.get("dtype", "float64"))
    real, alpha = torch.tensor(recipe["real"], dtype=dtype), torch.tensor(recipe["alpha"], dtype=dtype)
    G = critic_04(recipe["generator"], recipe.get("dtype", "float64")) if "generator" in recipe else None
    fake = real if G is None else G(torch.tensor(recipe["noise"], dtype=dtype))
    node = fake.grad_fn
    penalty = call(fn, D, real, fake, alpha)
    if not isinstance(penalty, torch.Tensor):
        return {"type": type(penalty).__name__}
    got = {"type": "Tensor", "shape": list(penalty.shape), "value": _array(penalty), "grad_fn": None,
           "real_changed": real.requires_grad or real.grad is not None, "fake_changed": fake.grad_fn is not node,
           "d_grads": [n for n, p in D.named_parameters() if p.grad is not None], "g_grads": [], "weight_grad": None}
    got["grad_fn"] = penalty.grad_fn is not None
    if got["grad_fn"]:
        call(penalty.backward)
        got["g_grads"] = [] if G is None else [n for n, p in G.named_parameters() if p.grad is not None]
        got["weight_grad"] = _array(next(iter(D.parameters())).grad)
    return got


def _observe_binarised_04(SignSTE, recipe, call):
    """SGD steps of a linear layer whose weight is ``SignSTE.apply(w)``: ``w`` after each step."""
    import chibigrad as torch
    import chibigrad.nn.functional as F
    from chibigrad import optim
    w = torch.tensor(recipe["w"], requires_grad=True)
    inputs, targets = torch.tensor(recipe["inputs"]), torch.tensor(recipe["targets"])
    opt = optim.SGD([w], lr=recipe["lr"])

    def step():
        opt.zero_grad()
        ((F.linear(inputs, SignSTE.apply(w)) - targets) ** 2).mean().backward()
        opt.step()
        return _array(w)
    return [call(step) for _ in range(recipe["steps"])]


OBSERVERS_04 = {"ema": _observe_ema_04, "fine_tune": _observe_fine_tune_04, "penalty": _observe_penalty_04,
                "binarised": _observe_binarised_04}  # SignSTE itself: 02's "function" observer


# ---- 05_accumulation ---------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)
# The cases are built on both sides from their recipes; the expected gradients, the Lion rule and the norms are
# the judge's. What the student process hands back: gradients as arrays (also at every micro-batch's forward),
# the parameters and momentum after each step, the norms and the clipped gradients.

CLIP_YOURSELF = "write the clipping yourself: do not call chibigrad's clip_grad_norm_"


def accumulate_case_05(recipe):
    """``(model, loss_fn, inputs, targets, prior grads)``: a Linear-Tanh-Linear model of the recipe's seed and
    width in float64, a batch of ``samples`` rows, and what ``.grad`` held before (``prior``: random, or None)."""
    import chibigrad as torch
    import chibigrad.nn.functional as F
    from chibigrad import nn
    seed, width, outputs = recipe["seed"], recipe.get("width", 6), recipe.get("outputs", 2)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, outputs)).to(torch.float64)
    rng = np.random.default_rng(seed)
    inputs = torch.tensor(rng.standard_normal((recipe["samples"], 4)))
    if recipe.get("loss") == "cross_entropy":
        loss_fn, targets = F.cross_entropy, torch.tensor(rng.integers(0, outputs, recipe["samples"]))
    else:
        loss_fn, targets = F.mse_loss, torch.tensor(rng.standard_normal((recipe["samples"], outputs)))
    prior = [rng.standard_normal(tuple(p.shape)) if recipe.get("prior") else None for p in model.parameters()]
    return model, loss_fn, inputs, targets, prior


def _accumulate_05(fn, recipe, call):
    """``accumulate`` on the recipe's case: the loss it returned, the grads after it, the saved tensors' peak,
    and the rows and grads at each call of ``loss_fn`` that builds a graph (backward ran before the next one?)."""
    import chibigrad as torch
    from chibigrad import memory
    model, loss_fn, inputs, targets, prior = accumulate_case_05(recipe)
    params = list(model.parameters())
    for p, g in zip(params, prior):
        p.grad = None if g is None else torch.tensor(g)
    forwards = []

    def watched(output, target):
        if torch.is_grad_enabled():
            forwards.append({"rows": len(target), "grads": [_array(p.grad) for p in params]})
        return loss_fn(output, target)
    with memory.measure() as measured:
        loss = call(fn, model, watched, inputs, targets, recipe["micro_batch"])
    return {"type": type(loss).__name__, "loss": loss if isinstance(loss, float) else None,
            "grads": [_array(p.grad) for p in params], "forwards": forwards, "saved_peak": int(measured.saved_peak)}


def lion_case_05(recipe):
    """``(initial values, gradients per step)`` as arrays for a Lion run: each step gives each parameter a random
    gradient, zeros or None."""
    rng = np.random.default_rng(recipe["seed"])
    values = [rng.standard_normal(tuple(s)) for s in recipe["shapes"]]
    steps = []
    for _ in range(recipe["steps"]):
        kinds = [rng.choice(["random", "random", "none", "zeros"]) for _ in values]
        steps.append([None if k == "none" else np.zeros(v.shape) if k == "zeros" else rng.standard_normal(v.shape)
                      for k, v in zip(kinds, values)])
    return values, steps


def _lion_state(opt, p):
    state = getattr(opt, "state", {}).get(p)
    return {"has": bool(state), "exp_avg": _array(state.get("exp_avg")) if isinstance(state, dict) else None}


def _lion_run_05(Lion, recipe, call):
    """The recipe's parameter groups stepped ``steps`` times: after each step, every parameter's values, whether
    it is still the same leaf on the same array, whether its version grew, and its state."""
    import chibigrad as torch
    dtype = getattr(torch, recipe.get("dtype", "float64"))
    values, steps = lion_case_05(recipe)
    params = [torch.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    arrays = [p._array for p in params]
    opt = call(Lion, [dict(g, params=[params[i] for i in g["params"]]) for g in recipe["groups"]])
    seen = []
    for grads in steps:
        for p, g in zip(params, grads):
            p.grad = None if g is None else torch.tensor(g, dtype=dtype)
        versions = [p._version for p in params]
        result = call(opt.step)
        seen.append({"returned": repr(result)[:80], "values": [_array(p) for p in params],
                     "same_array": [p._array is a for p, a in zip(params, arrays)],
                     "leaf": [p.is_leaf and p.grad_fn is None and p.requires_grad for p in params],
                     "dtype": [str(p.dtype) for p in params],
                     "moved": [p._version > v for p, v in zip(params, versions)],
                     "state": [_lion_state(opt, p) for p in params]})
    return seen


def _plain_05(value):
    """A hyper-parameter as data: numbers and sequences of them as they are, anything else as its repr."""
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (tuple, list)):
        return [_plain_05(v) for v in value]
    return repr(value)[:80]


def _lion_05(Lion, recipe, call):
    """Lion's defaults, a run of steps, zero_grad's two modes, or a closure, as data."""
    import chibigrad as torch
    if recipe["case"] == "run":
        return _lion_run_05(Lion, recipe, call)
    if recipe["case"] == "defaults":
        group = call(Lion, [torch.zeros(2, requires_grad=True)]).param_groups[0]
        return {k: _plain_05(v) for k, v in group.items() if k != "params"}
    if recipe["case"] == "set_to_none":  # a step, a step after zero_grad(set_to_none=False), one after zero_grad()
        w = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)
        opt = call(lambda: Lion([w], lr=0.1))
        w.grad = torch.tensor([1.0, -1.0], dtype=torch.float64)
        values = [_array(w)]
        for zero in (None, False, True):
            if zero is not None:
                opt.zero_grad(set_to_none=zero)
            call(opt.step)
            values.append(_array(w))
        return values
    if recipe["case"] == "closure":  # step(closure) under no_grad: the closure must run with grad enabled
        w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        opt, losses = call(lambda: Lion([w], lr=0.1)), []

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            losses.append(loss.item())
            return loss
        with torch.no_grad():
            result = call(opt.step, closure)
        return {"calls": len(losses), "returned": _array(result), "type": type(result).__name__, "w": _array(w)}
    raise ValueError(f"no Lion case {recipe['case']!r} in 05_accumulation")


def clip_case_05(recipe):
    """Per group, the gradient arrays (None: no gradient) in the recipe's dtype, and each group's own max_norm."""
    rng = np.random.default_rng(recipe["seed"])
    dtype = np.dtype(recipe.get("dtype", "float64"))
    if "bad" in recipe:  # two groups, the second's gradient holds a non-finite number
        return [np.ones(2, dtype), np.array([1.0, recipe["bad"]], dtype)], [None, None]
    grads = [[None if s is None else (rng.standard_normal(tuple(s)) * rng.uniform(0.1, 3)).astype(dtype)
              for s in shapes] for shapes, _ in recipe["groups"]]
    return grads, [own for _, own in recipe["groups"]]


def _clip_05(fn, recipe, call):
    """The student's clipping on an SGD optimizer of the recipe's groups: the norms it returned, the gradients
    after it and whether each is the same tensor on the same array (scaled in place); with ``bad``, the error it
    raised with error_if_nonfinite=True, and whether it raised again with False."""
    import chibigrad as torch
    from chibigrad import optim
    from chibigrad.nn.utils import clip_grad
    grads, own = clip_case_05(recipe)
    if "bad" in recipe:
        grads = [[g] for g in grads]
    groups = [[torch.zeros(1 if g is None else g.shape, dtype=getattr(torch, recipe.get("dtype", "float64")),
                           requires_grad=True) for g in gs] for gs in grads]
    for params, gs in zip(groups, grads):
        for p, g in zip(params, gs):
            p.grad = None if g is None else torch.tensor(g, dtype=p.dtype)
    opt = optim.SGD([{"params": ps} if m is None else {"params": ps, "max_norm": m} for ps, m in zip(groups, own)],
                    lr=0.1)
    before = [[(p.grad, None if p.grad is None else p.grad._array) for p in ps] for ps in groups]
    with _blocked((clip_grad.clip_grad_norm_, clip_grad._vector_norm), CLIP_YOURSELF):
        if "bad" not in recipe:
            norms = call(fn, opt, recipe["max_norm"], recipe["norm_type"])
        else:
            errors = []
            for strict in (True, False):
                try:
                    call(fn, opt, 1.0, recipe["norm_type"], strict)
                    errors.append(None)
                except Exception as err:
                    err = err.__cause__ or err
                    errors.append(f"{type(err).__name__}: {err}"[:500])
            return {"errors": errors}
    return {"type": type(norms).__name__,
            "norms": [n if isinstance(n, float) else repr(n)[:80] for n in norms] if isinstance(norms, list) else None,
            "grads": [[_array(p.grad) for p in ps] for ps in groups],
            "in_place": [[p.grad is g and (g is None or p.grad._array is a) for p, (g, a) in zip(ps, b)]
                         for ps, b in zip(groups, before)]}


OBSERVERS_05 = {"accumulate_05": _accumulate_05, "lion_05": _lion_05, "clip_05": _clip_05}



# ---- 06_custom_functions -----------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)

LSE_YOURSELF = ("write the stable log-sum-exp yourself: do not call chibigrad's logsumexp or log_softmax "
                "(torch.logsumexp, Tensor.logsumexp, log_softmax)")
GRADCHECK_YOURSELF = ("write the gradient check yourself: do not call chibigrad's gradcheck or gradgradcheck "
                      "(or their helpers)")
CHECK_GRADS_06 = 10  # check_grad_case_06(0 ... 9)


def _forbidden_06(recipe):
    """The shipped functions an exercise re-implements, blocked while the answer runs (a hint, as ``_blocked``)."""
    import importlib
    from chibigrad.ops import reduction
    gradcheck = importlib.import_module("chibigrad.autograd.gradcheck")  # the package exports the function
    if recipe.get("forbid") == "logsumexp":
        return _blocked((reduction.LogSumExp.forward, reduction.LogSoftmax.forward), LSE_YOURSELF)
    if recipe.get("forbid") == "gradcheck":
        return _blocked((gradcheck.gradcheck, gradcheck.gradgradcheck, gradcheck._numerical_jacobians,
                         gradcheck._analytical_jacobians), GRADCHECK_YOURSELF)
    return contextlib.nullcontext()


def args_06(recipe):
    """A Function's arguments: ``{"tensor": array, "grad": bool}`` becomes a tensor of the recipe's dtype, anything
    else (a number, a string, None) is passed as it is."""
    import chibigrad as torch
    dtype = getattr(torch, recipe.get("dtype", "float64"))
    return [torch.tensor(a["tensor"], dtype=dtype, requires_grad=a["grad"]) if isinstance(a, dict) else a
            for a in recipe["args"]]


def _error(err):
    return f"{type(err).__name__}: {err}"[:500]


def _function_06(cls, recipe, call):
    """``cls.apply`` on the recipe's arguments: the output, its grad_fn's name and whether ``cls.apply`` made it,
    what backward returned for ``grad_output = ones`` (before the engine sums it), the gradients through the
    engine for ``grad_output = weights``, and with ``second`` the second derivatives: ``autograd.grad`` of
    sum(first gradient k * second[k]) with respect to the inputs and to grad_output (what gradgradcheck
    differentiates)."""
    import chibigrad as torch
    inputs = args_06(recipe)
    out = call(cls.apply, *inputs)
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__name__}
    got = {"type": "Tensor", "value": _array(out), "dtype": str(out.dtype), "shape": tuple(out.shape),
           "grad_fn": None if out.grad_fn is None else out.grad_fn.name(), "raw": None, "grads": None,
           "second": None, "second_error": None, "own_node": False}
    if out.grad_fn is None:
        return got
    got["own_node"] = getattr(type(out.grad_fn), "_forward_cls", None) is cls  # made by cls.apply: its backward runs
    if recipe.get("raw", True):
        raw = call(out.grad_fn.apply, torch.ones_like(out))
        got["raw"] = [None if r is None else _array(r) if isinstance(r, torch.Tensor) else ("@other", type(r).__name__)
                      for r in (raw if isinstance(raw, tuple) else (raw,))]
    if recipe.get("weights") is None:
        return got
    wanted = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
    second = recipe.get("second")
    weights = torch.tensor(recipe["weights"], dtype=out.dtype, requires_grad=second is not None)
    grads = call(lambda: torch.autograd.grad(out, wanted, weights, create_graph=second is not None,
                                             allow_unused=True))
    got["grads"] = [_array(g) for g in grads]
    if second is not None:
        try:
            total = sum((g * torch.tensor(v)).sum() for g, v in zip(grads, second) if g is not None)
            got["second"] = [_array(g) for g in torch.autograd.grad(total, wanted + [weights], allow_unused=True)]
        except Exception as err:  # a backward that is not differentiable: the first gradients have no graph
            got["second_error"] = _error(err)
    return got


def _saved_06(cls, recipe, call):
    """What a second backward through a freed graph raised (None if it ran), and what ``autograd.grad`` of the
    sum raised, or the gradients it gave, after ``args[recipe["change"]]`` was doubled in place (under no_grad)
    between forward and backward."""
    import chibigrad as torch
    out = call(cls.apply, *args_06(recipe))
    call(lambda: out.sum().backward())
    got = {"freed": None, "inplace": None, "inplace_grads": None}
    try:
        out.sum().backward()
    except Exception as err:
        got["freed"] = _error(err)
    inputs = args_06(recipe)
    out = call(cls.apply, *inputs)
    with torch.no_grad():
        inputs[recipe["change"]].mul_(2)
    wanted = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
    try:
        got["inplace_grads"] = [_array(g) for g in torch.autograd.grad(out.sum(), wanted, allow_unused=True)]
    except Exception as err:
        got["inplace"] = _error(err)
    return got


@functools.lru_cache(maxsize=None)
def _wrong_backwards_06():
    """Functions whose backward check_grad must find wrong (classes made once per process, with its chibigrad)."""
    from chibigrad.autograd import Function

    class Square(Function):
        """x * x with a backward that forgets the factor 2."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x

    class IgnoresGradOutput(Function):
        """A @ x whose backward returns the gradient of the *sum* of the outputs, whatever grad_output is."""

        @staticmethod
        def forward(ctx, a, x):
            ctx.save_for_backward(a)
            return a @ x

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return None, a.sum(0)

    class WrongSecond(Function):
        """x * y with the gradient for y of the wrong sign: x's is right, y's is wrong."""

        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y, -grad * x

    return Square, IgnoresGradOutput, WrongSecond


def check_grad_case_06(index):
    """``(description, fn, inputs, eps)``: check_grad's case ``index``, fresh tensors on every call."""
    import chibigrad as torch
    rng = np.random.default_rng(9)
    square, ignores, wrong_second = _wrong_backwards_06()

    def f(shape, lo=0.5, hi=1.5, grad=True):
        return torch.tensor(rng.uniform(lo, hi, shape), dtype=torch.float64, requires_grad=grad)

    cases = [  # in order: each case draws its inputs after the previous ones'
        ("exp(3x), a large second derivative (one-sided differences are off here)",
         lambda x: (x * 3).exp(), [f((3,))], 1e-6),
        ("tanh(a @ b) for matrices", lambda a, b: (a @ b).tanh(), [f((2, 3), -1, 1), f((3, 2), -1, 1)], 1e-6),
        ("sin(x * c) * k with a constant tensor c and a number k", lambda x, c, k: (x * c).sin() * k,
         [f((2, 2)), f((2, 2), grad=False), 3.0], 1e-6),
        ("a scalar input and a scalar output", lambda x: (x * x).exp() * x, [f(())], 1e-6),
        ("broadcasting: a (3,) input and a (2, 1) input to a (2, 3) output",
         lambda a, b: (a * b).exp() / (a + b), [f((3,)), f((2, 1))], 1e-6),
        ("an input the output does not depend on", lambda x, y: x.exp(), [f((2,)), f((2,))], 1e-6),
        ("x ** 3 with eps=1e-3 (central differences are off by exactly eps ** 2)", lambda x: x ** 3,
         [f((3,))], 1e-3),
        ("a backward that forgets the factor 2 of x * x", square.apply, [f((2, 2), -2, 2)], 1e-6),
        ("a backward that ignores grad_output (right only for the sum of the outputs)", ignores.apply,
         [f((3, 2), -1, 1, grad=False), f((2,))], 1e-6),
        ("x * y with a wrong gradient for y only", wrong_second.apply, [f((3,)), f((3,))], 1e-6),
    ]
    return cases[index]


def _check_grad_06(fn, recipe, call):
    """check_grad on a case: its result as data (a float per input, None, or ``("@other", type)``), and whether the
    inputs' values and ``.grad`` were left alone."""
    import chibigrad as torch
    _, case_fn, inputs, eps = check_grad_case_06(recipe["case"])
    before = [np.array(x._array, copy=True) if isinstance(x, torch.Tensor) else x for x in inputs]
    got = call(lambda: fn(case_fn, list(inputs), eps=eps))
    entries = None
    if isinstance(got, (list, tuple)):
        entries = [g if g is None else float(g) if isinstance(g, (float, int)) and not isinstance(g, bool)
                   else ("@other", type(g).__name__) for g in got]
    tensors = [(x, old) for x, old in zip(inputs, before) if isinstance(x, torch.Tensor)]
    return {"type": type(got).__name__, "value": entries,
            "unchanged": all(np.array_equal(x._array, old) for x, old in tensors),
            "grad_set": any(x.grad is not None for x, _ in tensors)}


def observe_06(what, fn, recipe, call):
    """06_custom_functions' observers."""
    with _forbidden_06(recipe):
        if what == "function_06":
            return _function_06(fn, recipe, call)
        if what == "saved_06":
            return _saved_06(fn, recipe, call)
        if what == "check_grad_06":
            return _check_grad_06(fn, recipe, call)
    raise ValueError(f"unknown observer {what!r}")




# ---- 07_checkpointing --------------------------------------------------------------------------------------------
# (its recipes and observers go right below this line)

CHECKPOINT_YOURSELF_07 = ("write the checkpoint Function yourself: do not call chibigrad's checkpoint, "
                          "checkpoint_sequential or CheckpointFunction")
SEQUENTIAL_YOURSELF_07 = "cut the segments yourself: do not call chibigrad's checkpoint_sequential"


def mlp_07(depth, width=16, dropout=0.0, seed=0):
    """``depth`` blocks (Linear, [Dropout], Tanh) in float64, as one flat nn.Sequential."""
    import chibigrad as torch
    from chibigrad import nn
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width)] + ([nn.Dropout(dropout)] if dropout else []) + [nn.Tanh()]
    return nn.Sequential(*layers).double()


def widths_07(widths, seed, dropout=0.0):
    """Linear(widths[i], widths[i + 1]), [Dropout], Tanh for each i, then a last Linear: layers of other sizes."""
    import chibigrad as torch
    from chibigrad import nn
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b)] + ([nn.Dropout(dropout)] if dropout else []) + [nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(widths[-1], widths[-1])).double()


def input_07(shape, seed, requires_grad=True):
    import chibigrad as torch
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=requires_grad)


def case_07(name):
    """``(description, model, x)``: the model and input of 07's case ``name``, built alike on both sides."""
    if name == "frozen":
        model = mlp_07(3, seed=4)
        model[0].requires_grad_(False)
        return "an MLP whose first layer is frozen", model, input_07((5, 16), 4)
    description, (build, args, kwargs), (shape, seed, requires_grad) = CASES_07[name]
    return description, build(*args, **kwargs), input_07(shape, seed, requires_grad)


CASES_07 = {  # name: (description, (builder, args, kwargs), (input shape, seed, requires_grad))
    # checkpoint_fn
    "mlp": ("an MLP of 3 blocks", (mlp_07, (3,), {}), ((6, 16), 0, True)),
    "no_grad_input": ("an input that needs no gradient", (mlp_07, (2,), {"seed": 1}), ((4, 16), 1, False)),
    "dropout": ("an MLP with dropout 0.5", (mlp_07, (3,), {"dropout": 0.5, "seed": 2}), ((8, 16), 2, True)),
    "one_row": ("one input row", (mlp_07, (1,), {"seed": 3}), ((1, 16), 3, True)),
    "memory": ("6 blocks of width 64 with dropout", (mlp_07, (6,), {"width": 64, "dropout": 0.2, "seed": 30}),
               ((32, 64), 30, True)),
    # checkpoint_segments
    "seg8": ("an MLP of 8 layers", (mlp_07, (4,), {"seed": 40}), ((5, 16), 40, True)),
    "seg8_no_grad": ("an MLP of 8 layers and an input that needs no gradient", (mlp_07, (4,), {"seed": 41}),
                     ((5, 16), 41, False)),
    "seg12_dropout": ("an MLP of 12 layers with dropout", (mlp_07, (4,), {"dropout": 0.5, "seed": 42}),
                      ((6, 16), 42, True)),
    # choose_segments: wide layers first, so that backward's recomputation of an early segment, not forward,
    # reaches the peak for some s
    "wide_first": ("9 layers, wide ones first", (widths_07, ((16, 96, 64, 16, 16),), {"seed": 51}),
                   ((16, 16), 51, False)),
    "wide_first_dropout": ("10 layers with dropout, wide ones first",
                           (widths_07, ((24, 80, 24, 24),), {"dropout": 0.1, "seed": 52}), ((8, 24), 52, True)),
    "wide_then_narrow": ("7 layers of different widths", (widths_07, ((16, 96, 96, 16),), {"seed": 53}),
                         ((12, 16), 53, False)),
}


def step_07(model, run, x, seed, call):
    """One training step as data: the output, the gradients of every parameter and of x, and what the
    generator draws next (numbers are drawn between forward and backward too, as a later dropout would)."""
    import chibigrad as torch
    model.zero_grad(set_to_none=True)
    x.grad = None
    torch.manual_seed(seed)
    out = call(run, x)
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__name__}
    torch.rand(3)
    call(out.pow(2).mean().backward)
    return {"type": "Tensor", "out": _array(out), "after": torch.rand(4).numpy(),
            "grads": [_array(t.grad) if t.grad is not None else None for t in [*model.parameters(), x]]}


def nested_07(fn, seed):
    """Linear, a block of 2 dropout blocks run through ``fn.apply`` (plainly when ``fn`` is None), Tanh, Linear."""
    import chibigrad as torch
    from chibigrad import nn

    class Checkpointed(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x) if fn is None else fn.apply(self.inner, x, *self.inner.parameters())

    inner = mlp_07(2, dropout=0.3, seed=seed)
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 16), Checkpointed(inner), nn.Tanh(), nn.Linear(16, 16)).double()


def chain_07():
    """8 blocks of one Linear and Tanh each."""
    from chibigrad import nn
    return nn.Sequential(*[mlp_07(1, seed=20 + k) for k in range(8)])


def chained_07(fn, blocks):
    """``x`` through every block in turn, each through ``fn.apply`` (plainly when ``fn`` is None)."""
    def run(x):
        for block in blocks:
            x = block(x) if fn is None else fn.apply(block, x, *block.parameters())
        return x
    return run


def counting_07(modules):
    """Forward hooks counting each module's calls: ``(counts, remove)``."""
    counts = [0] * len(modules)
    handles = [m.register_forward_hook(lambda m, i, o, k=k: counts.__setitem__(k, counts[k] + 1))
               for k, m in enumerate(modules)]
    return counts, lambda: [h.remove() for h in handles]


def _through_07(cls, model):
    return lambda x: cls.apply(model, x, *model.parameters())


def _checkpoint_fn_07(cls, recipe, call):
    """The student's Function on case ``recipe["case"]``: a training step, its grad_fn, autograd.grad through
    it, and what its backward itself returned."""
    import chibigrad as torch
    _, model, x = case_07(recipe["case"])
    got = {"step": step_07(model, _through_07(cls, model), x, 7, call)}
    params = [p for p in model.parameters() if p.requires_grad] + ([x] if x.requires_grad else [])
    torch.manual_seed(7)
    out = call(cls.apply, model, x, *model.parameters())
    got["grad_fn"] = out.grad_fn.name() if isinstance(out, torch.Tensor) and out.grad_fn is not None else None
    if got["grad_fn"] is None:
        return got
    reached = call(lambda: torch.autograd.grad(out.pow(2).mean(), params, allow_unused=True))
    got["reached"] = [None if g is None else _array(g) for g in reached]
    out = call(cls.apply, model, x, *model.parameters())
    raw = call(out.grad_fn.apply, torch.ones_like(out))
    raw = raw if isinstance(raw, tuple) else (raw,)
    got["raw"] = [None if r is None else "tensor" if isinstance(r, torch.Tensor) else type(r).__name__ for r in raw]
    return got


def _memory_07(cls, call):
    """Forward through the student's Function on the memory case: how often the module ran, the bytes kept
    beyond the output, then after backward, and what a second backward raised."""
    import chibigrad as torch
    from chibigrad import memory
    _, model, x = case_07("memory")
    counts, remove = counting_07([model])
    try:
        with memory.measure() as m:
            out = call(cls.apply, model, x, *model.parameters())
        if not isinstance(out, torch.Tensor) or out.grad_fn is None:
            return {"type": type(out).__name__}
        got = {"type": "Tensor", "forward_calls": counts[0], "kept": m.kept - out._array.nbytes}
        call(out.sum().backward)
        got["calls"] = counts[0]
    finally:
        remove()
    try:
        out.sum().backward()
        got["again"] = ""
    except Exception as err:
        got["again"] = f"{type(err).__name__}: {err}"[:500]
    return got


def _segments_07(fn, recipe, call):
    """A training step with the student's checkpoint_segments on a case and boundaries: the calls per layer and
    the bytes saved for backward once forward is done."""
    from chibigrad import memory
    from chibigrad.utils import checkpoint as checkpoint_module
    _, model, x = case_07(recipe["case"])
    layers = list(model.children())
    counts, remove = counting_07(layers)
    boundaries, saved = list(recipe["boundaries"]), []

    def run(x):
        start = memory.stats()["saved"]
        out = fn(layers, boundaries, x)
        saved.append(memory.stats()["saved"] - start)
        return out
    try:
        with _blocked((checkpoint_module.checkpoint_sequential, checkpoint_module._segment), SEQUENTIAL_YOURSELF_07):
            got = step_07(model, run, x, 3, call)
    finally:
        remove()
    return {**got, "calls": counts, "saved": saved[0] if saved else None}


@contextlib.contextmanager
def no_collection_07():
    """No cyclic garbage collection inside: freeing old graphs mid-step would shift the measured peaks."""
    import gc
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def observe_07(what, fn, recipe, call):
    """07_checkpointing's observers."""
    if what in ("checkpoint_fn_07", "nested_07", "chain_07", "memory_07"):
        from chibigrad.utils import checkpoint as checkpoint_module
        shipped = (checkpoint_module.checkpoint, checkpoint_module.checkpoint_sequential,
                   checkpoint_module.CheckpointFunction.forward, checkpoint_module.CheckpointFunction.backward)
        with _blocked(shipped, CHECKPOINT_YOURSELF_07):
            if what == "checkpoint_fn_07":
                return _checkpoint_fn_07(fn, recipe, call)
            if what == "memory_07":
                return _memory_07(fn, call)
            if what == "nested_07":
                model = nested_07(fn, 11)
                return step_07(model, _through_07(fn, model), input_07((4, 16), 11), 5, call)
            chain = chain_07()
            return step_07(chain, chained_07(fn, list(chain.children())), input_07((3, 16), 12), 0, call)
    if what == "segments_07":
        return _segments_07(fn, recipe, call)
    if what == "choose_07":
        _, model, x = case_07(recipe["case"])
        with no_collection_07():
            got = call(fn, model, x, recipe["budget"])
        return {"type": type(got).__name__, "value": got if type(got) is int or got is None else None}
    raise ValueError(f"unknown observer {what!r}")



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
