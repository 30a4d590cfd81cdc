# Times the warm-up calls too: the slow first calls count in the median.
def time_per_call(fn, device, warmup=2, repeats=5):
    """Median seconds of one call fn() on device, after warmup calls; synchronised on CUDA."""
    cuda = torch.device(device).type == "cuda"
    times = []
    for _ in range(warmup + repeats):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
