"""torch.return_types: the named pairs that ``max(dim)``, ``min(dim)``, ``sort``, ``topk`` and ``linalg.slogdet`` return.

They are tuples (``values, indices = x.max(1)`` works) whose fields also have
names (``x.max(1).values``), printed as PyTorch prints them.
"""
import collections


def _pair(name, fields=("values", "indices")):
    def __repr__(self):
        return f"torch.return_types.{name}(\n" + ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self)) + ")"

    base = collections.namedtuple(name, fields)
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


max = _pair("max")  # noqa: A001 - PyTorch's name
min = _pair("min")  # noqa: A001
sort = _pair("sort")
topk = _pair("topk")
linalg_slogdet = _pair("linalg_slogdet", ("sign", "logabsdet"))
