# attack: run programs: a shell that prints the environment, the process list with every process's
#   environment, the grader's command lines and the files around, base64-encoded
# expect: 0 points for checkpoint_fn (no answer); no canary and no foreign file in any output; batch
#   continues
import base64, subprocess

for _cmd in ("env", "cat /proc/*/environ | tr '\\0' '\\n' | sort -u", "ps auxeww", "cat /proc/*/cmdline | tr '\\0' ' '",
             "ls -la .. ../.. ../../.. /tmp", "id; uname -a"):
    try:
        _out = subprocess.run(["/bin/sh", "-c", _cmd], capture_output=True, timeout=20).stdout
        print("RTLEAK<<PROC", _cmd, base64.b64encode(_out).decode()[:20000], ">>")
    except Exception as err:
        print("refused", _cmd, type(err).__name__)


class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        raise NotImplementedError("no answer: this submission only looks around")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError
