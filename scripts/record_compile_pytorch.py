"""Record what torch.compile does with chapter 7b's own steps.

    /path/to/python-with-torch scripts/record_compile_pytorch.py

Runs the functions that book/07b_compile.md defines (the MLP and SiLU training steps, the
graph-break examples, the two programs that read and change Python state) under real PyTorch
and writes book/data/compile_pytorch.json, which the chapter prints next to chibigrad's answers:

- ``torch._dynamo.explain`` of each step: graphs, breaks, the first line of each reason;
- the ``aot_eager`` backend's joint forward+backward graph and what its partitioner (min-cut,
  and AOTAutograd's default for comparison) keeps for backward;
- the guard examples under ``torch.compile`` with an eager backend that counts compiles (and
  under ``torch.jit.trace`` and ``make_fx``, trace-level capture): outputs, compiles, and what
  ``TORCH_LOGS=graph_breaks,recompiles,guards`` prints for them (the guards on values, recompiles);
- ``print`` inside a compiled function, by default and in ``reorderable_logging_functions``;
- how many graphs self-check 1's calls make (dynamic shapes) and Dynamo's recompile limit;
- whether Inductor's MLP step is bitwise equal to eager, and the SiLU step's time under it with
  the min-cut and the default partitioner.
"""
import ast
import collections
import json
import linecache
import os
import re
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch._dynamo
import torch.nn.functional as F
from functorch.compile import default_partition, make_boxed_compiler, min_cut_rematerialization_partition
from torch import nn, optim
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.testing import CompileCounter
from torch._inductor.custom_graph_pass import CustomPartitionerFn
from torch.fx.experimental.proxy_tensor import make_fx

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "07b_compile.md"
OUT = ROOT / "book" / "data" / "compile_pytorch.json"
SOURCE = "<07b_compile.md>"  # the file name tracebacks and logs give the chapter's code
DEFINED = {"SIZES", "BATCH", "LR", "make_mlp", "DEPTH", "WIDTH", "ROWS", "SiLUNet", "silu_step", "lucky",
           "positives", "noisy", "checked", "shout", "CFG", "scaled", "Counter", "counter", "counted"}
LOGS = "graph_breaks,recompiles,guards"
SIZES_CALLED = [3, 3, 4, 3, 4]


def chapter_definitions():
    """The chapter's top-level definitions of the names in DEFINED, each as source, in page order."""
    found = []
    for cell in re.findall(r"(?ms)^```\{code-cell\}[^\n]*\n(.*?)^```", CHAPTER.read_text()):
        cell = re.sub(r"(?ms)\A---\n.*?^---\n|\A(:\w+:[^\n]*\n)+", "", cell)
        for stmt in ast.parse(cell).body:
            targets = [n for t in getattr(stmt, "targets", []) for n in ast.walk(t)]
            names = {getattr(stmt, "name", None)} | {n.id for n in targets if isinstance(n, ast.Name)}
            if names & DEFINED:
                found.append(ast.get_source_segment(cell, stmt))
    return found


def chapter():
    """A fresh namespace holding the chapter's definitions, run on torch."""
    namespace = {"__name__": "chapter_07b", "torch": torch, "nn": nn, "F": F, "optim": optim, "np": np}
    source = "\n\n".join(chapter_definitions())
    linecache.cache[SOURCE] = (len(source), None, source.splitlines(True), SOURCE)  # lines for reports
    exec(compile(source, SOURCE, "exec"), namespace)
    return namespace


def first_line(reason):
    return reason.strip().splitlines()[0]


def explained(fn, *args):
    """explain's counts and reasons, with where each break is (function and source line, no path)."""
    torch._dynamo.reset()
    e = torch._dynamo.explain(fn)(*args)
    reasons = [{"reason": first_line(r.reason), "function": r.user_stack[-1].name, "line": r.user_stack[-1].line}
               for r in e.break_reasons]
    ops = [[getattr(n.target, "__name__", str(n.target)) for n in g.graph.nodes
            if n.op in ("call_function", "call_method", "call_module")] for g in e.graphs]
    return {"graphs": e.graph_count, "breaks": e.graph_break_count, "break_reasons": reasons, "ops_per_graph": ops}


