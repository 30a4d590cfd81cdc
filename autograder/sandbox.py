"""What a student's code runs inside: the grading kernel's launcher and the process-tree helpers.

The kernel spec the workers use runs ``python -P -m autograder.sandbox kernel -f CONNECTION_FILE``
(and the verifier runs ``python -P -m autograder.sandbox verify``; ``-P`` keeps the notebook's
folder off ``sys.path`` until the student's code runs). Before any student code runs,
this process confines itself, following the policy the worker put in ``$AUTOGRADER_SANDBOX``:

- resource limits (``setrlimit``, inherited by every process the student starts): address
  space (the memory cap), file size, no core dumps, and for non-root graders a process count;
- Landlock (Linux 5.13+, no privileges needed; silently absent elsewhere): the kernel may
  write only in its notebook folder and its temporary folder, may not read the course
  directory or the other jobs' scratch folders, and (Landlock ABI 6+) may not signal
  processes outside its sandbox, the grader included;
- an audit hook (``sys.addaudithook``) that reports writes outside the folder, deletions,
  signals, new processes and database connections to an events file opened beforehand,
  so the report can say what a submission tried.

Python has no in-process sandbox, so none of this stops a determined attacker who can escape
Python (ctypes); Landlock and the limits are enforced by the OS kernel and hold regardless.
Where Landlock is missing the worker still runs every submission in its own scratch copy and
the grader checks its gradebook and inputs afterwards (see ``autograder/README.md``).
"""
import ctypes
import errno
import json
import os
import resource
import signal
import sys

POLICY_ENV = "AUTOGRADER_SANDBOX"

# ---- Landlock (include/uapi/linux/landlock.h); the syscall numbers are the same on every architecture

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_READ_FILE, _WRITE_FILE, _READ_DIR = 1 << 2, 1 << 1, 1 << 3
_WRITE_DIR = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_REFER, _TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi():
    """The Landlock ABI version this OS kernel offers (0: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def apply_landlock(read, write, files=()):
    """Restrict this process (and every process it starts) to reading beneath ``read``, reading
    and writing beneath ``write``, and reading and writing the files in ``files``
    (``/dev/null``). Returns the ABI used, 0 if Landlock is unavailable."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    libc = _libc()
    write_access = _WRITE_FILE | _WRITE_DIR | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    read_access = _READ_FILE | _READ_DIR
    attr = _RulesetAttr(read_access | write_access, 0,
                        (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 8
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    file_rights = _READ_FILE | _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    try:
        for paths, access in ((read, read_access), (write, read_access | write_access), (files, file_rights)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # vanished since the worker listed it
                try:
                    allowed = access
                    if not os.path.isdir(path):
                        allowed &= file_rights
                    rule = _PathBeneath(allowed, fd)
                    if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
                finally:
                    os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def readable_paths(deny, extra=()):
    """Paths that together cover the whole file system except the ``deny`` folders: Landlock
    only allows, so "everything but the course" becomes the siblings along the way down to
    each denied folder. Symbolic links that lead into (or above) a denied folder are left out.
    ``extra`` paths (the job's own folders) are added even if they lie inside a denied one."""
    deny = [os.path.realpath(d) for d in deny]

    def related(a, b):
        return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")

    allowed = []

    def visit(path):
        if path in deny:
            return
        if not any(d.startswith(path.rstrip("/") + "/") for d in deny):
            allowed.append(path)
            return
        try:
            names = os.listdir(path)
        except OSError:
            return
        for name in names:
            child = os.path.join(path, name)
            if os.path.islink(child):
                if not any(related(os.path.realpath(child), d) for d in deny):
                    allowed.append(child)
            elif os.path.isdir(child):
                visit(child)
            else:
                allowed.append(child)

    visit("/")
    return allowed + [os.path.realpath(p) for p in extra]


# ---- resource limits ----------------------------------------------------------------------------------------------

def _user_tasks():
    """Processes and threads of this user right now (what RLIMIT_NPROC counts)."""
    uid, count = os.getuid(), 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return count


def apply_limits(policy):
    """setrlimit for this process and its children: memory, file size, cores, process count."""
    memory = policy.get("memory_bytes")
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    file_bytes = policy.get("file_bytes")
    if file_bytes:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    extra = policy.get("processes")
    if extra and os.getuid() != 0 and os.path.isdir("/proc"):  # root is exempt from RLIMIT_NPROC
        limit = _user_tasks() + extra
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


# ---- the audit hook -----------------------------------------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_PATH_EVENTS = {"os.remove": 0, "os.rmdir": 0, "os.rename": 1, "os.truncate": 0, "shutil.rmtree": 0,
                "os.chmod": 0, "os.chown": 0, "os.link": 1, "os.symlink": 1, "os.mkdir": 0, "os.utime": 0}
SHADOWED = {"autograder", "chibigrad", "numpy", "IPython", "ipykernel", "builtins", "sitecustomize", "usercustomize"}
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system",
                   "subprocess.Popen"}


def install_audit_hook(events_fd, write_roots, limit=400):
    """Report (as JSON lines on ``events_fd``) what the student's code tries that the grader
    wants in its report. An audit hook cannot be removed from Python; it only observes.
    Returns ``arm()``: events count from then on (not the kernel's own start-up)."""
    roots = tuple(os.path.realpath(r).rstrip("/") + "/" for r in write_roots) + ("/dev/",)
    written, own, armed, home = [0], os.getpid(), [False], os.getcwd()

    def emit(kind, detail):
        if written[0] < limit:
            written[0] += 1
            os.write(events_fd, (json.dumps([kind, detail], default=str) + "\n").encode())

    def outside(path):
        if isinstance(path, int):
            return None
        path = os.path.abspath(os.fsdecode(path))
        return None if (path + "/").startswith(roots) else path

    def shadows(path):
        """A file that would shadow the grader's packages when imported from the notebook's folder."""
        if isinstance(path, int):
            return False
        rel = os.path.relpath(os.path.abspath(os.fsdecode(path)), home)
        return rel.split(os.sep)[0].removesuffix(".py") in SHADOWED

    def hook(event, args):
        if not armed[0]:
            return
        try:
            if event == "open":
                path, mode, flags = (tuple(args) + (None, None, None))[:3]
                writes = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
                    isinstance(mode, str) and any(c in mode for c in "wax+"))
                if writes and (where := outside(path)):
                    emit("write-outside", where)
                elif writes and shadows(path):
                    emit("shadow", os.fsdecode(path))
            elif event in _PATH_EVENTS:
                where = outside(args[0]) or (outside(args[1]) if _PATH_EVENTS[event] else None)
                if where:
                    emit("write-outside", f"{event} {where}")
            elif event in ("os.kill", "os.killpg"):
                if args[0] not in (own, 0) and os.getpid() == own:
                    emit("signal", f"{event}({args[0]}, {args[1]})")
            elif event in _PROCESS_EVENTS:
                emit("process", event)
            elif event == "sqlite3.connect":
                emit("database", os.fsdecode(args[0]) if not isinstance(args[0], int) else str(args[0]))
        except Exception:  # an audit hook that raises would break the student's call
            pass

    sys.addaudithook(hook)
    return lambda: armed.__setitem__(0, True)


