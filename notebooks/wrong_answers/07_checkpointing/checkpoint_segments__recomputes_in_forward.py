# Runs each early segment twice in forward, once without a graph and once with one: the layers run twice,
# as in checkpointing, but every activation is kept (nothing is checkpointed) and backward recomputes nothing.
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    cuts = [0] + list(boundaries) + [len(layers)]
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        if k < len(cuts) - 2:
            with torch.no_grad():
                h = x
                for layer in layers[a:b]:
                    h = layer(h)
        for layer in layers[a:b]:
            x = layer(x)
    return x
