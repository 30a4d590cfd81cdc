# attack: print the grader's environment (os.environ, /proc/<pid>/environ of the kernel, its parent
#   and pid 1), plain, reversed and base64 so line redaction cannot match, and try to read files
#   outside the submission (the course's source notebooks, the gradebook, shell history)
# expect: 0 points for walk (no answer); no CANVAS_API_TOKEN canary and no foreign file content in any
#   output file (feedback, autograded notebook, reports); batch continues
import base64, glob, os
env = dict(os.environ)
print("RTLEAK<<ENV", env, ">>")
print("RTLEAK<<ENVREV", repr(env)[::-1], ">>")
print("RTLEAK<<ENVB64", base64.b64encode(repr(env).encode()).decode(), ">>")
for pid in ("self", os.getppid(), 1):
    try:
        print("RTLEAK<<PROCENV", pid, open(f"/proc/{pid}/environ", "rb").read()[::-1], ">>")
    except Exception as err:
        print("PROCENV", pid, type(err).__name__)
for pattern in ("../../../source/*/*.ipynb", "../../../*.db", "../../../../notebooks/source/*/*.ipynb",
                "/work/*/notebooks/source/*/*.ipynb", os.path.expanduser("~/.bash_history"), "/root/*", "/tmp/*/*"):
    for path in glob.glob(pattern)[:3]:
        try:
            print("RTLEAK<<FILE", path, open(path, errors="replace").read()[:300][::-1], ">>")
        except Exception as err:
            print("FILE", path, type(err).__name__)


def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    raise NotImplementedError("no answer: this submission only tries to read what it should not")
