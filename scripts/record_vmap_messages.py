"""Record the warning PyTorch's vmap gives for an op without a batching rule.

    /work/torchenv/bin/python scripts/record_vmap_messages.py

Writes ``tests/fixtures/vmap_messages.json``; ``tests/test_vmap.py`` checks chibigrad's fallback warns
with the same text (for argwhere, an op PyTorch 2.13 has no batching rule for). vmap's errors are
recorded by the golden program ``tests/golden/programs/vmap_errors.py``.
"""
import json
import warnings
from pathlib import Path

import torch
from torch.func import vmap

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "vmap_messages.json"


def main():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vmap(torch.argwhere)(torch.ones(2, 3))
    messages = [str(w.message) for w in caught if "performance drop" in str(w.message)]
    OUT.write_text(json.dumps({"torch": torch.__version__, "op": "aten::argwhere", "fallback_warning": messages[0]},
                              indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
