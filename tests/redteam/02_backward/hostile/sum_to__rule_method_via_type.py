# attack: sum_to_size reached through type(grad) and a name built by join
# expect: integrity.csv row (dynamic access)


def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    name = "_".join(["sum", "to", "size"])
    return getattr(type(grad), name)(grad, tuple(shape))
