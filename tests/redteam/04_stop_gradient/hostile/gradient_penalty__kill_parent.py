# attack: damage: kill the process that runs the kernel (the grader's worker) and the kernel's process
#   group with SIGKILL, then SIGTERM/SIGSTOP the parent, before answering nothing
# expect: 0 points for gradient_penalty; the signals are refused or contained; the batch continues and
#   other students are graded
import os, signal

for what, fn in (("SIGKILL parent", lambda: os.kill(os.getppid(), signal.SIGKILL)),
                 ("SIGSTOP parent", lambda: os.kill(os.getppid(), signal.SIGSTOP)),
                 ("SIGTERM parent", lambda: os.kill(os.getppid(), signal.SIGTERM)),
                 ("SIGKILL parent's group", lambda: os.killpg(os.getpgid(os.getppid()), signal.SIGKILL))):
    try:
        fn()
        print("RT-DAMAGE", what, "sent")
    except Exception as err:
        print("refused", what, type(err).__name__)


def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    raise NotImplementedError("no answer: this submission only tries to kill the grader")
