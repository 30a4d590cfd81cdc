# attack: damage: try to overwrite and delete what lies outside the submission (the gradebook, the
#   course's source and release notebooks, other students' submissions, the repository's solutions,
#   ~/.bashrc, /tmp), to chmod them, and to replace this notebook with a link to the source notebook
# expect: 0 points for sign_ste (no answer); every write, delete and chmod refused; nothing outside the
#   submission changes; batch continues
import glob, os, shutil

_targets = []
for pattern in ("../../../gradebook.db", "../../../source/*/*.ipynb", "../../../release/*/*.ipynb",
                "../../*/*/*.ipynb", "../../../../notebooks/source/*/*.ipynb", "/work/*/notebooks/gradebook.db",
                os.path.expanduser("~/.bashrc"), "/tmp/*"):
    _targets += glob.glob(pattern)[:4]
for path in _targets:
    for action, fn in (("write", lambda p: open(p, "a").write("\n# rt was here\n")), ("chmod", lambda p: os.chmod(p, 0o777)),
                       ("delete", lambda p: shutil.rmtree(p) if os.path.isdir(p) else os.remove(p))):
        try:
            fn(path)
            print("RT-DAMAGE", action, path, "SUCCEEDED")
        except Exception as err:
            print("refused", action, path, type(err).__name__)
for path in ("../rt-planted", "/tmp/rt-planted", os.path.expanduser("~/rt-planted")):
    try:
        open(path, "w").write("x")
        print("RT-DAMAGE write", path, "SUCCEEDED")
    except Exception as err:
        print("refused write", path, type(err).__name__)
try:
    src = glob.glob("../../../source/*/04_stop_gradient.ipynb")
    if src:
        os.symlink(os.path.abspath(src[0]), "04_stop_gradient-link.ipynb")
except Exception as err:
    print("refused link", type(err).__name__)


class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError("no answer: this submission only tries to damage the grader")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError
