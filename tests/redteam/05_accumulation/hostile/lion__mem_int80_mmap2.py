# attack: evade the allocation watcher through the 32-bit system call table: a few bytes of machine code
#   (in an executable page made with the mmap module) do `int 0x80` with eax = 192 (i386 mmap2) from this
#   64-bit process; a filter that tells the listener of x86_64 mmap/mremap only (or drops other ABIs) never
#   sees it; a 300 MB control is granted, then 1.5 GB is refused by the cap (ENOMEM); no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import ctypes, mmap

_code = bytes.fromhex(
    "53" "55" "4154" "4155" "4156" "4157"  # push rbx, rbp, r12-r15
    "89f9"                                # mov ecx, edi        (length)
    "b8c0000000"                          # mov eax, 192        (mmap2, i386)
    "31db"                                # xor ebx, ebx        (addr 0)
    "ba03000000"                          # mov edx, 3          (PROT_READ|PROT_WRITE)
    "be22000000"                          # mov esi, 0x22       (MAP_PRIVATE|MAP_ANONYMOUS)
    "bfffffffff"                          # mov edi, -1         (fd)
    "31ed"                                # xor ebp, ebp        (pgoff 0)
    "cd80"                                # int 0x80
    "89c0"                                # mov eax, eax        (zero-extend)
    "415f" "415e" "415d" "415c" "5d" "5b"  # pop r15-r12, rbp, rbx
    "c3")                                 # ret
_page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
_page.write(_code)
_addr = ctypes.addressof(ctypes.c_char.from_buffer(_page))
mmap2_i386 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32)(_addr)
_munmap = ctypes.CDLL(None).munmap
_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def _try(n):
    r = mmap2_i386(n)
    if r >= 0xFFFFF000:
        return f"errno {0x100000000 - r}"
    _munmap(r, n)
    return "granted"


print("RT-DAMAGE i386 mmap2 300 MB (control):", _try(300 * 2**20))
print("RT-DAMAGE i386 mmap2 1.5 GB:", _try(1536 * 2**20))


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
