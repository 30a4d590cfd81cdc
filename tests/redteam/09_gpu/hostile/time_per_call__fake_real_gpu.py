# attack: make a CPU-only grader believe it has a real GPU: torch.cuda.is_simulated/is_available/
#   get_device_name patched, every "simulated" flag on the cuda backend objects set to False, the
#   environment variable changed; the timing itself is right
# expect: 0 points for time_per_call on a machine without a GPU (not graded / excused, never points from
#   a pretended GPU); batch continues
import sys

torch.cuda.is_simulated = lambda *a, **k: False
torch.cuda.is_available = lambda *a, **k: True
torch.cuda.get_device_name = lambda *a, **k: "NVIDIA H100 80GB HBM3"
os.environ["CHIBIGRAD_SIMULATE_CUDA"] = "0"
for _name, _mod in list(sys.modules.items()):
    if _name.startswith("chibigrad") and ("cuda" in _name or "device" in _name or "backend" in _name):
        for _attr, _obj in list(vars(_mod).items()):
            for _flag in ("simulated", "is_simulated", "_simulated", "SIMULATED"):
                try:
                    if hasattr(_obj, _flag) and not callable(getattr(_obj, _flag)):
                        setattr(_obj, _flag, False)
                except Exception:
                    pass
            if "simulat" in _attr.lower() and not callable(_obj):
                try:
                    setattr(_mod, _attr, False)
                except Exception:
                    pass
            elif "simulat" in _attr.lower() and callable(_obj):
                setattr(_mod, _attr, lambda *a, **k: False)


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
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
