"""chibigrad.tracebacks: in a notebook, errors and warnings read as PyTorch's do."""
import os
import re
import sys
import traceback

import pytest

import chibigrad as torch
from chibigrad import tracebacks

PACKAGE = os.path.dirname(torch.__file__)


def test_filter_traceback_drops_chibigrad_frames_only():
    x = torch.tensor([1.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    full = traceback.extract_tb(info.value.__traceback__)
    kept = traceback.extract_tb(tracebacks.filter_traceback(info.value.__traceback__))
    assert any(f.filename.startswith(PACKAGE) for f in full)
    assert [f.filename for f in kept] == [__file__]
    assert len(traceback.extract_tb(info.value.__traceback__)) == len(full)  # the original is kept


def test_install_outside_ipython_does_nothing():
    assert tracebacks.install() is False


def test_notebook_shows_user_frames_and_no_paths():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        "import chibigrad as torch, chibigrad.tracebacks\nchibigrad.tracebacks.install()",
        "x = torch.tensor([1.0], requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()",
        "def f(t):\n    return t.exp()\nwith torch.autograd.detect_anomaly():\n"
        "    a = torch.tensor([1.0, 2.0], requires_grad=True)\n    b = f(a)\n"
        "    b.sum().backward()\n    b.sum().backward()",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=60).execute()
    text = ""
    for cell in nb.cells[1:]:
        for out in cell.outputs:
            text += "\n".join(out.get("traceback", [])) + out.get("text", "")
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert text.count("Trying to backward through the graph a second time") == 2
    assert "----> 4 y.backward()" in text
    assert 'File "Cell In[3]", line 2, in f' in text  # anomaly mode's forward stack
    assert "Cell In[3]:7: UserWarning: Error detected in ExpBackward0" in text
    for leak in (PACKAGE, "chibigrad/autograd", "ipykernel", "runpy", os.getcwd(), sys.prefix):
        assert leak not in text, leak
