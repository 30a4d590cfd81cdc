# Mixing dtypes: matrix products never promote (each kernel refuses in its own words), an in-place
# op may not put floats in an integer tensor, integer inputs have no softmax/norm/var; where
# results are promoted (cat, stack, clamp), PyTorch's rules decide, not numpy's.
import torch
import torch.nn.functional as F


def attempt(label, fn):
    try:
        r = fn()
        print(label, "ok", r)
    except Exception as e:
        print(label, type(e).__name__, "|", e)


f32, f64, i64 = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.int64)
v32, v64 = torch.ones(2), torch.ones(2, dtype=torch.float64)
b32, b64 = torch.ones(1, 2, 2), torch.ones(1, 2, 2, dtype=torch.float64)
attempt("mm float @ double", lambda: f32 @ f64)
attempt("mm double @ float", lambda: torch.mm(f64, f32))
attempt("mm long @ float", lambda: i64 @ f32)
attempt("mm long @ long", lambda: i64 @ i64)
attempt("mv", lambda: f32 @ v64)
attempt("torch.mv", lambda: torch.mv(f64, v32))
attempt("vector @ matrix", lambda: v64 @ f32)
attempt("dot", lambda: v32 @ v64)
attempt("bmm", lambda: torch.bmm(b32, b64))
attempt("matmul 3d @ 3d", lambda: b32 @ b64)
attempt("matmul 3d @ 2d", lambda: b32 @ f64)
attempt("matmul 2d @ 3d", lambda: f32 @ b64)
attempt("linear double input", lambda: F.linear(f64, f32, torch.ones(2)))
attempt("linear no bias", lambda: F.linear(f64, f32))
attempt("linear 3d input", lambda: F.linear(b64, f32, torch.ones(2)))
attempt("linear double bias", lambda: F.linear(f32, f32, torch.ones(2, dtype=torch.float64)))
attempt("Linear on numpy's float64", lambda: torch.nn.Linear(2, 2)(torch.from_numpy(f64.numpy())))
attempt("add_ float into long", lambda: i64.clone().add_(1.5))
attempt("sub_ tensor into long", lambda: i64.clone().sub_(torch.ones(2)))
attempt("div_ long", lambda: i64.clone().div_(2))
attempt("mul_ bool", lambda: torch.ones(2, dtype=torch.bool).mul_(2))
attempt("+= float on long", lambda: i64.clone().__iadd__(0.5))
attempt("add_ double into float", lambda: f32.clone().add_(f64))
attempt("add_ long into float", lambda: f32.clone().add_(i64))
attempt("clamp_ long at 0.5", lambda: i64.clone().clamp_(0.5))
attempt("norm long", lambda: i64.norm())
attempt("softmax long last", lambda: i64.softmax(1))
attempt("softmax long 0", lambda: i64.softmax(0))
attempt("log_softmax long", lambda: F.log_softmax(i64, -1))
attempt("log_softmax long 0", lambda: i64.log_softmax(0))
attempt("var long", lambda: i64.var())
attempt("std long", lambda: i64.std(1))
attempt("mean long", lambda: i64.mean(1))
attempt("long ** -1", lambda: torch.tensor([2]) ** -1)
attempt("long pow long tensor", lambda: torch.tensor([2, 1, -1, -1, 3, 0, -2]).pow(torch.tensor([-1, -3, -3, -2, 0, -1, -2])))
attempt("exp long", lambda: i64.exp())
attempt("clamp long at 0.5", lambda: i64.clamp(0.5))
attempt("cat long float", lambda: torch.cat([i64, f32]))
attempt("cat float double", lambda: torch.cat([f32, f64]).dtype)
attempt("cat bool long", lambda: torch.cat([torch.ones(1, dtype=torch.bool), torch.ones(1, dtype=torch.int64)]))
attempt("stack long float", lambda: torch.stack([i64, f32]))
attempt("where long or 1.5", lambda: torch.where(torch.ones(2) > 0, i64, 1.5))