def aten_ops(gm):
    """The calls of an AOTAutograd graph: each op's name, and which of them write into an input."""
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    writes = [str(t) for t in calls if isinstance(t, torch._ops.OpOverload) and t._schema.is_mutable]
    return {"count": len(calls), "by_op": dict(collections.Counter(map(str, calls)).most_common()), "writes": writes}


def nbytes(node):
    val = node.meta.get("val")
    return val.numel() * val.element_size() if isinstance(val, torch.Tensor) else 0


def recording_backend(partition, graphs):
    """An aot_eager backend (boxed nop compilers) that records each Dynamo graph and what AOTAutograd
    made of it: the joint graph (when there is a backward), forward, backward, what backward keeps."""

    def backend(gm, example_inputs):
        ops = [str(getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes
               if n.op in ("call_function", "call_method", "call_module")]
        entry = {"dynamo": {"count": len(ops), "by_op": dict(collections.Counter(ops).most_common()),
                            "writes": [op for op in ops if op.endswith("_") and not op.startswith("_")]}}
        graphs.append(entry)

        def partition_fn(joint, inputs, **kwargs):
            entry["joint"] = aten_ops(joint)
            return partition(joint, inputs, **kwargs)

        def fw_compiler(fx, _):
            entry["forward"] = aten_ops(fx)
            return fx

        def bw_compiler(fx, _):
            entry["backward"] = aten_ops(fx)
            saved = [n for n in fx.graph.nodes if n.op == "placeholder" and not n.name.startswith("tangents")]
            entry["saved"] = [{"name": n.name, "shape": list(n.meta["val"].shape)} for n in saved]
            entry["saved_bytes"] = sum(nbytes(n) for n in saved)
            return fx

        return aot_autograd(fw_compiler=make_boxed_compiler(fw_compiler), bw_compiler=make_boxed_compiler(bw_compiler),
                            partition_fn=partition_fn, keep_inference_input_mutations=True)(gm, example_inputs)
    return backend


def mlp_inputs():
    ns = chapter()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(ns["BATCH"], ns["SIZES"][0], generator=g)
    y = torch.randint(0, ns["SIZES"][-1], (ns["BATCH"],), generator=g)
    return ns, x, y


def aot_of(step_and_args, partition):
    torch._dynamo.reset()
    graphs = []
    step, args = step_and_args()
    compiled = torch.compile(step, backend=recording_backend(partition, graphs))
    compiled(*args)
    return graphs


def mlp_step():
    ns, x, y = mlp_inputs()
    return ns["make_mlp"]()[2], (x, y)


def silu_step():
    ns = chapter()
    torch.manual_seed(0)
    ns["net"] = ns["SiLUNet"]()
    return ns["silu_step"], (torch.randn(ns["ROWS"], ns["WIDTH"]),)


def guards_recorded():
    """The two programs, compiled with a backend that runs Dynamo's graph eagerly and counts
    compiles, and run plainly (each from a fresh copy of the chapter's state)."""
    record = {}
    for name, run in (("scaled", _run_scaled), ("counted", _run_counted)):
        torch._dynamo.reset()
        ns, counter = chapter(), CompileCounter()
        record[name] = dict(run(ns, torch.compile(ns[name], backend=counter)), compiles=counter.frame_count)
        ns = chapter()
        record[name]["eager"] = run(ns, ns[name])
    return record


def traced_on_first_call(tool, fn):
    """``fn`` captured by a trace-level tool at its first call, as chibigrad.compile captures."""
    captured = []

    def call(t):
        if not captured:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                captured.append(tool(fn, t))
            call.warnings = sorted({f"{w.category.__name__}: {first_line(str(w.message))}" for w in caught})
        return captured[0](t)
    return call


TRACERS = {"torch.jit.trace": lambda fn, t: torch.jit.trace(fn, (t,)), "make_fx": lambda fn, t: make_fx(fn)(t)}


def traces_recorded():
    """The two programs captured by PyTorch's trace-level tools."""
    record = {}
    for tool_name, tool in TRACERS.items():
        for name, run in (("scaled", _run_scaled), ("counted", _run_counted)):
            ns = chapter()
            fn = traced_on_first_call(tool, ns[name])
            try:
                found = dict(run(ns, fn), warnings=fn.warnings)
            except Exception as err:  # the tool refused to capture it
                found = {"error": f"{type(err).__name__}: {first_line(str(err))}", "counter.n": ns["counter"].n}
            record.setdefault(tool_name, {})[name] = found
    return record


def _run_scaled(ns, fn):
    """Three calls, a change of the configuration, a fourth call."""
    out = [fn(torch.ones(2)).tolist() for _ in range(3)]
    ns["CFG"]["scale"] = 3.0
    out.append(fn(torch.ones(2)).tolist())
    return {"outputs": out, "CFG": dict(ns["CFG"])}


def _run_counted(ns, fn):
    """Four calls; the outputs and the counter after them."""
    return {"outputs": [fn(torch.ones(1)).item() for _ in range(4)], "counter.n": ns["counter"].n}


def logs_of_guard_examples():
    """Run this script with --logs under TORCH_LOGS; keep the lines about guards on values and recompiles."""
    env = dict(os.environ, TORCH_LOGS=LOGS)
    run = subprocess.run([sys.executable, __file__, "--logs"], env=env, capture_output=True, text=True, check=True)
    lines = [re.sub(r"^\S+ \d\d:\d\d:\d\d\.\d+ \d+ \S+\] ", "", line) for line in run.stderr.splitlines()]
    lines = [re.sub(r"\s+# .*$", "", line.replace(str(ROOT) + "/", "")) for line in lines]  # drop source comments
    wanted = re.compile(r"EQUALS_MATCH|Recompiling|triggered by|\[__recompiles\]\s+- \d|[Gg]raph break")
    return {"env": f"TORCH_LOGS={LOGS}", "lines": len(lines), "kept": [line for line in lines if wanted.search(line)]}


def run_logged_examples():
    ns = chapter()
    for name, run in (("scaled", _run_scaled), ("counted", _run_counted)):
        print(f"== {name}", file=sys.stderr, flush=True)
        run(ns, torch.compile(ns[name], backend="eager"))


def prints():
    ns = chapter()
    record = {"default": explained(ns["shout"], torch.ones(2))}
    torch._dynamo.config.reorderable_logging_functions = {print}
    try:
        record["reorderable_logging_functions"] = explained(ns["shout"], torch.ones(2))
    finally:
        torch._dynamo.config.reorderable_logging_functions = set()
    return record


def inductor_mlp():
    """Three MLP steps eagerly and under Inductor (the default backend), from the same parameters."""
    torch._dynamo.reset()
    ns, x, y = mlp_inputs()
    eager_model, _, eager_step = ns["make_mlp"]()
    model, _, step = ns["make_mlp"]()
    step = torch.compile(step)
    losses = [(eager_step(x, y).item(), step(x, y).item()) for _ in range(3)]
    diffs = [(p - q).abs().max().item() for p, q in zip(model.parameters(), eager_model.parameters())]
    return {"steps": 3, "losses_eager_inductor": losses,
            "parameters_bitwise_equal": all(torch.equal(p, q) for p, q in zip(model.parameters(), eager_model.parameters())),
            "parameters_max_abs_difference": max(diffs)}


class DefaultPartition(CustomPartitionerFn):
    """Inductor with AOTAutograd's default partitioner (save what backward reads) instead of min-cut."""

    calls = 0

    def __call__(self, gm, joint_inputs, compiler=None, static_lifetime_input_indices=None, **kwargs):
        self.calls += 1
        return default_partition(gm, joint_inputs, static_lifetime_input_indices=static_lifetime_input_indices,
                                 **kwargs)

    def uuid(self):
        return "default_partition"


def silu_times(repeats=30):
    """The SiLU step's CPU time, eager and under Inductor with either partitioner, called in turn:
    medians and the quartiles of the rounds. Each runs on its own copy of the chapter's code and
    network (Dynamo caches compiled code on the code object); no compile cache is shared."""
    torch._dynamo.reset()
    torch._inductor.config.fx_graph_cache = torch._functorch.config.enable_autograd_cache = False
    fns, args = {}, None
    for name in ("eager", "inductor", "inductor, default partitioner"):
        step, args = silu_step()
        fns[name] = step if name == "eager" else torch.compile(step)
    partitioner = DefaultPartition()
    with torch._inductor.config.patch(custom_partitioner_fn=partitioner):
        for _ in range(3):  # compiles (and recompiles, once the gradients exist) with the default partitioner
            fns["inductor, default partitioner"](*args)
    assert partitioner.calls, "Inductor did not call the default partitioner"
    for fn in fns.values():
        fn(*args), fn(*args)  # warm up (and compile)
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.process_time()
            fn(*args)
            times[name].append((time.process_time() - start) * 1e3)
    quartiles = {name: statistics.quantiles(t, n=4) for name, t in times.items()}
    return {name: {"median_ms": q[1], "quartiles_ms": [q[0], q[2]]} for name, q in quartiles.items()}


def sizes():
    """Self-check 1's calls (vectors of 3, 3, 4, 3, 4 elements): how many graphs Dynamo compiles."""
    torch._dynamo.reset()
    counter = CompileCounter()
    square = torch.compile(lambda t: t * t, backend=counter)
    for n in SIZES_CALLED:
        square(torch.ones(n))
    return {"sizes": SIZES_CALLED, "compiles": counter.frame_count}


def main():
    torch.set_num_threads(1)  # as the chapter: one BLAS thread
    ns, x, y = mlp_inputs()
    record = {"torch_version": torch.__version__.split("+")[0], "chapter_code": chapter_definitions()}
    record["explain"] = {"mlp_step": explained(ns["make_mlp"]()[2], x, y)}
    torch._dynamo.config.trace_autograd_ops = True
    try:
        record["explain"]["mlp_step_trace_autograd_ops"] = explained(chapter()["make_mlp"]()[2], x, y)
    finally:
        torch._dynamo.config.trace_autograd_ops = False
    inputs = torch.randn(5, generator=torch.Generator().manual_seed(1))
    for name in ("lucky", "positives", "noisy"):
        record["explain"][name] = explained(ns[name], inputs)
    record["explain"]["checked"] = explained(ns["checked"], torch.rand(3))
    record["print"] = prints()
    record["shapes"] = dict(sizes(), recompile_limit=torch._dynamo.config.recompile_limit)
    record["aot_eager"] = {"mlp_step": aot_of(mlp_step, min_cut_rematerialization_partition),
                           "silu_step": aot_of(silu_step, min_cut_rematerialization_partition),
                           "silu_step_default_partition": aot_of(silu_step, default_partition)}
    record["aot_cse"] = torch._functorch.config.cse
    record["min_cut_docstring"] = " ".join(min_cut_rematerialization_partition.__doc__.split("\n\n")[0].split())
    record["guards"] = guards_recorded()
    record["traces"] = traces_recorded()
    record["torch_logs"] = logs_of_guard_examples()
    record["inductor"] = {"mlp_step": inductor_mlp(), "silu_step_cpu_times": silu_times()}
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--logs"]:
        run_logged_examples()
    else:
        main()
