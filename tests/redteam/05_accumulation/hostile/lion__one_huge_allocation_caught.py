# attack: damage: ask for one allocation far past the memory cap, catch the MemoryError and go on as if
#   nothing happened (the kernel's peak address space stays low, so the cap's refusal leaves no trace in it);
#   no answer
# expect: 0 points for lion; a "stopped at a limit" row in integrity.csv all the same (the allocation watcher,
#   outside the kernel, saw the refusal)
import numpy as np

try:
    np.empty(2**40, dtype=np.uint8)
    print("allocated a terabyte")
except MemoryError:
    print("refused, and nobody will know")
