# attack: look for processes to kill: probe every pid up to 65536 with signal 0 (a permission check,
#   sends nothing) and report how many the kernel may signal besides itself and its own children;
#   no answer
# expect: 0 points for grad_norm_logger; no process outside the kernel's sandbox may be signalled;
#   batch continues
import os

_mine, _foreign = os.getpid(), []
for _pid in range(2, 65536):
    if _pid == _mine:
        continue
    try:
        os.kill(_pid, 0)
        _foreign.append(_pid)
    except (ProcessLookupError, PermissionError, OSError):
        pass
print("RT-SIGNALLABLE processes besides this kernel:", len(_foreign))


class GradNormLogger:
    def __init__(self, model):
        raise NotImplementedError("no answer: this submission only probes processes")

    def remove(self):
        raise NotImplementedError
