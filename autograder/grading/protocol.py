"""What crosses between the judge and the student process: typed messages as JSON, arrays as ``.npy`` bytes.

The judge sends a :class:`Call` (which student function, the recipe of a case to build, what to observe
of the result); the student process answers with a :class:`Reply` holding plain data only. Values are
``None``, booleans, numbers, strings, lists, tuples, dicts with string keys and numpy arrays of numbers or
booleans. Decoding never unpickles and never runs anything: an array is read with
``np.load(allow_pickle=False)`` and anything else that is not plain JSON is refused (``ProtocolError``).

Used on both sides (the student process gets a copy of this module): keep it free of chibigrad and of
anything the judge knows.
"""
import base64
import io
import json
from dataclasses import dataclass, field, fields

import numpy as np

MIME = "application/x-chibigrad-reply+json"  # how a reply travels on the kernel's output channel
MAX_REPLY_BYTES = 64_000_000  # a reply larger than this is refused unread


class ProtocolError(ValueError):
    """A message that is not what the protocol allows (forged, truncated, or a value of another type)."""


def encode(value):
    """``value`` as JSON-ready data; raises ProtocolError for anything that is not plain data."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"float": repr(float(value))} if isinstance(value, float) else int(value)
    if isinstance(value, np.generic):
        return encode(np.asarray(value))
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ProtocolError(f"an array of dtype {value.dtype} (only numbers and booleans cross)")
        buffer = io.BytesIO()
        np.save(buffer, value, allow_pickle=False)
        return {"ndarray": base64.b64encode(buffer.getvalue()).decode()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ProtocolError("a dict whose keys are not all strings")
        return {"dict": {k: encode(v) for k, v in value.items()}}
    raise ProtocolError(f"a {type(value).__name__} (only plain data crosses: numbers, strings, lists, arrays)")


def decode(data):
    """The inverse of :func:`encode`, strict: anything else raises ProtocolError."""
    if data is None or isinstance(data, (bool, str, int)):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        (kind, inner), = data.items()
        if kind == "float" and isinstance(inner, str):
            return float(inner)
        if kind == "tuple" and isinstance(inner, list):
            return tuple(decode(v) for v in inner)
        if kind == "dict" and isinstance(inner, dict):
            return {k: decode(v) for k, v in inner.items()}
        if kind == "ndarray" and isinstance(inner, str):
            try:
                array = np.load(io.BytesIO(base64.b64decode(inner, validate=True)), allow_pickle=False)
            except Exception as err:
                raise ProtocolError(f"an array that does not read back ({type(err).__name__})") from None
            if array.dtype.kind not in "biuf":
                raise ProtocolError(f"an array of dtype {array.dtype}")
            return array
    raise ProtocolError(f"unexpected data of type {type(data).__name__}")


@dataclass(frozen=True)
class Call:
    """Call the student's function ``name`` on the case built from ``case`` (a recipe: plain data), and
    answer with what ``observe`` reads of the result. ``setup``: source of the release's locked cells to run
    again first (so the case is built with the instructor's classes, not ones a later cell replaced)."""

    name: str
    case: dict
    observe: str = "value"
    setup: str = ""

    def to_json(self):
        return json.dumps({"name": self.name, "case": encode(self.case), "observe": self.observe,
                           "setup": self.setup})

    @classmethod
    def from_json(cls, text):
        data = json.loads(text)
        return cls(name=str(data["name"]), case=decode(data["case"]), observe=str(data["observe"]),
                   setup=str(data.get("setup", "")))


@dataclass(frozen=True)
class Reply:
    """What the student process answers: ``value`` (plain data) when ``ok``, else ``error`` (the exception's
    type name) and ``message``; ``warning`` is the first warning the call emitted, ``stdout`` what it printed."""

    ok: bool
    value: object = None
    error: str = ""
    message: str = ""
    warning: str = ""
    stdout: str = ""
    extra: dict = field(default_factory=dict)

    def to_json(self):
        data = {f.name: getattr(self, f.name) for f in fields(self)}  # not asdict: it deep-copies the value first
        data["value"] = encode(self.value)
        data["extra"] = encode(self.extra)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text):
        if not isinstance(text, str) or len(text) > MAX_REPLY_BYTES:
            raise ProtocolError("a reply that is not text or is too large")
        try:
            data = json.loads(text)
        except ValueError:
            raise ProtocolError("a reply that is not JSON") from None
        if not isinstance(data, dict) or set(data) != {"ok", "value", "error", "message", "warning", "stdout",
                                                        "extra"}:
            raise ProtocolError("a reply with other fields than the protocol's")
        strings = ("error", "message", "warning", "stdout")
        if not isinstance(data["ok"], bool) or not all(isinstance(data[k], str) for k in strings):
            raise ProtocolError("a reply whose fields have the wrong types")
        extra = decode(data["extra"])
        if not isinstance(extra, dict):
            raise ProtocolError("a reply whose extra is not a dict")
        return cls(ok=data["ok"], value=decode(data["value"]), extra=extra, **{k: data[k][:20_000] for k in strings})
