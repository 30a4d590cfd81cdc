"""torch.cuda: the GPU through CuPy, or the simulated CUDA device.

With no GPU, ``CHIBIGRAD_SIMULATE_CUDA=1`` (or ``auto``) set before chibigrad is
imported makes a simulated device stand in (see ``chibigrad._device``);
``is_simulated()`` tells which one is in use (chibigrad's own extension, not
in PyTorch). chibigrad drives one GPU: ``cuda:0``.
"""
from . import _device, creation, memory


def is_available():
    """True if tensors can be put on a CUDA device (a real or a simulated one)."""
    return _device.cuda_backend() is not None


def is_simulated():
    """True if "cuda" is chibigrad's simulated device (not in PyTorch)."""
    backend = _device.cuda_backend()
    return backend is not None and backend.simulated


def device_count():
    backend = _device.cuda_backend()
    return 0 if backend is None else backend.device_count


def _backend():
    backend = _device.cuda_backend()
    if backend is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    return backend


def current_device():
    _backend()
    return 0


def get_device_name(device=None):
    return _backend().name


def synchronize(device=None):
    """Wait until the GPU has finished all queued work: GPU calls return before
    the work is done, so a timing must synchronize before it reads the clock."""
    _backend().synchronize()


def memory_allocated(device=None):
    """Bytes of tensor data on the GPU now."""
    return memory._counters()[1]["allocated"]


def max_memory_allocated(device=None):
    """Largest ``memory_allocated()`` since the last ``reset_peak_memory_stats()``."""
    return memory._counters()[1]["peak_allocated"]


def reset_peak_memory_stats(device=None):
    stats = memory._counters()[1]
    stats["peak_allocated"] = stats["allocated"]


def manual_seed(seed):
    """Seed the random numbers of CUDA tensors. chibigrad draws them for every device
    from one generator (on the host), so this is ``chibigrad.manual_seed``."""
    creation.manual_seed(seed)


manual_seed_all = manual_seed
