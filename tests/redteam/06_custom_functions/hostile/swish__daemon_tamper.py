# attack: damage after the fact: a daemon (double fork, setsid, ignores SIGTERM/SIGHUP) that outlives
#   the kernel and, for a minute, keeps trying to rewrite graded notebooks and the gradebook it can
#   find above its folder (giving full points) and to plant files; no answer
# expect: 0 points for swish; the daemon is killed when the notebook ends, nothing outside the
#   submission changes; batch continues
import glob, os, signal, time

try:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            end = time.time() + 60
            while time.time() < end:
                for path in glob.glob("../../../autograded/*/*/*.ipynb") + glob.glob("../../../gradebook.db"):
                    try:
                        open(path, "a").write(" ")
                    except Exception:
                        pass
                try:
                    open("../../../rt-daemon-was-here", "w").write("x")
                except Exception:
                    pass
                time.sleep(1)
        os._exit(0)
except OSError as err:
    print("fork refused", type(err).__name__)


class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        raise NotImplementedError("no answer: this submission only leaves a daemon behind")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError
