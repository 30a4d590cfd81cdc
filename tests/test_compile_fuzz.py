"""A differential fuzzer for chibigrad.compile: it changes the speed and nothing else.

Each seed writes a small training program as Python source (a config dict, an object's
attributes, globals and a closure read inside the step, branches on them and on the data,
mutations of them inside the step and between calls, an optimizer whose learning rate or
scheduler changes, hooks, no_grad regions), runs it twice in two fresh namespaces (eager and
compiled) with the same changes between calls, and compares after every call: the outputs,
parameters, gradients and optimizer state bitwise, and the Python state by ``repr``. A
compiled function may run a call eagerly, but only visibly (``eager_calls``, ``graph_breaks``):
a difference is a silent wrong answer, and there must be none.
"""
import random
import warnings

import numpy as np
import pytest

import chibigrad as torch

CALLS = 4
READS = {  # fragments that read Python state into the computation on h
    "cfg": 'h = h * CFG["scale"]',
    "attr": "h = h + OBJ.bias",
    "global": "h = h * G_SCALE",
    "closure": "h = h - cl",
    "branch": 'if CFG["flag"]:\n    h = h * 2\nelse:\n    h = h + 3',
    "attr branch": "h = torch.relu(h) if OBJ.bias > 0 else torch.tanh(h)",
    "counter read": "h = h * (OBJ.count + 1)",
    "data branch": "if h.sum() > 0:\n    h = h * 0.5",
    "item branch": "if h.mean().item() > 0:\n    h = h + 1",
    "no_grad": "with torch.no_grad():\n    h2 = h * 2\nh = h + h2",
    "int scale": 'h = h * CFG["int"]',
}
WRITES = {  # fragments that change Python state inside the step
    "attr +=": "OBJ.count += 1",
    "append": "LOG.append(len(LOG))",
    "item write": 'CFG["calls"] = CFG.get("calls", 0) + 1',
    "nonlocal": "cl = cl + 1",
    "global": "G_SCALE = G_SCALE + 0.25",
    "log item": "LOG.append(h.sum().item())",
    "same value": 'CFG["flag"] = CFG["flag"]',
}
BETWEEN = [  # changes between calls
    'CFG["scale"] = {v}', "OBJ.bias = {v}", "G_SCALE = {v}", "SET_CL({v})", 'CFG["flag"] = not CFG["flag"]',
    "OBJ.count += 1", 'CFG["int"] = {i}', "pass", "pass",
]
MODEL_BETWEEN = ['OPT.param_groups[0]["lr"] = {lr}', "SCHED.step()", "MODEL.train(not MODEL.training)"]
VALUES = ["2.0", "3.0", "-0.0", "0.0", "2", "0.5", "-1.5"]

PROGRAM = '''
import chibigrad as torch
from chibigrad import nn, optim

CFG = {{"scale": 2.0, "flag": True, "int": 2}}
class Obj:
    count = 0
OBJ = Obj()
OBJ.bias = 0.5
G_SCALE = 1.5
LOG = []
torch.manual_seed({seed})
MODEL = nn.Sequential(nn.Linear(3, 3))
OPT = optim.{optimizer}
SCHED = optim.lr_scheduler.StepLR(OPT, step_size=1, gamma=0.5) if {scheduler} else None

def make():
    cl = 1.0

    def step(x):
{body}

    def set_cl(v):
        nonlocal cl
        cl = v

    return step, set_cl, lambda: cl

STEP, SET_CL, GET_CL = make()
'''
OPTIMIZERS = ["SGD(MODEL.parameters(), lr=0.1)", "SGD(MODEL.parameters(), lr=0.1, momentum=0.9)",
              "Adam(MODEL.parameters(), lr=0.01)", "AdamW(MODEL.parameters(), lr=0.01, weight_decay=0.1)"]


