# Synchronizes before starting the clock but stops it as soon as fn() returns, before the work has run.
def time_per_call(fn, device, warmup=2, repeats=5):
    """Median seconds of one call fn() on device, after warmup calls; synchronised on CUDA."""
    cuda = torch.device(device).type == "cuda"
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
