"""Record what PyTorch saves for backward in chapter 7c's transformer block.

    /path/to/python-with-torch scripts/record_transformer_case.py

Runs the ``Block`` cell of book/07c_transformer.md under real PyTorch (the same source the
chapter runs on chibigrad) and writes book/data/transformer_case_pytorch.json: for each
sequence length, the bytes of the tensors every node exposes as ``grad_fn._saved_*``,
summed by node type; the same in eval mode; and node counts in both modes.
"""
import json
import re
from collections import Counter
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "07c_transformer.md"
OUT = ROOT / "book" / "data" / "transformer_case_pytorch.json"
B, D, HEADS, LENGTHS, EVAL_LENGTH = 4, 64, 4, [32, 64, 128, 256], 128


def block_class():
    """The chapter's ``Block``, defined under torch."""
    source = re.search(r"```\{code-cell\} python3\n(class Block\(nn\.Module\):.*?)```", CHAPTER.read_text(), re.S)
    namespace = {"torch": torch, "nn": nn, "F": F}
    exec(source.group(1), namespace)
    return namespace["Block"]


def nodes(out):
    seen, stack = {out.grad_fn}, [out.grad_fn]
    while stack:
        node = stack.pop()
        yield node
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)


def saved_bytes(node):
    total = 0
    for name in dir(node):
        if name.startswith("_saved_"):
            value = getattr(node, name)
            values = value if isinstance(value, tuple) else (value,)
            total += sum(v.nbytes for v in values if isinstance(v, torch.Tensor))
    return total


def saved_by_type(out):
    by_type = Counter()
    for node in nodes(out):
        by_type[node.name()] += saved_bytes(node)
    return dict(sorted(by_type.items()))


def main():
    torch.manual_seed(0)
    block = block_class()(D, HEADS)
    record = {"torch_version": torch.__version__.split("+")[0], "batch": B, "width": D, "heads": HEADS,
              "saved_by_type": {}, "eval_length": EVAL_LENGTH}
    for T in LENGTHS:
        record["saved_by_type"][str(T)] = saved_by_type(block(torch.randn(B, T, D)))
    x = torch.randn(B, EVAL_LENGTH, D)
    record["node_counts"] = dict(sorted(Counter(n.name() for n in nodes(block(x))).items()))
    block.eval()
    out = block(x)
    record["eval_saved_by_type"] = saved_by_type(out)
    record["eval_node_counts"] = dict(sorted(Counter(n.name() for n in nodes(out)).items()))
    with torch.no_grad():
        record["no_grad_has_grad_fn"] = block(x).grad_fn is not None
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
