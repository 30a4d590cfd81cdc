# Times all repeats at once and divides: a mean, which one slow call pulls up.
def time_per_call(fn, device, warmup=2, repeats=5):
    """Median seconds of one call fn() on device, after warmup calls; synchronised on CUDA."""
    cuda = torch.device(device).type == "cuda"
    for _ in range(warmup):
        fn()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats
