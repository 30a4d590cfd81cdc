"""What a student's code runs inside: the grading kernel's launcher and the process-tree helpers.

The kernel spec the workers use runs ``python -P -m autograder.grading.sandbox kernel -f CONNECTION_FILE``
(``-P`` keeps the notebook's folder off ``sys.path`` until the student's code runs). Before any student code
runs, this process confines itself, following the policy the worker put in ``$AUTOGRADER_SANDBOX``:

- resource limits (``setrlimit``, inherited by every process the student starts): address
  space (the memory cap), file size, no core dumps, and for non-root graders a process count;
- an allocation watcher (Linux x86_64 and aarch64): a child forked before anything below, so
  outside the student's reach, is told of every large request (seccomp user notification) and
  reports the ones the cap refuses, caught or not;
- Landlock (Linux 5.13+, no privileges needed; silently absent elsewhere): the kernel may
  read only the system's folders, the Python it runs on, the worker's copy of chibigrad and
  the runner and its own folders, may write only in its notebook
  folder and its temporary folder, may make no device node, and (Landlock ABI 6+) may not
  signal processes outside its sandbox, the grader included;
- no capabilities (a kernel started by root stays uid 0 but cannot override permissions, raise
  its limits, administer the network or the machine);
- seccomp (Linux x86_64 and aarch64), just before the student's first cell: chmod, chown,
  extended attributes (ACLs), device nodes, changing the memory cap and the administrator's
  calls (reboot, modules, mounts, the clock) fail with EPERM, root or not: Landlock does not
  cover permission bits;
- an audit hook (``sys.addaudithook``) that reports writes, permission changes and reads of
  the course outside the folder, deletions, signals, new processes and database connections
  to an events file opened beforehand, so the report can say what a submission tried.

Python has no in-process sandbox, so none of this stops a determined attacker who can escape
Python (ctypes) from fooling the tests in its own kernel; Landlock, seccomp and the limits are
enforced by the OS kernel and hold regardless. Where they are missing the worker still runs
every submission in its own scratch copy and the grader checks its gradebook and inputs
afterwards (see ``autograder/README.md``).
"""
import ctypes
import errno
import fcntl
import json
import mmap
import os
import re
import resource
import select
import signal
import socket
import struct
import sys

POLICY_ENV = "AUTOGRADER_SANDBOX"
# the environment a student process starts from: these names and prefixes of the grader's, nothing else
# (an instructor's tokens, the grader's paths and settings never reach student code or its output)
ENV_NAMES = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
             "PYTHONHASHSEED", "IPYTHONDIR", "MPLCONFIGDIR", "XDG_CACHE_HOME", "JUPYTER_RUNTIME_DIR", POLICY_ENV,
             "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "SYSTEMROOT")
ENV_PREFIXES = ("LC_", "CHIBIGRAD_", "JPY_", "CUDA_", "NVIDIA_")


def student_environment(environ=None, **overrides):
    """The allowlisted part of ``environ`` (default: this process's), with ``overrides``: what a process
    running student code gets. Everything else (``CANVAS_API_TOKEN``, cloud keys, the grader's settings)
    stays behind."""
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if k in ENV_NAMES or k.startswith(ENV_PREFIXES)}
    env.update(overrides)
    return env

# ---- Landlock (include/uapi/linux/landlock.h); the syscall numbers are the same on every architecture

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_READ_FILE, _WRITE_FILE, _READ_DIR = 1 << 2, 1 << 1, 1 << 3
_WRITE_DIR = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_MAKE_DEVICE = (1 << 6) | (1 << 11)  # MAKE_CHAR, MAKE_BLOCK
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


