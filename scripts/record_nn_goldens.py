"""Record what real PyTorch computes for nn, optim and clipping, for tests/test_nn.py and tests/test_optim.py.

Run with the oracle environment (the test suite itself never imports torch):

    /work/torchenv/bin/python scripts/record_nn_goldens.py

Inputs and weights are fixed arrays (sines of a counter), not torch's RNG,
so chibigrad can load exactly the same numbers. Writes
tests/fixtures/nn_goldens.json.
"""
import json
import pathlib
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nn_goldens.json"
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def det(shape, k=0, scale=1.0):
    """Deterministic, irregular values: sin(0.731 i + k) * scale."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.731 + k) * scale).reshape(shape)


def det_int(shape, high, k=0):
    n = int(np.prod(shape))
    return ((np.arange(n) * 7 + k * 3) % high).reshape(shape)


# ---- modules and functional calls ------------------------------------------------------
# inputs: ("float", shape) get requires_grad; ("int", shape, high) are class indices; ("target", shape) floats
MODULE_CASES = [
    dict(name="linear", ctor="nn.Linear(5, 3)", inputs=[("float", (4, 5))]),
    dict(name="linear_nobias", ctor="nn.Linear(5, 3, bias=False)", inputs=[("float", (4, 5))]),
    dict(name="linear_3d", ctor="nn.Linear(5, 3)", inputs=[("float", (2, 4, 5))]),
    dict(name="relu", ctor="nn.ReLU()", inputs=[("float", (4, 5))]),
    dict(name="tanh", ctor="nn.Tanh()", inputs=[("float", (4, 5))]),
    dict(name="sigmoid", ctor="nn.Sigmoid()", inputs=[("float", (4, 5))]),
    dict(name="silu", ctor="nn.SiLU()", inputs=[("float", (4, 5))]),
    dict(name="gelu", ctor="nn.GELU()", inputs=[("float", (4, 5))], scale=3.0),
    dict(name="gelu_tanh", ctor="nn.GELU(approximate='tanh')", inputs=[("float", (4, 5))], scale=3.0),
    dict(name="softmax", ctor="nn.Softmax(dim=1)", inputs=[("float", (4, 5))], scale=3.0),
    dict(name="softmax_dim0", ctor="nn.Softmax(dim=0)", inputs=[("float", (4, 5))]),
    dict(name="log_softmax", ctor="nn.LogSoftmax(dim=1)", inputs=[("float", (4, 5))], scale=3.0),
    dict(name="dropout_eval", ctor="nn.Dropout(0.5)", inputs=[("float", (4, 5))], eval=True),
    dict(name="layer_norm", ctor="nn.LayerNorm(5)", inputs=[("float", (4, 5))], scale=2.0),
    dict(name="layer_norm_2d", ctor="nn.LayerNorm((3, 4))", inputs=[("float", (2, 3, 4))]),
    dict(name="layer_norm_noaffine", ctor="nn.LayerNorm(5, elementwise_affine=False)", inputs=[("float", (4, 5))]),
    dict(name="batch_norm", ctor="nn.BatchNorm1d(5)", inputs=[("float", (6, 5))], scale=2.0, then_eval=True),
    dict(name="batch_norm_3d", ctor="nn.BatchNorm1d(3, momentum=0.3)", inputs=[("float", (4, 3, 2))],
         then_eval=True),
    dict(name="batch_norm_cma", ctor="nn.BatchNorm1d(4, momentum=None)", inputs=[("float", (5, 4))],
         then_eval=True),
    dict(name="batch_norm_noaffine", ctor="nn.BatchNorm1d(4, affine=False)", inputs=[("float", (5, 4))]),
    dict(name="batch_norm_eval", ctor="nn.BatchNorm1d(5)", inputs=[("float", (3, 5))], eval=True),
    dict(name="embedding", ctor="nn.Embedding(10, 3)", inputs=[("int", (4, 3), 10)]),
    dict(name="embedding_pad", ctor="nn.Embedding(10, 3, padding_idx=2)", inputs=[("int", (6,), 5)]),
    dict(name="mse", ctor="nn.MSELoss()", inputs=[("float", (4, 3)), ("target", (4, 3))]),
    dict(name="mse_sum", ctor="nn.MSELoss(reduction='sum')", inputs=[("float", (4, 3)), ("target", (4, 3))]),
    dict(name="mse_none", ctor="nn.MSELoss(reduction='none')", inputs=[("float", (4, 3)), ("target", (4, 3))]),
    dict(name="cross_entropy", ctor="nn.CrossEntropyLoss()", inputs=[("float", (6, 5)), ("int", (6,), 5)],
         scale=3.0),
    dict(name="cross_entropy_sum", ctor="nn.CrossEntropyLoss(reduction='sum')",
         inputs=[("float", (6, 5)), ("int", (6,), 5)]),
    dict(name="cross_entropy_none", ctor="nn.CrossEntropyLoss(reduction='none')",
         inputs=[("float", (6, 5)), ("int", (6,), 5)]),
    dict(name="cross_entropy_ignore", ctor="nn.CrossEntropyLoss(ignore_index=1)",
         inputs=[("float", (6, 5)), ("int", (6,), 5)]),
    dict(name="cross_entropy_weight", ctor="nn.CrossEntropyLoss(weight=torch.tensor([1., 2., .5, 3., 1.5]))",
         inputs=[("float", (6, 5)), ("int", (6,), 5)]),
    dict(name="cross_entropy_1d", ctor="nn.CrossEntropyLoss()", inputs=[("float", (5,)), ("int", (), 5)]),
    dict(name="cross_entropy_kdim", ctor="nn.CrossEntropyLoss()", inputs=[("float", (2, 4, 3)), ("int", (2, 3), 4)]),
    dict(name="nll", ctor="nn.NLLLoss()", inputs=[("float", (6, 5)), ("int", (6,), 5)]),
    dict(name="mlp", ctor="nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))",
         inputs=[("float", (4, 5))]),
    dict(name="mlp_norm", ctor="nn.Sequential(nn.Linear(5, 6), nn.LayerNorm(6), nn.GELU(), nn.Linear(6, 3), "
         "nn.Tanh(), nn.BatchNorm1d(3), nn.SiLU())", inputs=[("float", (4, 5))]),
]


def make_inputs(case, dtype):
    arrays, tensors = [], []
    for i, spec in enumerate(case["inputs"]):
        kind, shape = spec[0], spec[1]
        if kind == "int":
            a = det_int(shape, spec[2], i)
            t = torch.tensor(a, dtype=torch.int64)
        else:
            a = det(shape, 1 + i, case.get("scale", 1.0))
            t = torch.tensor(a, dtype=dtype, requires_grad=kind == "float")
        arrays.append(a.tolist())
        tensors.append(t)
    return arrays, tensors


def record_module(case, dtype_name):
    dtype = DTYPES[dtype_name]
    m = eval(case["ctor"]).to(dtype)
    state = {}
    with torch.no_grad():
        for i, (key, value) in enumerate(m.state_dict(keep_vars=True).items()):
            if value.is_floating_point():
                fill = det(tuple(value.shape), 10 + i, 0.5) + (1.0 if "running_var" in key else 0.0)
                value.copy_(torch.tensor(fill))
            state[key] = value.tolist()
    if case.get("eval"):
        m.eval()
    arrays, inputs = make_inputs(case, dtype)
    out = m(*inputs)
    grad_out = det(tuple(out.shape), 20, 1.0)
    (out * torch.tensor(grad_out, dtype=dtype)).sum().backward()
    result = dict(name=case["name"], ctor=case["ctor"], dtype=dtype_name, eval=bool(case.get("eval")),
                  state=state, inputs=arrays, input_kinds=[s[0] for s in case["inputs"]],
                  grad_out=np.asarray(grad_out).tolist(), output=out.tolist(),
                  grad_fn=type(out.grad_fn).__name__,
                  input_grads=[t.grad.tolist() if t.grad is not None else None for t in inputs],
                  param_grads={k: p.grad.tolist() for k, p in m.named_parameters() if p.grad is not None},
                  buffers_after={k: b.tolist() for k, b in m.named_buffers()})
    if case.get("then_eval"):
        m.eval()
        with torch.no_grad():
            result["eval_output"] = m(*inputs).tolist()
    return result


# ---- optimizers -----------------------------------------------------------------------
OPTIM_CASES = [
    dict(name="sgd", ctor="optim.SGD(params, lr=0.1)"),
    dict(name="sgd_momentum", ctor="optim.SGD(params, lr=0.1, momentum=0.9)"),
    dict(name="sgd_dampening", ctor="optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.5)"),
    dict(name="sgd_nesterov", ctor="optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)"),
    dict(name="sgd_weight_decay", ctor="optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.1)"),
    dict(name="sgd_maximize", ctor="optim.SGD(params, lr=0.01, maximize=True)"),
    dict(name="sgd_groups", ctor="optim.SGD([{'params': [params[0]]}, {'params': [params[1]], 'lr': 0.01}], "
         "lr=0.1, momentum=0.5)"),
    dict(name="adam", ctor="optim.Adam(params, lr=0.05)"),
    dict(name="adam_weight_decay", ctor="optim.Adam(params, lr=0.05, weight_decay=0.1)"),
    dict(name="adam_amsgrad", ctor="optim.Adam(params, lr=0.05, amsgrad=True)"),
    dict(name="adam_low_betas", ctor="optim.Adam(params, lr=0.05, betas=(0.3, 0.8))"),
    dict(name="adam_maximize", ctor="optim.Adam(params, lr=0.05, maximize=True)"),
    dict(name="adamw", ctor="optim.AdamW(params, lr=0.05)"),
    dict(name="adamw_amsgrad", ctor="optim.AdamW(params, lr=0.05, weight_decay=0.5, amsgrad=True)"),
    dict(name="step_lr", ctor="optim.SGD(params, lr=0.1, momentum=0.9)",
         sched="optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)"),
]
OPTIM_STEPS = 6


def optim_problem(dtype):
    """A least-squares problem: loss = mean((X @ W.T + b - Y)^2)."""
    W = torch.tensor(det((3, 4), 1, 0.5), dtype=dtype, requires_grad=True)
    b = torch.tensor(det((3,), 2, 0.5), dtype=dtype, requires_grad=True)
    X = torch.tensor(det((5, 4), 3), dtype=dtype)
    Y = torch.tensor(det((5, 3), 4), dtype=dtype)
    return [W, b], X, Y


def record_optim(case, dtype_name):
    dtype = DTYPES[dtype_name]
    params, X, Y = optim_problem(dtype)
    opt = eval(case["ctor"])
    sched = eval(case["sched"]) if "sched" in case else None
    history, losses, lrs = [], [], []
    for _ in range(OPTIM_STEPS):
        opt.zero_grad()
        loss = ((X @ params[0].T + params[1] - Y) ** 2).mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
            lrs.append(sched.get_last_lr())
        losses.append(loss.item())
        history.append([p.tolist() for p in params])
    state = {str(i): {k: (v.tolist() if torch.is_tensor(v) else v) for k, v in opt.state[p].items()}
             for i, p in enumerate(params)}
    return dict(name=case["name"], ctor=case["ctor"], sched=case.get("sched"), dtype=dtype_name,
                losses=losses, params=history, lrs=lrs, state=state)


# ---- gradient clipping --------------------------------------------------------------
CLIP_CASES = [
    dict(name="norm2", call="nn.utils.clip_grad_norm_(params, max_norm=1.0)"),
    dict(name="norm2_no_clip", call="nn.utils.clip_grad_norm_(params, max_norm=100.0)"),
    dict(name="norm_inf", call="nn.utils.clip_grad_norm_(params, max_norm=0.5, norm_type=float('inf'))"),
    dict(name="norm1", call="nn.utils.clip_grad_norm_(params, max_norm=2.0, norm_type=1)"),
    dict(name="single_tensor", call="nn.utils.clip_grad_norm_(params[0], max_norm=1.0)"),
    dict(name="value", call="nn.utils.clip_grad_value_(params, clip_value=0.3)"),
]


def record_clip(case, dtype_name):
    dtype = DTYPES[dtype_name]
    params = [torch.zeros(3, 4, dtype=dtype, requires_grad=True), torch.zeros(3, dtype=dtype, requires_grad=True),
              torch.zeros(2, dtype=dtype, requires_grad=True)]
    params[0].grad = torch.tensor(det((3, 4), 5), dtype=dtype)
    params[1].grad = torch.tensor(det((3,), 6, 2.0), dtype=dtype)  # params[2] has no grad: skipped
    result = eval(case["call"])
    return dict(name=case["name"], call=case["call"], dtype=dtype_name,
                grads_before=[det((3, 4), 5).tolist(), det((3,), 6, 2.0).tolist()],
                result=None if result is None else result.item(),
                result_dtype=None if result is None else str(result.dtype),
                grads_after=[p.grad.tolist() for p in params[:2]])


# ---- printed text: reprs and error messages ------------------------------------------------
REPR_EXPRS = [
    "nn.Linear(10, 5)", "nn.Linear(3, 4, bias=False)", "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.Tanh()",
    "nn.Sigmoid()", "nn.SiLU()", "nn.GELU()", "nn.GELU(approximate='tanh')", "nn.Softmax(dim=1)", "nn.Softmax()",
    "nn.LogSoftmax(dim=-1)", "nn.Dropout()", "nn.Dropout(0.2)", "nn.LayerNorm(5)",
    "nn.LayerNorm((2, 5), elementwise_affine=False)", "nn.LayerNorm(4, eps=1e-6, bias=False)", "nn.BatchNorm1d(5)",
    "nn.BatchNorm1d(5, affine=False, momentum=None)", "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=0)",
    "nn.MSELoss()", "nn.CrossEntropyLoss()", "nn.Identity()", "nn.Sequential()", "nn.ModuleList()",
    "nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Tanh(), nn.Dropout(0.2)))",
    "nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])",
    "nn.ModuleList([nn.ReLU(), nn.Sequential(nn.Linear(1, 1))])",
    "nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))[0:2]",
    "nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))[-1]",
    "nn.Parameter(torch.tensor([1., 2.]))", "nn.Parameter(torch.tensor([[1.5, -2.], [0., 3.]]))",
    "nn.Parameter(torch.tensor([1., 2.]), requires_grad=False)", "nn.Parameter(torch.tensor(3.5))",
    "nn.Linear(2, 2).load_state_dict(nn.Linear(2, 2).state_dict())",
    "nn.Linear(2, 2).load_state_dict({'weight': torch.zeros(2, 2)}, strict=False)",
    "list(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).state_dict().keys())",
    "[n for n, _ in nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1))).named_modules()]",
    "[n for n, _ in nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1))).named_parameters()]",
    "[n for n, _ in nn.Sequential(nn.Linear(2, 3), nn.ReLU()).named_children()]",
    "[n for n, _ in nn.BatchNorm1d(3).named_buffers()]",
    "type(F.cross_entropy(torch.zeros(2, 3, requires_grad=True), torch.tensor([0, 2])).grad_fn).__name__",
    "type(F.cross_entropy(torch.zeros(2, 3, requires_grad=True), torch.tensor([0, 2])).grad_fn.next_functions[0][0]).__name__",
    "type(F.dropout(torch.ones(2, 3, requires_grad=True), 0.5).grad_fn).__name__",
    "type(F.mse_loss(torch.ones(2, 3, requires_grad=True), torch.zeros(2, 3)).grad_fn).__name__",
    "type(nn.Linear(2, 3)(torch.ones(4, 2)).grad_fn).__name__",
    "type(nn.Embedding(4, 2)(torch.tensor([1, 2])).grad_fn).__name__",
    "optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1).state_dict()['param_groups'][0]['params']",
    "optim.lr_scheduler.StepLR(optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1), 2).get_last_lr()",
]

ERROR_SNIPPETS = [
    "nn.Linear(2, 2).load_state_dict({'weight': torch.zeros(2, 2)})",
    "nn.Linear(2, 2).load_state_dict({'weight': torch.zeros(2, 2), 'bias': torch.zeros(2), 'foo': torch.zeros(1), "
    "'bar.x': torch.zeros(1)})",
    "nn.Linear(2, 2).load_state_dict({'weight': torch.zeros(3, 2), 'bias': torch.zeros(2)})",
    "nn.Sequential(nn.Linear(2, 2)).load_state_dict({'0.weight': torch.zeros(2, 2), 'x': torch.zeros(1)})",
    "m = nn.Linear(2, 2); m.weight = torch.zeros(2, 2)",
    "nn.Module()(torch.zeros(1))",
    "nn.Linear(3, 2)(torch.zeros(4, 5))",
    "F.cross_entropy(torch.zeros(4, 5), torch.tensor([1, 0, 5, 2]))",
    "F.cross_entropy(torch.zeros(4, 5), torch.tensor([1, 0, 4]))",
    "F.nll_loss(torch.zeros(4, 5), torch.tensor([1., 0., 4., 2.]))",
    "F.dropout(torch.zeros(2), 1.5)",
    "nn.Dropout(-0.1)",
    "F.embedding(torch.tensor([1., 2.]), torch.zeros(3, 2))",
    "F.embedding(torch.tensor([1, 5]), torch.zeros(3, 2))",
    "nn.BatchNorm1d(5)(torch.zeros(1, 5))",
    "nn.BatchNorm1d(5)(torch.zeros(5))",
    "nn.BatchNorm1d(5)(torch.zeros(2, 4))",
    "nn.LayerNorm(4)(torch.zeros(4, 5))",
    "F.mse_loss(torch.zeros(4, 5), torch.zeros(4))",
    "nn.Sequential(nn.ReLU())[3]",
    "optim.SGD([], lr=0.1)",
    "optim.SGD([torch.zeros(2, requires_grad=True)], lr=-1)",
    "optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1, momentum=-1)",
    "optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1, nesterov=True)",
    "optim.SGD(torch.zeros(2, requires_grad=True), lr=0.1)",
    "optim.SGD([torch.zeros(2, requires_grad=True) * 2], lr=0.1)",
    "optim.SGD([torch.zeros(2, requires_grad=True), 1], lr=0.1)",
    "p = torch.zeros(2, requires_grad=True); optim.SGD([{'params': [p]}, {'params': [p]}], lr=0.1)",
    "optim.SGD({torch.zeros(2, requires_grad=True)}, lr=0.1)",
    "optim.Adam([torch.zeros(2, requires_grad=True)], betas=(1.0, 0.9))",
    "optim.Adam([torch.zeros(2, requires_grad=True)], betas=(0.9, -0.1))",
    "optim.Adam([torch.zeros(2, requires_grad=True)], eps=-1)",
    "optim.Adam([torch.zeros(2, requires_grad=True)], weight_decay=-1)",
    "p = torch.zeros(2, requires_grad=True); p.grad = torch.tensor([float('nan'), 1.]); "
    "nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)",
]


def record_error(code):
    namespace = dict(torch=torch, nn=nn, F=F, optim=optim)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(code, namespace)
        except Exception as e:  # noqa: BLE001 - recording whatever torch raises
            return dict(code=code, type=type(e).__name__, message=str(e),
                        warnings=[str(w.message) for w in caught])
    return dict(code=code, type=None, message=None, warnings=[str(w.message) for w in caught])


def main():
    torch.manual_seed(0)
    goldens = dict(
        torch_version=torch.__version__,
        modules=[record_module(c, d) for c in MODULE_CASES for d in DTYPES],
        optim=[record_optim(c, d) for c in OPTIM_CASES for d in DTYPES],
        clip=[record_clip(c, d) for c in CLIP_CASES for d in DTYPES],
        reprs=[dict(expr=e, repr=_repr(eval(e))) for e in REPR_EXPRS],
        errors=[record_error(code) for code in ERROR_SNIPPETS],
    )
    OUT.write_text(json.dumps(goldens, indent=1, allow_nan=True) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB)")


def _repr(value):
    return value if isinstance(value, str) else repr(value)


if __name__ == "__main__":
    main()
