"""tensor_repr must print exactly what PyTorch prints.

The expected strings were recorded from real PyTorch by
scripts/record_repr_goldens.py; this test needs only numpy.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from chibigrad._tensor_str import tensor_repr

GOLDENS = json.loads((Path(__file__).parent / "fixtures" / "repr_goldens.json").read_text())


def _array(case):
    """Rebuild the exact array: JSON floats widen losslessly, so casting back
    to float32/float16 restores the recorded bits."""
    return np.array(case["data"], dtype=case["dtype"]).reshape(case["shape"])


@pytest.mark.parametrize("case", GOLDENS, ids=[c["name"] for c in GOLDENS])
def test_matches_torch(case):
    got = tensor_repr(
        _array(case),
        device=case["device"],
        grad_fn=case["grad_fn"],
        requires_grad=case["requires_grad"],
    )
    assert got == case["expected"]


def test_goldens_cover_enough_cases():
    assert len(GOLDENS) >= 150
