"""Record PyTorch's tensor reprs as golden strings for tests/test_tensor_str.py.

Run with a Python that has torch installed (the tests themselves do not):

    /work/torchenv/bin/python scripts/record_repr_goldens.py

Every case is built deterministically (hand-picked edge cases plus seeded
random arrays), converted to a torch tensor, and ``repr`` of that tensor is
stored next to the exact data.  Data is stored flat as JSON numbers: float16 /
float32 values are widened to float64, whose shortest repr round-trips back to
the identical narrow value; nan/inf use Python's json extensions (NaN,
Infinity), which ``json.load`` reads back.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "repr_goldens.json"

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I32, I64, U8, B = np.int8, np.int32, np.int64, np.uint8, np.bool_
nan, inf = math.nan, math.inf


def hand_picked():
    """(name, array, autograd) triples covering the formatter's branches.

    autograd is None, "leaf" (requires_grad=True) or a callable applied to a
    leaf, producing a non-leaf with the same values and a real grad_fn.
    """
    a = np.array
    mul1 = lambda t: t * 1  # MulBackward0
    add0 = lambda t: t + 0  # AddBackward0
    cases = [
        ("brief_vec", a([2.0, 4.0, 6.0], F32), None),
        ("brief_pow_scalar", a(64.0, F32), "pow3"),
        ("brief_fixed", a([1.5, 2.25], F32), None),
        ("brief_requires_grad", a([1.0, 2.0], F32), "leaf"),
        ("brief_int", a([1, 2], I64), None),
        ("brief_bool", a([True, False], B), None),
        ("brief_float64", a([1.0, 2.0], F64), None),
        ("sci_single", a([1e10], F32), None),
        ("sci_pair", a([1e10, 1.0], F32), None),
        ("sci_mixed_tiny_huge", a([1e-5, 1e8, 1.0], F32), None),
        ("sci_mixed_2d", a([[1e-5, 2.5], [1e8, -3.0]], F32), None),
        ("tiny_fixed_boundary", a([1e-4, 0.5], F32), None),
        ("tiny_below_boundary", a([0.99e-4, 0.05], F32), None),
        ("ratio_exactly_1000", a([1.0, 1000.0], F32), None),
        ("ratio_above_1000", a([1.0, 1001.0], F32), None),
        ("ratio_1000_fractional", a([0.5, 400.25], F32), None),
        ("max_1e8_int", a([1e8, 1.0, 2e5], F64), None),
        ("max_above_1e8", a([100000008.0], F32), None),
        ("int_mode_big", a([12345678.0, -3.0, 1e5], F32), None),
        ("nan_only", a([nan], F32), None),
        ("inf_pair", a([inf, -inf], F32), None),
        ("nan_fixed", a([nan, 1.5], F32), None),
        ("nan_int_mode", a([nan, 1.0], F32), None),
        ("mixed_nonfinite", a([0.0, nan, inf, 2.0, -inf], F32), None),
        ("nonfinite_sci", a([nan, 1e-7, -inf, 3e4], F32), None),
        ("nan_scalar", a(nan, F32), None),
        ("neg_inf_scalar_f64", a(-inf, F64), None),
        ("neg_zero", a([-0.0], F32), None),
        ("neg_zero_pair", a([-0.0, 0.0], F32), None),
        ("neg_zero_fixed", a([-0.0, 1.5], F32), None),
        ("neg_zero_sci", a([-0.0, 1e-9], F32), None),
        ("neg_zero_scalar", a(-0.0, F32), None),
        ("zeros_vec", np.zeros(3, F32), None),
        ("zeros_2d", np.zeros((2, 2), F32), None),
        ("zero_scalar", a(0.0, F32), None),
        ("zero_scalar_leaf", a(0.0, F32), "leaf"),
        ("scalar_fixed", a(3.5, F32), None),
        ("scalar_pi", a(math.pi, F32), None),
        ("scalar_tiny", a(1e-5, F32), None),
        ("scalar_huge", a(3e20, F32), None),
        ("scalar_int_big", a(123456789012345, I64), None),
        ("scalar_int_neg", a(-7, I64), None),
        ("scalar_int64_min", a(np.iinfo(np.int64).min, I64), None),
        ("scalar_bool", a(True, B), None),
        ("scalar_int8_min", a(-128, I8), None),
        ("scalar_uint8_max", a(255, U8), None),
        ("scalar_int32", a(2147483647, I32), None),
        ("scalar_f16", a(0.1, F16), None),
        ("scalar_f64", a(0.1, F64), None),
        ("scalar_f64_grad", a(2.0, F64), mul1),
        ("one_elem", a([7.25], F32), None),
        ("one_by_one", a([[7.0]], F32), None),
        ("one_one_one", a([[[-1.5]]], F32), None),
        ("shape_2_1_3", np.arange(6, dtype=F32).reshape(2, 1, 3) - 2.5, None),
        ("rounding_up", a([0.99999, 1.23456789, -0.00005, 2.0], F32), None),
        ("rounding_half", a([0.12345, 0.12355, 1.00005], F64), None),
        ("point_one_f32", a([0.1, 0.2, 0.3], F32), None),
        ("f32_max", a([np.finfo(F32).max, 1.0], F32), None),
        ("f32_denormal", a([1e-45, 1.0], F32), None),
        ("f64_extremes", a([1e-300, 1e300], F64), None),
        ("f16_max", a([65504.0, -0.5], F16), None),
        ("f16_inf", a([inf, 1.0, 0.25], F16), None),
        ("f16_fixed", a([0.1, 0.2, 0.7], F16), None),
        ("f16_sci", a([1e-5, 300.0], F16), None),
        ("ints_neg", a([-1, 20, -300, 4000], I64), None),
        ("ints_2d_neg", a([[-1, 0, 12], [100, -5, 7]], I64), None),
        ("int32_vec", a([1, -2, 3], I32), None),
        ("int8_vec", a([-128, 0, 127], I8), None),
        ("uint8_vec", a([0, 7, 255], U8), None),
        ("bool_2d", a([[True, False, True], [False, False, True]], B), None),
        ("bool_all_true", a([True, True], B), None),
        ("long_row_int_mode", np.arange(30, dtype=F32), None),
        ("long_row_ints", np.arange(100, dtype=I64) * 37 - 1000, None),
        ("long_row_int8", np.arange(-60, 60, dtype=I8), None),
        ("long_row_bool", np.arange(40) % 3 == 0, None),
        ("long_row_grad", np.linspace(-1, 1, 25, dtype=F32), mul1),
        ("long_row_leaf_f64", np.linspace(0, 3, 17, dtype=F64), "leaf"),
        ("suffix_wraps", np.arange(8, dtype=F32) + 0.5, add0),
        ("suffix_wraps_f64_leaf", np.arange(7, dtype=F64) + 0.25, "leaf"),
        ("wide_2d_grad", np.arange(24, dtype=F32).reshape(2, 12) / 7, mul1),
        ("summary_vec_int", np.arange(2000, dtype=I64), None),
        ("summary_vec_f32", np.arange(2000, dtype=F32) / 3, None),
        ("summary_2d_f32", (np.arange(2000, dtype=F32).reshape(40, 50) - 1000) / 8, None),
        ("summary_3d", np.arange(2000, dtype=F32).reshape(10, 10, 20), None),
        ("summary_narrow_rows", np.arange(1200, dtype=F64).reshape(2, 600) * 1.5, None),
        ("summary_hidden_huge", np.concatenate([np.ones(3), np.full(1000, 1e12), np.ones(3) * 2]).astype(F32), None),
        ("summary_bool", np.arange(1500) % 2 == 0, None),
        ("summary_grad", np.arange(1001, dtype=F32), "leaf"),
        ("threshold_exact", np.arange(1000, dtype=F32), None),
        ("empty_1d", np.zeros(0, F32), None),
        ("empty_2d", np.zeros((0, 3), F32), None),
        ("empty_3d", np.zeros((2, 0, 4), F32), None),
        ("empty_int", np.zeros(0, I64), None),
        ("empty_int_2d", np.zeros((3, 0), I64), None),
        ("empty_bool", np.zeros(0, B), None),
        ("empty_f64", np.zeros(0, F64), None),
        ("empty_leaf", np.zeros(0, F32), "leaf"),
        ("empty_2d_grad", np.zeros((0, 2), F64), mul1),
    ]
    return cases


def random_cases(n=70, seed=1234):
    """Seeded random arrays of varied shapes, dtypes and magnitudes."""
    rng = np.random.default_rng(seed)
    dtypes = [F32, F32, F32, F64, F16, I64, I32, I8, U8, B]
    fixed_shapes = [(3, 3), (2, 3, 4), (1,), (), (5,), (4, 5), (2, 2, 2, 2), (3, 1, 2)]
    cases = []
    for k in range(n):
        dtype = dtypes[k % len(dtypes)]
        if k < len(fixed_shapes):
            shape, dtype = fixed_shapes[k], F32
        else:
            ndim = int(rng.integers(0, 5))
            hi = 40 if ndim == 1 else (12 if ndim == 2 else 5)
            shape = tuple(int(s) for s in rng.integers(1, hi + 1, size=ndim))
        size = int(np.prod(shape))
        if np.issubdtype(dtype, np.floating):
            data = rng.standard_normal(size)
            style = rng.integers(0, 5)
            if style == 1:  # wide magnitudes -> scientific
                data *= 10.0 ** rng.uniform(-7, 11, size)
            elif style == 2:  # whole numbers -> int mode
                data = np.round(data * 10.0 ** rng.integers(0, 5))
            elif style == 3:  # one magnitude, shifted
                data *= 10.0 ** rng.integers(-5, 7)
            if size > 2 and rng.random() < 0.3:
                data[rng.integers(0, size)] = rng.choice([0.0, -0.0, nan, inf, -inf])
            with np.errstate(over="ignore"):  # float16 overflow -> inf is wanted
                arr = data.astype(dtype).reshape(shape)
        elif dtype is B:
            arr = (rng.random(size) < 0.5).reshape(shape)
        else:
            info = np.iinfo(dtype)
            lim = [10, 1000, info.max][int(rng.integers(0, 3))]
            lo = max(info.min, -lim)
            arr = rng.integers(lo, min(info.max, lim), size=size, endpoint=True, dtype=dtype)
            arr = arr.reshape(shape)
        autograd = None
        if np.issubdtype(dtype, np.floating) and dtype is not F16:
            autograd = [None, None, "leaf", "mul1", "clone", "view"][int(rng.integers(0, 6))]
        cases.append((f"random_{k:02d}", arr, autograd))
    return cases


def make_tensor(arr, autograd):
    """Build the torch tensor; autograd ops chosen so values stay identical."""
    t = torch.from_numpy(np.array(arr, copy=True))
    if autograd is None:
        return t
    t.requires_grad_(True)
    if autograd == "leaf":
        return t
    if autograd == "pow3":
        base = torch.tensor(float(np.cbrt(arr)), requires_grad=True)
        return base**3
    ops = {
        "mul1": lambda x: x * 1,
        "clone": lambda x: x.clone(),
        "view": lambda x: x.view(x.shape),
    }
    op = ops.get(autograd, autograd)
    return op(t)


def record(name, arr, autograd):
    t = make_tensor(arr, autograd)
    data = t.detach().numpy()
    assert data.dtype == arr.dtype and np.array_equal(data, arr, equal_nan=True), name
    return {
        "name": name,
        "dtype": arr.dtype.name,
        "shape": list(arr.shape),
        "data": data.reshape(-1).tolist(),
        "device": None,
        "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
        "requires_grad": t.requires_grad,
        "expected": repr(t),
    }


def device_cases():
    """CUDA cases without a GPU: reuse torch's own _tensor_str/_add_suffixes
    with the suffix list _str_intern would build (device, dtype, grad_fn)."""
    ts = torch._tensor_str
    out = []
    specs = [
        ("cuda_vec", np.array([1.0, 2.0, 3.0], F32), None, False),
        ("cuda_f64_grad", np.array([[0.5, -1.25], [3.0, 4.0]], F64), "MulBackward0", True),
        ("cuda_long_leaf", np.arange(12, dtype=F32) + 0.125, None, True),
    ]
    for name, arr, grad_fn, requires_grad in specs:
        t = torch.from_numpy(arr.copy())
        suffixes = ["device='cuda:0'"]
        if t.dtype not in (torch.float32, torch.int64, torch.bool):
            suffixes.append(f"dtype={t.dtype}")
        if grad_fn is not None:
            suffixes.append(f"grad_fn=<{grad_fn}>")
        elif requires_grad:
            suffixes.append("requires_grad=True")
        expected = ts._add_suffixes("tensor(" + ts._tensor_str(t, 7), suffixes, 7, False)
        out.append({
            "name": name,
            "dtype": arr.dtype.name,
            "shape": list(arr.shape),
            "data": arr.reshape(-1).tolist(),
            "device": "cuda:0",
            "grad_fn": grad_fn,
            "requires_grad": requires_grad,
            "expected": expected,
        })
    return out


def main():
    cases = [record(*c) for c in hand_picked() + random_cases()]
    cases += device_cases()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # one case per line keeps the file diffable without exploding big arrays
    OUT.write_text("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