# ---- the launcher -------------------------------------------------------------------------------------------------

def confine(policy):
    """Everything above, in order, for this process. Returns the audit hook's ``arm()``."""
    log = os.open(policy["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    events = os.open(policy["events"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    apply_limits(policy)
    if policy.get("landlock", True):
        apply_landlock(policy["read"], policy["write"], ["/dev/null"])
    return install_audit_hook(events, policy["write"])


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    mode = argv.pop(0) if argv else ""
    policy = json.loads(os.environ[POLICY_ENV])
    arm = confine(policy)
    # Started with `python -P`: the notebook's folder is not on sys.path while the grader's code
    # loads (a submission may carry its own `autograder/`); IPython puts '' back for the student.
    if mode == "kernel":
        from ipykernel.kernelapp import IPKernelApp
        app = IPKernelApp.instance()
        app.initialize(argv)
        arm()
        app.start()
    elif mode == "verify":
        from . import verify
        verify.main(arm)
    else:
        sys.exit(f"usage: python -m autograder.sandbox kernel|verify ...; got {mode!r}")


# ---- process trees (used by the worker, outside the sandbox) -----------------------------------------------------

def set_child_subreaper():
    """Make orphaned descendants (a daemon that double-forked away from the kernel) this
    process's children, so :func:`kill_descendants` still finds them. Linux only."""
    if sys.platform.startswith("linux"):
        _libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _process_table():
    """``{pid: (ppid, state, rss pages)}`` from /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        table[int(name)] = (int(fields[1]), fields[0].decode(), int(fields[21]))
    return table


def descendants(root=None, table=None):
    """Live (not zombie) descendants of ``root`` (default: this process): ``{pid: rss bytes}``."""
    root = os.getpid() if root is None else root
    table = _process_table() if table is None else table
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack, page = {}, [root], os.sysconf("SC_PAGE_SIZE")
    while stack:
        for child in children.get(stack.pop(), ()):
            if table[child][1] != "Z":
                found[child] = table[child][2] * page
            stack.append(child)
    return found


def kill_descendants(root=None, keep=()):
    """SIGKILL every descendant of ``root`` except ``keep``, again until none is left (a fork
    loop keeps making new ones), then reap the ones that were re-parented to this process.
    Returns how many were killed."""
    killed = 0
    for _ in range(50):
        victims = [pid for pid in descendants(root) if pid not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def reap_orphans(protect=()):
    """``waitpid`` the zombies re-parented to this (subreaper) process, but not ``protect``
    (children someone else still waits for)."""
    for pid, (ppid, state, _) in _process_table().items():
        if ppid == os.getpid() and state == "Z" and pid not in protect:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            except OSError as err:
                if err.errno != errno.ECHILD:
                    raise


if __name__ == "__main__":
    main()
