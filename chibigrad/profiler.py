"""torch.profiler, as tutorials use it: ``profile``, ``record_function``, ``ProfilerActivity``.
chibigrad runs on one thread and times on the CPU clock, so ``activities`` changes nothing."""
import enum

from .autograd.profiler import profile as _profile, record_function

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"


class profile(_profile):  # noqa: N801 - PyTorch's name
    def __init__(self, activities=None, record_shapes=False, profile_memory=False, with_stack=False, **kwargs):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack)