def generate(seed):
    """The program's source and the changes to make before each call, from ``seed``."""
    rng = random.Random(seed)
    model = rng.random() < 0.4
    reads = rng.sample(sorted(READS), rng.randint(1, 4))
    writes = rng.sample(sorted(WRITES), rng.choice([0, 0, 1, 2]))
    lines = []
    if "nonlocal" in writes or "closure" in reads:
        lines.append("nonlocal cl" if "nonlocal" in writes else "pass")
    if "global" in writes:
        lines.append("global G_SCALE")
    if model:
        lines += ["OPT.zero_grad()" if rng.random() < 0.7 else "for p in MODEL.parameters():\n    p.grad = None",
                  "h = MODEL(x)"]
    else:
        lines.append("h = x * 1.0")
    fragments = [READS[r] for r in reads] + [WRITES[w] for w in writes]
    rng.shuffle(fragments)
    lines += fragments
    if rng.random() < 0.2:
        lines.append("if h.requires_grad:\n    h.register_hook(lambda g: g * 2)")
    if model:
        lines += ["loss = (h * h).mean()", "loss.backward()", "OPT.step()"]
        lines.append(rng.choice(["return loss", "return loss, h.detach()", "return loss.item()", "return None"]))
    elif rng.random() < 0.5:
        lines += ["h.sum().backward()", "return x.grad"]
    else:
        lines.append(rng.choice(["return h", "return h.detach(), 1", "return [h]"]))
    scheduler = model and rng.random() < 0.3
    if scheduler and rng.random() < 0.5:
        lines.insert(-1, "SCHED.step()")
    body = "\n".join("        " + line for chunk in lines for line in chunk.split("\n"))
    source = PROGRAM.format(seed=seed, optimizer=rng.choice(OPTIMIZERS), body=body, scheduler=scheduler)
    changes = []
    for _ in range(CALLS):
        options = BETWEEN + (MODEL_BETWEEN[:1 + scheduler] + MODEL_BETWEEN[2:] if model else [])
        change = rng.choice(options).format(v=rng.choice(VALUES), i=rng.choice([1, 2, 3]),
                                            lr=rng.choice(["0.1", "0.05", "0.2"]))
        changes.append(change if rng.random() < 0.4 else "pass")
    grad_input = not model and "x.grad" in source
    return source, changes, grad_input


def _world(code):
    namespace = {"__name__": "fuzz_program"}
    exec(code, namespace)  # noqa: S102 - the program generated above
    return namespace


def _snapshot(ns, out):
    """Everything a call can change, as bytes and reprs (bitwise: -0.0 is not 0.0)."""
    def arrays(t):
        return None if t is None else (t.dtype, t.shape, t.detach().numpy().tobytes())

    def value(v):
        if isinstance(v, torch.Tensor):
            return arrays(v)
        if type(v) in (tuple, list):
            return type(v).__name__, [value(x) for x in v]
        return type(v).__name__, repr(v)

    params = [(arrays(p), arrays(p.grad)) for p in ns["MODEL"].parameters()]
    state = [(k, value(v)) for p in ns["MODEL"].parameters() for k, v in sorted(ns["OPT"].state[p].items())]
    python = repr((ns["CFG"], vars(ns["OBJ"]), ns["LOG"], ns["G_SCALE"], ns["GET_CL"](), ns["MODEL"].training,
                   ns["OPT"].param_groups[0]["lr"], ns["SCHED"] and ns["SCHED"].last_epoch))
    return value(out), params, state, python


def run_case(seed):
    """(silent difference: a string or None, the compiled function)."""
    source, changes, grad_input = generate(seed)
    code = compile(source, "<fuzz program>", "exec")
    eager, compiled = _world(code), _world(code)
    step = torch.compile(compiled["STEP"])
    for call, change in enumerate(changes):
        for ns in (eager, compiled):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SCHED.step() before OPT.step(): PyTorch's warning
                exec(change, ns)  # noqa: S102 - a change generated above
        x_np = np.random.default_rng(seed * 100 + call).standard_normal((4, 3)).astype(np.float32)
        results = []
        for ns, fn in ((eager, eager["STEP"]), (compiled, step)):
            x = torch.from_numpy(x_np.copy()).requires_grad_(grad_input)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # cache_size_limit reached: a visible fallback
                    results.append(_snapshot(ns, fn(x)))
            except Exception as err:  # noqa: BLE001 - the same error is the same behaviour
                results.append((type(err).__name__, str(err)))
        if results[0] != results[1]:
            return f"call {call} after {change!r}:\n{source}", step
    return None, step


def fuzz(seeds):
    """Silent differences, and counts of programs: some call replayed a graph, some call ran eagerly
    after compiling (a graph break, changed Python state, the cache limit), every call was traced."""
    differences, replayed, fell_back, traced = [], 0, 0, 0
    for seed in seeds:
        difference, step = run_case(seed)
        if difference:
            differences.append(f"seed {seed}: {difference}")
        replayed += step.compile_count + step.eager_calls < CALLS
        fell_back += step.eager_calls > 0
        traced += step.compile_count == CALLS
    print(f"chibigrad.compile fuzzer: {len(seeds)} programs, {len(differences)} silent differences; "
          f"{replayed} replayed a graph, {fell_back} visibly ran calls eagerly after compiling, {traced} were "
          f"traced at every call")
    return differences, replayed, fell_back


def test_compiled_programs_equal_eager_or_fall_back_visibly():
    differences, replayed, fell_back = fuzz(range(2000))
    assert not differences, differences[0]
    assert replayed > 500 and fell_back > 100  # programs that compile and programs that cannot, both


@pytest.mark.soak  # 3,000 more programs, about 2 min of CPU: make test PYTEST_ARGS="-m soak"
def test_compiled_programs_equal_eager_many_seeds():
    differences, _, _ = fuzz(range(2000, 5000))
    assert not differences, differences[0]
