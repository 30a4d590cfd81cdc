# attack: damage: the solution loops forever and swallows KeyboardInterrupt (the interrupt a grader
#   sends first), also when it is called by the tests
# expect: 0 points for per_loss_grads; the kernel is stopped after the interrupt (cell or notebook
#   timeout), the batch continues and later students are graded
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    while True:
        try:
            while True:
                pass
        except BaseException:
            continue


per_loss_grads([], [])
