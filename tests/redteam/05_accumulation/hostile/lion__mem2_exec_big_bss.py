# attack: no mmap at all from the notebook: a forked child execs a tiny static ELF (built here, 132 bytes) whose one
#   PT_LOAD has a 3 GB bss: the OS kernel maps it inside execve (vm_brk_flags), which the cap refuses; the child
#   dies by a signal after the point of no return. Control: the same ELF with a 64 MB bss exits 7. Tried from a
#   memfd (execveat with AT_EMPTY_PATH), then from the temporary folder, then from the notebook folder; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import os, struct, tempfile


def _elf(memsz):
    base = 0x400000
    code = b"\xb8\x3c\x00\x00\x00\xbf\x07\x00\x00\x00\x0f\x05"  # exit(7)
    entry = base + 64 + 56
    size = 64 + 56 + len(code)
    ehdr = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, entry, 64, 0, 0, 64, 56, 1, 0, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 1, 7, 0, base, base, size, memsz, 0x1000)
    return ehdr + phdr + code


def _run(memsz):
    data = _elf(memsz)
    out = []
    places = []
    try:
        fd = os.memfd_create("rt", 0)
        os.write(fd, data)
        places.append(("memfd", fd))
    except OSError as err:
        out.append(f"memfd: {err}")
    for d in (tempfile.gettempdir(), os.getcwd()):
        try:
            p = os.path.join(d, f"rt_big_bss_{memsz}")
            with open(p, "wb") as f:
                f.write(data)
            os.chmod(p, 0o700)
            places.append((p, None))
        except OSError as err:
            out.append(f"{d}: {err}")
    for name, fd in places:
        pid = os.fork()
        if pid == 0:
            try:
                os.execve(fd if fd is not None else name, [name], {})
            except OSError as err:
                os._exit(100 + (err.errno or 0) % 100)
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st):
            out.append(f"{name}: killed by signal {os.WTERMSIG(st)}")
        else:
            code = os.WEXITSTATUS(st)
            out.append(f"{name}: " + ("ran (exit 7)" if code == 7 else f"execve failed errno {code - 100}" if code >= 100 else f"exit {code}"))
    return "; ".join(out)


print("RT-DAMAGE 64 MB bss (control):", _run(64 * 2**20))
print("RT-DAMAGE 3 GB bss:", _run(3 * 2**30))


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
