"""Chapter 7c's transformer block saves what PyTorch saves (book/data/transformer_case_pytorch.json,
recorded by scripts/record_transformer_case.py from the chapter's own Block cell)."""
import json
import re
from collections import Counter
from pathlib import Path

import pytest

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn

ROOT = Path(__file__).resolve().parent.parent
RECORDED = json.loads((ROOT / "book" / "data" / "transformer_case_pytorch.json").read_text())
# PyTorch's layer norm also keeps mean, 1/sigma and bias; its masked_fill is MaskedFillBackward0 and keeps the
# mask (chibigrad: WhereBackward0, mask outside the saved tensors); its scalar scale is 8 bytes, chibigrad's 4.
KNOWN_DIFFERENCES = {"NativeLayerNormBackward0", "MaskedFillBackward0", "WhereBackward0", "MulBackward0"}


def block_class():
    text = (ROOT / "book" / "07c_transformer.md").read_text()
    source = re.search(r"```\{code-cell\} python3\n(class Block\(nn\.Module\):.*?)```", text, re.S).group(1)
    namespace = {"torch": torch, "nn": nn, "F": F}
    exec(source, namespace)
    return namespace["Block"]


def saved_by_type(out):
    seen, stack, by_type = {out.grad_fn}, [out.grad_fn], Counter()
    while stack:
        node = stack.pop()
        by_type[node.name()] += sum(nbytes for _, _, nbytes, _ in node.saved_tensors_info)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return by_type


@pytest.mark.parametrize("length", sorted(RECORDED["saved_by_type"], key=int))
def test_saved_bytes_by_node_type_match_pytorch(length):
    torch.manual_seed(0)
    block = block_class()(RECORDED["width"], RECORDED["heads"])
    ours = saved_by_type(block(torch.randn(RECORDED["batch"], int(length), RECORDED["width"])))
    theirs = {name.replace("torch::autograd::", ""): n for name, n in RECORDED["saved_by_type"][length].items()}
    compared = (set(ours) | set(theirs)) - KNOWN_DIFFERENCES
    assert {"AddmmBackward0", "BmmBackward0", "SoftmaxBackward0", "GeluBackward0"} <= compared
    assert {t: ours.get(t, 0) for t in compared} == {t: theirs.get(t, 0) for t in compared}
    # the dropout masks and the scale: equal but for the scalar's 4 bytes
    assert theirs["MulBackward0"] - ours["MulBackward0"] == 4


def test_eval_mode_drops_the_dropout_nodes_as_in_pytorch():
    torch.manual_seed(0)
    block = block_class()(RECORDED["width"], RECORDED["heads"]).eval()
    out = block(torch.randn(RECORDED["batch"], RECORDED["eval_length"], RECORDED["width"]))
    seen, stack, names = {out.grad_fn}, [out.grad_fn], Counter()
    while stack:
        node = stack.pop()
        names[node.name()] += 1
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    assert names["MulBackward0"] == RECORDED["eval_node_counts"]["MulBackward0"]
    with torch.no_grad():
        assert (block(torch.randn(1, 4, RECORDED["width"])).grad_fn is not None) is RECORDED["no_grad_has_grad_fn"]
