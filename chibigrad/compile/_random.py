"""While tracing, chibigrad's random generator reports every draw: random numbers inside a
step (dropout, ``torch.randn``) would be frozen into the graph, so they are a graph break."""
from .. import creation


class _Watched:
    """Chibigrad's numpy Generator, calling ``on_draw`` before each use."""

    def __init__(self, generator, on_draw):
        self._generator, self._on_draw = generator, on_draw

    def __getattr__(self, name):
        self._on_draw()
        return getattr(self._generator, name)


def swap(on_draw):
    """Watch the global generator; returns what ``restore`` needs."""
    real = creation._generator[0]
    creation._generator[0] = _Watched(real, on_draw)
    return real


def restore(real):
    """Put the generator back; False if the step replaced it (``manual_seed``): that one stays."""
    if not isinstance(creation._generator[0], _Watched):
        return False
    creation._generator[0] = real
    return True