def _no_new_privs(libc):
    """Give up gaining privileges by running a program (setuid): Landlock and seccomp filters require it."""
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def landlock_abi():
    """The Landlock ABI version this OS kernel offers (0: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def apply_landlock(read, write, files=(), listable=()):
    """Restrict this process (and every process it starts) to reading beneath ``read``, reading
    and writing beneath ``write``, reading and writing the files in ``files`` (``/dev/null``),
    and listing (not reading) the folders in ``listable``. Returns the ABI used, 0 if Landlock
    is unavailable."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    libc = _libc()
    # handled but never granted: making device nodes (a root kernel could make one for the disk and read it raw)
    write_access = ((_WRITE_FILE | _WRITE_DIR) & ~_MAKE_DEVICE) | (_REFER if abi >= 2 else 0) | (
        _TRUNCATE if abi >= 3 else 0)
    read_access = _READ_FILE | _READ_DIR
    attr = _RulesetAttr(read_access | write_access | _MAKE_DEVICE, 0,
                        (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 8
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    file_rights = _READ_FILE | _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    try:
        for paths, access in ((read, read_access), (write, read_access | write_access), (files, file_rights),
                              (listable, _READ_DIR)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # vanished since the worker listed it
                try:
                    allowed = access
                    if not os.path.isdir(path):
                        allowed &= file_rights
                    if not allowed:
                        continue
                    rule = _PathBeneath(allowed, fd)
                    if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                        raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
                finally:
                    os.close(fd)
        _no_new_privs(libc)
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _beneath(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def rule_paths(allow, deny):
    """Paths whose Landlock read rules give exactly: everything beneath an ``allow`` path except
    what is beneath a ``deny`` path, the deeper of two nested entries winning (a job's folder
    inside the denied scratch folder is readable). Landlock only adds rights down a hierarchy, so a rule never goes on a
    folder above a denied one: such a folder becomes rules for its children, recursively.
    A symbolic link is kept only if everything it leads to is allowed."""
    marks = {}
    for path in allow:
        marks[os.path.realpath(path)] = True
    for path in deny:
        marks[os.path.realpath(path)] = False  # deny wins over allow on the same folder
    denied = [m for m, ok in marks.items() if not ok]

    def state_of(path):
        found = [m for m in marks if _beneath(path, m)]
        return marks[max(found, key=len)] if found else False

    out = []

    def visit(path, state):
        state = marks.get(path, state)
        if not any(_beneath(m, path) and m != path for m in marks):
            if state:
                out.append(path)
            return
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for name in names:
            child = os.path.join(path, name)
            if os.path.islink(child):
                target = os.path.realpath(child)
                if marks.get(child, state) and state_of(target) and not any(_beneath(d, target) for d in denied):
                    out.append(child)
            elif os.path.isdir(child):
                visit(child, state)
            elif marks.get(child, state):
                out.append(child)

    visit("/", False)
    return out


def readable_paths(deny, extra=()):
    """Rules for "the whole file system except the ``deny`` folders", plus the ``extra`` paths
    (the job's own folders) even where they lie inside a denied one."""
    return rule_paths(["/", *extra], deny)


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
                "os.link": 1, "os.symlink": 1, "os.mkdir": 0, "os.utime": 0}
_MODE_EVENTS = {"os.chmod", "os.chown", "os.chflags", "os.setxattr", "os.removexattr"}
_LIST_EVENTS = {"os.listdir", "os.scandir"}
SHADOWED = {"autograder", "chibigrad", "numpy", "IPython", "ipykernel", "builtins", "sitecustomize", "usercustomize"}
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system",
                   "subprocess.Popen"}


def _traceback_lines(frame):
    """Is this open IPython counting the lines of a file for a traceback (of a failing check,
    say)? Landlock refuses it; it is not the student's attempt."""
    return frame is not None and frame.f_code.co_name == "count_lines_in_py_file" and \
        frame.f_code.co_filename.endswith(os.path.join("IPython", "core", "tbtools.py"))


def install_audit_hook(events_fd, write_roots, limit=400, secret_roots=(), public_roots=(), grader_modules=None):
    """Report (as JSON lines on ``events_fd``) what the student's code tries that the grader
    wants in its report: writes, deletions and permission or owner changes outside its
    folders, reads and listings of ``secret_roots`` (the course, the solutions;
    except inside a deeper ``public_roots`` folder, such as the Python it runs on),
    signals, processes, databases, changes of the memory cap, C functions called through ctypes (whose calls it
    cannot see). An audit hook cannot be removed
    from Python; it only observes, before the call: whether the call then succeeded is for the OS
    to decide (the worker reports what the sandbox enforced). ``grader_modules`` (a judged
    assignment's kernel): the ``autograder`` modules it may import; importing any other is
    reported. Returns ``arm()``: events count from then on (not the kernel's own start-up)."""
    roots = tuple(os.path.realpath(r).rstrip("/") + "/" for r in write_roots) + ("/dev/",)
    marks = {os.path.realpath(r): False for r in public_roots}
    marks.update({os.path.realpath(r): True for r in secret_roots})
    written, own, armed, home, native = [0], os.getpid(), [False], os.getcwd(), set()

    def emit(kind, detail):
        if written[0] < limit:
            written[0] += 1
            os.write(events_fd, (json.dumps([kind, detail], default=str) + "\n").encode())

    def outside(path):
        if isinstance(path, int):
            return None
        path = os.path.abspath(os.fsdecode(path))
        return None if (path + "/").startswith(roots) else path

    def secret(path):
        if isinstance(path, int) or path is None:
            return None
        path = os.path.realpath(os.fsdecode(path))
        found = [m for m in marks if _beneath(path, m)]
        return path if found and marks[max(found, key=len)] and not (path + "/").startswith(roots) else None

    def shadows(path):
        """A file that would shadow the grader's packages when imported from the notebook's folder."""
        if isinstance(path, int):
            return False
        rel = os.path.relpath(os.path.abspath(os.fsdecode(path)), home)
        first = rel.split(os.sep)[0]
        return first.removesuffix(".py") in SHADOWED or (first == rel and rel.endswith(".pth"))

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
                elif not writes and (where := secret(path)) and not _traceback_lines(sys._getframe(1)):
                    emit("read-secret", where)
            elif event in _LIST_EVENTS:
                if where := secret(args[0] if args[0] is not None else "."):
                    emit("read-secret", where)
            elif event in _MODE_EVENTS:
                if where := outside(args[0]):
                    mode = f" {oct(args[1])}" if event == "os.chmod" and isinstance(args[1], int) else ""
                    emit("mode-outside", f"{event}{mode} on {where}")
            elif event == "os.symlink" and not outside(args[1]) and (where := outside(args[0])):
                emit("link-outside", where)  # a link in its folder: harmless to it, not to whoever follows it
            elif event in _PATH_EVENTS:
                where = outside(args[0]) or (outside(args[1]) if _PATH_EVENTS[event] else None)
                if where:
                    emit("write-outside", f"{event} {where}")
            elif event in ("os.kill", "os.killpg"):
                if args[0] not in (own, 0) and os.getpid() == own:
                    emit("signal", f"{event}({args[0]}, {args[1]})")
            elif event in _PROCESS_EVENTS:
                emit("process", event)
            elif event == "import":
                outside_allowance(str(args[0]))
            elif event in ("resource.setrlimit", "resource.prlimit"):
                which, limits = args[-2:]
                if which == resource.RLIMIT_AS and limits is not None:
                    emit("limit", f"{event}(RLIMIT_AS, {limits})")
            elif event == "ctypes.dlsym" and len(native) < 5 and isinstance(args[-1], str) and args[-1] not in native:
                native.add(args[-1])  # C called directly: what it tries, the sandbox refuses unreported
                emit("native", args[-1])
            elif event == "sqlite3.connect":
                emit("database", os.fsdecode(args[0]) if not isinstance(args[0], int) else str(args[0]))
        except Exception:  # an audit hook that raises would break the student's call
            pass

    def outside_allowance(name):
        if armed[0] and grader_modules is not None and name.split(".")[0] == "autograder" and name not in grader_modules:
            emit("import", name)

    class GraderImports:
        """``importlib.import_module`` raises no audit event for a module it cannot find: a finder sees it."""
        @staticmethod
        def find_spec(name, path=None, target=None):
            try:
                outside_allowance(name)
            except Exception:  # as in the hook: never break the student's import
                pass

    sys.addaudithook(hook)
    sys.meta_path.insert(0, GraderImports)
    return lambda: armed.__setitem__(0, True)


# ---- seccomp: what Landlock does not cover -------------------------------------------------------------------------

# syscall numbers (x86_64, aarch64): permission bits, owners and ACLs (Landlock does not mediate them; a
# kernel that owns the grader's files, or is root, could otherwise change them), the administrator's
# calls a root kernel could make (reboot, modules, mounts, the clock, raw file handles, BPF), and seccomp
# itself (a later filter of the student's own would take the allocation watcher's notifications), and io_setup (its
# ring is mapped without a call the watcher is told of)
_SECCOMP_DENY = {
    "x86_64": {"chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
               "fchmodat": 268, "fchmodat2": 452, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
               "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "setxattrat": 463,
               "removexattrat": 466, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320,
               "init_module": 175, "finit_module": 313, "delete_module": 176, "mount": 165, "umount2": 166,
               "pivot_root": 155, "swapon": 167, "swapoff": 168, "settimeofday": 164, "clock_settime": 227,
               "adjtimex": 159, "clock_adjtime": 305, "sethostname": 170, "setdomainname": 171, "acct": 163,
               "open_by_handle_at": 304, "bpf": 321, "mknod": 133, "mknodat": 259, "seccomp": 317,
               "io_setup": 206},
    "aarch64": {"fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "fchmodat2": 452, "setxattr": 5,
                "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
                "setxattrat": 463, "removexattrat": 466, "reboot": 142, "kexec_load": 104,
                "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
                "mount": 40, "umount2": 39, "pivot_root": 41, "swapon": 224, "swapoff": 225,
                "settimeofday": 170, "clock_settime": 112, "adjtimex": 171, "clock_adjtime": 266,
                "sethostname": 161, "setdomainname": 162, "acct": 89, "open_by_handle_at": 265, "bpf": 280,
                "mknodat": 33, "seccomp": 277, "io_setup": 0},
}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
# BPF_LD|BPF_W|BPF_ABS, BPF_JMP|(BPF_JEQ, BPF_JGT, BPF_JGE)|BPF_K, BPF_RET|BPF_K
_LD, _JEQ, _JGT, _JGE, _RET = 0x20, 0x15, 0x25, 0x35, 0x06
# setrlimit(resource, limit), prlimit64(pid, resource, new limit, old limit)
_SETS_LIMITS = {"x86_64": (160, 302), "aarch64": (164, 261)}
_PRCTL = {"x86_64": 157, "aarch64": 167}
_ARCH_PRCTL, _ARCH_MAP_VDSO = 158, (0x2001, 0x2003)  # x86_64: arch_prctl(ARCH_MAP_VDSO_X32 .. _64) maps a vDSO
_RLIMIT_AS = 9


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


# ---- capabilities -------------------------------------------------------------------------------------------------

_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities():
    """Give up every capability, for good (the bounding set too, so running a program cannot
    bring them back). A kernel started by root stays uid 0 and can still use what root owns,
    but not override permissions, raise its limits, administer the network, load modules or
    reboot. Linux only; returns whether it was done."""
    if not sys.platform.startswith("linux"):
        return False
    libc = _libc()
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: a grader that has none
    header, data = _CapHeader(_CAP_VERSION_3, 0), (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    return True


def seccomp_supported():
    import platform
    return sys.platform.startswith("linux") and platform.machine() in _SECCOMP_DENY


def apply_seccomp():
    """Make the calls in ``_SECCOMP_DENY`` fail with EPERM for this process and its children
    (seccomp-bpf; a filter cannot be removed), and so do changing the address-space limit (the
    allocation watcher and the judge compare with the one the grader set) and adding a filter. A
    call from another architecture's ABI (x32, 32-bit) kills the process, so the numbers cannot be
    dodged. Returns the names denied, or ``[]`` where seccomp or the architecture is not supported."""
    import platform
    machine = platform.machine()
    if not sys.platform.startswith("linux") or machine not in _SECCOMP_DENY:
        return []
    deny = _SECCOMP_DENY[machine]
    setrlimit, prlimit64 = _SETS_LIMITS[machine]
    prctl = _PRCTL[machine]
    program = [(_LD, None, None, 4), (_JEQ, None, "kill", _AUDIT_ARCH[machine]), (_LD, None, None, 0)]
    if machine == "x86_64":  # x32 calls carry bit 30 under the same arch value
        program += [(_JGE, "kill", None, 0x40000000)]
    # a changed memory cap: setrlimit(RLIMIT_AS, ...), prlimit64(pid, RLIMIT_AS, new limit, ...) but to read it
    program += [(_JEQ, None, "prlimit64", setrlimit), (_LD, None, None, _arg(0)), (_JEQ, "deny", "allow", _RLIMIT_AS),
                "prlimit64", (_JEQ, None, "prctl", prlimit64), (_LD, None, None, _arg(1)),
                (_JEQ, None, "allow", _RLIMIT_AS), (_LD, None, None, _arg(2)), (_JEQ, None, "deny", 0),
                (_LD, None, None, _arg(2) + 4), (_JEQ, "allow", "deny", 0)]  # the new limit's pointer: NULL
    # a filter of the student's own: prctl(PR_SET_SECCOMP, ...) (the seccomp call itself is listed)
    program += ["prctl", (_JEQ, None, "arch_prctl", prctl), (_LD, None, None, _arg(0)),
                (_JEQ, "deny", "allow", _PR_SET_SECCOMP), "arch_prctl"]
    if machine == "x86_64":  # a vDSO mapped without a call the allocation watcher is told of
        program += [(_JEQ, None, "listed", _ARCH_PRCTL), (_LD, None, None, _arg(0)),
                    (_JGE, None, "allow", _ARCH_MAP_VDSO[0]), (_JGT, "allow", "deny", _ARCH_MAP_VDSO[1])]
    program += ["listed"]
    program += [(_JEQ, "deny", None, number) for number in sorted(set(deny.values()))]
    program += ["allow", (_RET, None, None, _RET_ALLOW), "deny", (_RET, None, None, _RET_ERRNO | errno.EPERM),
                "kill", (_RET, None, None, _RET_KILL_PROCESS)]
    prog = _program(program)
    libc = _libc()
    _no_new_privs(libc)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return sorted(deny) + ["setrlimit(RLIMIT_AS)", "prctl(PR_SET_SECCOMP)"] + \
        ["arch_prctl(ARCH_MAP_VDSO_*)"] * (machine == "x86_64")


def _arg(index):
    """The offset of ``seccomp_data.args[index]``'s low word (little-endian: the high word is 4 bytes on)."""
    return 16 + 8 * index


def _program(program):
    """A ``sock_fprog`` from ``program``: instructions ``(code, jump if true, jump if false, k)`` whose jumps
    name a label (a string in the list; forward only) or are None (on to the next instruction)."""
    labels, code = {}, []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)
    jump = lambda target, at: 0 if target is None else labels[target] - at - 1  # noqa: E731
    filters = (_SockFilter * len(code))(*[_SockFilter(op, jump(jt, at), jump(jf, at), k)
                                         for at, (op, jt, jf, k) in enumerate(code)])
    return _SockFprog(len(code), filters)  # which keeps ``filters`` alive (ctypes' _objects)


# ---- refused allocations: seen from a process the student's code cannot reach ------------------------------------

CAP_MARGIN = 1 / 8  # without the watcher, refusals of allocations smaller than this share of the cap show in the peak
# the stack limit in the sandbox (or the grader's, if lower), pinned: a stack grows without a call to watch
STACK_BYTES = 8 << 20
WATCHER_NAME, _PR_SET_NAME = "cg-allocations", 15  # the watcher's process name (ps, /proc/<pid>/comm)
_PR_SET_PTRACER = 0x59616D61  # Yama: let the watcher read which call a thread is in (/proc/<tid>/syscall)
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
# the calls that grow the address space, {number: name}: mmap(addr, length, prot, flags, ...), mremap(old_address,
# old_length, new_length, flags, ...), brk(end), shmat(id, ...)
_GROWS = {"x86_64": {9: "mmap", 25: "mremap", 12: "brk", 30: "shmat"},
          "aarch64": {222: "mmap", 216: "mremap", 214: "brk", 196: "shmat"}}
# running a program: the OS kernel maps its image and a fresh stack, which could grow unwatched; refused
_RUNS = {"x86_64": {59: "execve", 322: "execveat"}, "aarch64": {221: "execve", 281: "execveat"}}
# the calls the seal on the stack refuses, besides mmap and mremap: mprotect(addr, len, ...), munmap(addr, len),
# pkey_mprotect(addr, len, ...); told of those that start in the sealed span or are long enough to reach it (the
# mappings below a stack lie 128 MiB or more below it)
_UNSEALS = {"x86_64": {10: "mprotect", 11: "munmap", 329: "pkey_mprotect"},
            "aarch64": {226: "mprotect", 215: "munmap", 288: "pkey_mprotect"}}
_REACHING = 64 << 20
_SET_MODE_FILTER, _FLAG_NEW_LISTENER, _RET_USER_NOTIF = 1, 1 << 3, 0x7FC00000
_NOTIF_RECV, _NOTIF_SEND, _NOTIF_CONTINUE = 0xC0502100, 0xC0182101, 1  # SECCOMP_IOCTL_NOTIF_RECV, _SEND
_NOTIF = struct.Struct("=QIIiIQ6Q")  # struct seccomp_notif: id, pid, flags, then seccomp_data: nr, arch, ip, args
_NOTIF_RESP = struct.Struct("=QqiI")  # struct seccomp_notif_resp: id, val, error, flags
_MREMAP_DONTUNMAP, _MAP_FIXED, _MAP_GROWSDOWN, _MAP_FIXED_NOREPLACE = 4, 0x10, 0x100, 0x100000
_SYS_MSEAL = 462  # x86_64 and aarch64
_SYS_KCMP, _KCMP_VM = {"x86_64": 312, "aarch64": 272}, 1


def _notify_filter(machine, sealed=None):
    """A seccomp program that sends every call that can grow the address space (``_GROWS``) or run a program
    (``_RUNS``) to the listener, and those of ``_UNSEALS`` that may touch the ``sealed`` span; it allows all else
    (the main filter, ``apply_seccomp``, decides the rest)."""
    program = [(_LD, None, None, 4), (_JEQ, None, "allow", _AUDIT_ARCH[machine]), (_LD, None, None, 0)]
    program += [(_JEQ, "notify", None, number) for number in sorted({**_GROWS[machine], **_RUNS[machine]})]
    if sealed:
        program += [(_JEQ, "unseals", None, number) for number in sorted(_UNSEALS[machine])]
        program += [(_RET, None, None, _RET_ALLOW), "unseals", *_at_least(0, sealed[0], "notify", "length"),
                    "length", *_at_least(1, _REACHING, "notify", "allow")]
    return _program(program + ["allow", (_RET, None, None, _RET_ALLOW), "notify", (_RET, None, None, _RET_USER_NOTIF)])


def _at_least(index, least, yes, no):
    """Instructions that jump to ``yes`` if the 64-bit unsigned ``args[index]`` is ``least`` or more, else to ``no``:
    the high words compared first, then the low ones."""
    return [(_LD, None, None, _arg(index) + 4), (_JGT, yes, None, least >> 32), (_JEQ, None, no, least >> 32),
            (_LD, None, None, _arg(index)), (_JGE, yes, no, least & 0xFFFFFFFF)]


def watch_allocations(events_fd, cap, writable=()):
    """Fork the watcher of this process's allocations (:func:`_watch`) and return its pid; None where seccomp
    cannot notify another process. Call it before Landlock: the watcher is then outside Landlock's domain, so
    code confined later can neither signal (ABI 6+) nor trace it. The cap can refuse only calls the watcher is
    told of, and stack growth; so the stack limit is pinned first and the main thread's stack sealed at it."""
    import platform
    machine, release = platform.machine(), tuple(int(n) for n in re.findall(r"\d+", platform.release())[:2])
    if not sys.platform.startswith("linux") or machine not in _GROWS or release < (5, 5):  # 5.5: letting a call go on
        return None
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    stack = soft if 0 < soft < STACK_BYTES else STACK_BYTES
    resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
    sealed = _seal_stack(stack)
    ours, theirs = socket.socketpair()
    parent = os.getpid()
    pid = os.fork()  # before the filter: the watcher's own allocations must not wait for itself
    if pid == 0:
        try:
            ours.close()
            _, listener, _, _ = socket.recv_fds(theirs, 1, 1)
            theirs.close()
            if listener:
                _watch(listener[0], events_fd, parent, {**_GROWS[machine], **_RUNS[machine], **_UNSEALS[machine]},
                       cap, stack, sealed, tuple(os.path.realpath(w) for w in writable))
        finally:
            os._exit(0)
    theirs.close()
    libc = _libc()
    _no_new_privs(libc)
    listener = libc.syscall(_SYS_SECCOMP[machine], _SET_MODE_FILTER, _FLAG_NEW_LISTENER,
                            ctypes.byref(_notify_filter(machine, sealed)))
    if listener >= 0:
        socket.send_fds(ours, [b"\0"], [listener])
        os.close(listener)
    ours.close()  # without a listener the watcher reads nothing and ends
    libc.prctl(_PR_SET_PTRACER, pid, 0, 0, 0)  # EINVAL without Yama: nothing to allow then
    return pid if listener >= 0 else None


def arm_watcher():
    """From now on the allocation watcher refuses to run programs: ``execve(NULL)``, which it is told of (and
    which fails anyway, without it)."""
    import platform
    execve = {name: number for number, name in _RUNS.get(platform.machine(), {}).items()}.get("execve")
    if execve:
        _libc().syscall(execve, None, None, None)


def _seal_stack(limit):
    """Map the main thread's stack down to ``limit`` now (a byte written at its lowest address: a stack grows on a
    page fault, not a call), put a read-only page just below it and seal both (``mseal``, Linux 6.10+): a stack
    grows only where no accessible mapping lies within the kernel's guard gap, so it cannot grow again, split or
    not, in this process or a forked child. Left as it is where that would reach another mapping; unsealed
    (``ENOSYS``) on an older kernel. Returns the sealed span ``(start, end)``, None if none."""
    spans = _maps("self")
    low, high = next(((low, high) for low, high, name in spans if name == "[stack]"), (0, 0))
    below, page = max((h for _, h, _ in spans if h <= low), default=0), os.sysconf("SC_PAGE_SIZE")
    if not high or below + (1 << 20) > high - limit:  # no stack found; a mapping within the guard gap (1 MiB)
        return None
    if high - limit < low:
        ctypes.memset(high - limit, 0, 1)
    libc = _libc()
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    guard = libc.mmap(high - limit - page, page, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS |
                      _MAP_FIXED_NOREPLACE, -1, 0)
    if guard == high - limit - page and \
            libc.syscall(_SYS_MSEAL, ctypes.c_void_p(guard), ctypes.c_size_t(page + limit), ctypes.c_ulong(0)) == 0:
        return guard, high
    return None


def _watch(listener, events_fd, parent, calls, cap, stack, sealed, writable, limit=40):
    """The watcher: let each notified call (``calls``: {number: name}) go on, but refuse to run a program (once
    armed), to map code the notebook could have written (``writable``: its folders) or to make a
    ``MAP_GROWSDOWN`` mapping. First write an event for each call the OS kernel will refuse (``total_vm +
    growth > RLIMIT_AS``), or may: counting what other threads' calls, let go on but maybe not yet mapped, add,
    and what the caller's stack may still grow; one for each refusal of its own, and for each call the seal on
    the stack (``sealed``) refuses. It ends with ``parent`` (a death signal would not reach it across Landlock's
    scope)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupting a cell signals the kernel's whole process group
    _libc().prctl(_PR_SET_NAME, WATCHER_NAME.encode(), 0, 0, 0)
    try:
        ready = select.poll()
        ready.register(os.pidfd_open(parent), select.POLLIN)
        ready.register(listener, select.POLLIN)
    except OSError:  # the parent is gone already
        return
    written, last, going, armed = 0, None, {}, False  # going: {thread: (call number, growth)}: calls let go on
    while True:
        if any(fd != listener for fd, _ in ready.poll()):
            return
        request = bytearray(_NOTIF.size)
        try:
            fcntl.ioctl(listener, _NOTIF_RECV, request)
        except OSError as err:
            if err.errno in (errno.ENOENT, errno.EINTR):  # the caller was gone before it was read
                continue
            raise
        ident, pid, _, number, _, _, *args = _NOTIF.unpack(request)
        call = calls[number]
        if call in ("execve", "execveat"):  # the kernel's own start-up may run programs (debugpy: uname -p)
            arming = call == "execve" and not args[0]  # execve(NULL): arm_watcher(), just before student code
            armed = armed or arming
            refuse, event = (errno.EPERM, None if arming else ("program-refused", call)) if armed else (0, None)
        else:
            try:
                refuse, event = _judge_call(call, number, args, pid, cap, stack, going, sealed, writable)
            except Exception:  # a caller gone mid-reading, say: never stop watching
                refuse, event = 0, None
        if event and event != last and written < limit:  # malloc asks again the same way: one event
            written, last = written + 1, event
            os.write(events_fd, (json.dumps(list(event)) + "\n").encode())
        try:
            fcntl.ioctl(listener, _NOTIF_SEND, _NOTIF_RESP.pack(ident, 0, -refuse, 0 if refuse else _NOTIF_CONTINUE))
        except OSError:  # the caller was killed meanwhile
            pass


def _judge_call(call, number, args, pid, cap, stack, going, sealed=None, writable=()):
    """``(errno to refuse with or 0, (kind, detail) or None)`` for a notified call of thread ``pid``. ``going``
    (updated) holds the calls let go on, by thread, until their thread is seen out of them."""
    if sealed and (call in ("mprotect", "munmap", "pkey_mprotect", "mremap") or
                   call == "mmap" and args[3] & (_MAP_FIXED | _MAP_FIXED_NOREPLACE)) and \
            args[0] < sealed[1] and args[0] + args[1] > sealed[0]:  # the seal refuses it (EPERM)
        return 0, ("sealed", f"{call} over the sealed stack")
    if call in ("mprotect", "munmap", "pkey_mprotect"):
        return 0, None
    if call == "mmap" and args[2] & mmap.PROT_EXEC and not args[3] & mmap.MAP_ANONYMOUS and \
            (path := _native_code(pid, args[4], writable)):
        return errno.EPERM, ("native-refused", path)
    if call == "mmap" and args[3] & _MAP_GROWSDOWN:
        return errno.EPERM, ("memory-refused", "a mapping that grows by itself (MAP_GROWSDOWN) refused: its growth "
                             "makes no call to watch")
    going.pop(pid, None)  # a thread makes one call at a time: its last one is over
    used, growth = _vm(pid), _growth(call, args, pid, exact=False)
    if used is None:
        return 0, None
    near = used + growth + sum(g for _, g in going.values()) + stack > cap  # else nothing more to read
    if near:
        growth = _growth(call, args, pid)
    if growth > 0:
        going[pid] = (number, growth)
    detail = _near_cap(pid, growth, cap, stack, going) if near else None
    return 0, detail and ("memory-refused", detail)


def _native_code(pid, fd, writable):
    """The file ``pid`` maps as code from descriptor ``fd``, if the notebook could have written it (in a
    ``writable`` folder, or a file only in memory): a library of its own, whose system calls no report sees;
    None for anything else (the system's and Python's libraries), and where the descriptor cannot be read."""
    if fd & 0xFFFFFFFF > 0x7FFFFFFF:  # an int: -1, an anonymous mapping
        return None
    try:
        path = os.readlink(f"/proc/{pid}/fd/{fd & 0xFFFFFFFF}")
    except OSError:
        return None
    if path.startswith(("/memfd:", "/dev/shm/")) or path.endswith(" (deleted)") or \
            any(_beneath(path, folder) for folder in writable):
        return path
    return None


def _near_cap(pid, growth, cap, stack, going):
    """The event for a call of ``pid`` growing its address space by ``growth`` near the cap: the OS kernel will
    refuse it, or may (other threads' calls let go on and maybe not yet mapped, or the caller's stack, may take
    the rest first); None if neither."""
    for thread, (number, _) in list(going.items()):
        if thread != pid and not _in_call(thread, number):
            del going[thread]
    used = _vm(pid)  # read after the others: a call that ended since is in it
    if used is None:
        return None
    others = sum(g for thread, (_, g) in going.items() if thread != pid and _shares_memory(pid, thread))
    room = stack - _stack_size(pid)
    mb = lambda n: f"{n / 2**20:,.0f} MB"  # noqa: E731
    asked = f"{mb(growth)} asked for with {mb(used)} of {mb(cap)} in use"
    if used + growth > cap:
        return asked
    if used + growth + others + room <= cap:
        return None
    more = [f"{mb(others)} asked for at once by other threads"] * bool(others) + \
        [f"{mb(room)} of stack still to grow"] * bool(room > 0)
    return f"{asked} and {' and '.join(more)}: it may have been refused"


def _in_call(thread, number):
    """Whether ``thread`` may still be in call ``number`` (``/proc/<tid>/syscall``: the number while it waits in a
    call, ``running`` while it runs, which may be in it; unreadable counts as in it), False once it is gone."""
    try:
        with open(f"/proc/{thread}/syscall") as f:
            state = f.read().split(None, 1)[0]
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        return True
    return state in ("running", str(number))


def _shares_memory(one, other):
    """Whether two threads share one address space (``kcmp(KCMP_VM)``: a process's threads, or a child made with
    ``CLONE_VM``, as ``vfork`` does); True where that cannot be told."""
    return _libc().syscall(_SYS_KCMP[os.uname().machine], one, other, _KCMP_VM, 0, 0) in (0, -1)  # 0: the same


def _stack_size(pid):
    """The size of the main thread's stack mapping of ``pid`` (``[stack]``); 0 if none is found."""
    return next((high - low for low, high, name in _maps(pid) if name == "[stack]"), 0)


def allocation_watcher(kernel):
    """The pid of the allocation watcher of the kernel process ``kernel``, None if it has none: the kernel's first
    child, if that has the watcher's name (a process the notebook starts comes later, whatever its name)."""
    children = []
    for pid, (ppid, _, _) in _process_table().items():
        if ppid == kernel:
            try:
                name, fields = _stat(pid)
            except OSError:
                continue
            children.append((int(fields[19]), pid, name))
    first = min(children, default=None)
    return first[1] if first and first[2] == WATCHER_NAME else None


def _growth(call, args, pid, exact=True):
    """How much a notified call of ``pid`` grows its address space by: mmap's length (less what it maps over);
    mremap's new length less the old one, or all of it where the old mapping stays (``MREMAP_DONTUNMAP``); brk's
    new end less the heap's end; the size of the shared memory segment shmat attaches (0 where it is not found).
    Not ``exact``: at most that, without reading the caller's mappings (the loader maps libraries over others)."""
    if call == "mmap":  # MAP_FIXED replaces what is mapped there already: that part is not new
        return args[1] - (_mapped(pid, args[0], args[0] + args[1]) if exact and args[3] & _MAP_FIXED else 0)
    if call == "mremap":
        return args[2] if args[3] & _MREMAP_DONTUNMAP else args[2] - args[1]
    if call == "brk":  # brk(0) asks where the heap ends
        end = None if not args[0] else _heap_end(pid) if exact else int(_stat(pid)[1][44])
        return 0 if end is None else args[0] - end
    return _segment_size(args[0]) or 0


def _maps(pid):
    """``[(start, end, name)]`` of the mappings of ``pid`` (``/proc/<pid>/maps``; the name ``[heap]``,
    ``[stack]``, a file's path or ""), ``[]`` if it is gone."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    spans = []
    for line in lines:
        fields = line.split(None, 5)
        low, high = (int(n, 16) for n in fields[0].split("-"))
        spans.append((low, high, fields[5].strip() if len(fields) > 5 else ""))
    return spans


def _mapped(pid, start, end):
    """How many bytes of ``[start, end)`` ``pid`` has mapped (0 if it is gone)."""
    return sum(max(0, min(end, high) - max(start, low)) for low, high, _ in _maps(pid))


def _heap_end(pid):
    """Where the heap of ``pid`` ends now (its ``[heap]`` mapping; where it starts while it is empty), None if
    ``pid`` is gone."""
    end = next((high for _, high, name in _maps(pid) if name == "[heap]"), None)
    try:
        return int(_stat(pid)[1][44]) if end is None else end
    except OSError:
        return None


def _segment_size(shmid):
    """The size of System V shared memory segment ``shmid`` (``/proc/sysvipc/shm``: key, shmid, perms, size, ...)."""
    try:
        with open("/proc/sysvipc/shm") as f:
            return next((int(line.split()[3]) for line in f if line.split()[1:2] == [str(shmid)]), None)
    except OSError:
        return None


def _vm(pid, field="VmSize"):
    """A process's address space now (``VmSize``) or its peak (``VmPeak``) in bytes, from ``/proc``; None if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) << 10 for line in f if line.startswith(field + ":"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def address_space(pid, field="VmSize"):
    """``(bytes, cap)`` of a process read from outside it in ``/proc``: its address space (:func:`_vm`) and its
    soft ``RLIMIT_AS`` (None where unlimited); ``(None, None)`` where unreadable."""
    try:
        with open(f"/proc/{pid}/limits") as f:
            cap = next(line.split()[3] for line in f if line.startswith("Max address space"))
    except (OSError, StopIteration, IndexError):
        return None, None
    size = _vm(pid, field)
    return (size, int(cap) if cap.isdigit() else None) if size is not None else (None, None)


# ---- the launcher -------------------------------------------------------------------------------------------------

def confine(policy):
    """Everything above, in order, for this process: the log and the events file opened, the limits, the
    allocation watcher, no capabilities, Landlock, the audit hook.
    Returns ``arm()``, to call just before student code: it adds the seccomp filter and starts
    the audit hook's reports."""
    log = os.open(policy["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    events = os.open(policy["events"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    if policy.get("home"):
        os.environ["HOME"] = policy["home"]  # not the grader's: nothing of it is readable in here
    # chibigrad reads this at import; 09_gpu's setup cell sets it so before importing chibigrad
    os.environ.setdefault("CHIBIGRAD_SIMULATE_CUDA", "auto")
    apply_limits(policy)
    if policy.get("memory_bytes") and policy.get("seccomp", True):
        watch_allocations(events, policy["memory_bytes"], policy["write"])
    if policy.get("drop_capabilities", True):
        drop_capabilities()
    if policy.get("landlock", True):
        apply_landlock(policy["read"], policy["write"], ["/dev/null"], policy.get("list", ()))
    arm_hook = install_audit_hook(events, policy["write"], secret_roots=policy.get("secret", ()),
                                  public_roots=policy.get("public", ()), grader_modules=policy.get("grader_modules"))

    def arm():
        # seccomp last, just before student code: IPython's own start-up copies files with shutil.copy (chmod)
        if policy.get("seccomp", True):
            arm_watcher()
            apply_seccomp()
        arm_hook()
    return arm


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    mode = argv.pop(0) if argv else ""
    policy = json.loads(os.environ.pop(POLICY_ENV))  # read once: student code never sees the sandbox's paths
    arm = confine(policy)
    # Started with `python -P`: the notebook's folder is not on sys.path while the grader's code
    # loads (a submission may carry its own `autograder/`); IPython puts '' back for the student.
    if mode == "kernel":
        from ipykernel.kernelapp import IPKernelApp
        app = IPKernelApp.instance()
        app.initialize(argv)
        arm()
        app.start()
    else:
        sys.exit(f"usage: python -m autograder.grading.sandbox kernel -f CONNECTION_FILE; got {mode!r}")


# ---- process trees (used by the worker, outside the sandbox) -----------------------------------------------------

def set_child_subreaper():
    """Make orphaned descendants (a daemon that double-forked away from the kernel) this
    process's children, so :func:`kill_descendants` still finds them. Linux only."""
    if sys.platform.startswith("linux"):
        _libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _stat(pid):
    """``(name, fields)`` of ``/proc/<pid>/stat``: the process's name and the fields after it, from the state on
    (the parent is ``fields[1]``, the start time ``fields[19]``, the heap's start ``fields[44]``)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        head, rest = f.read().rsplit(b")", 1)
    return head.split(b"(", 1)[1].decode(errors="replace"), rest.split()


def _process_table():
    """``{pid: (ppid, state, rss pages)}`` from /proc."""
    table = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = _stat(name)[1]
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


def memory_in_use(found):
    """The memory the processes ``found`` (``{pid: rss bytes}``) use together. Resident sizes count a page
    shared by forked copies once per copy (85 sleeping copies of a kernel: over 4 GB); the proportional
    sizes (``Pss``) share it out, so they add up to what is really used. Read only when the resident
    sizes, an upper bound, are over a cap, since the kernel walks every page table for them."""
    total = 0
    for pid, rss in found.items():
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                total += next(int(line.split()[1]) << 10 for line in f if line.startswith(b"Pss:"))
        except FileNotFoundError:  # gone, or a kernel before Linux 4.14 (no rollup): its resident size
            total += rss if os.path.exists(f"/proc/{pid}") else 0
        except (OSError, StopIteration):
            total += rss
    return total


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
